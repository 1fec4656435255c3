#include "lsp/Protocol.h"
#include "JsonLimits.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"
#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace json = llvm::json;
using llvm::StringRef;

namespace torch_syncfree {
namespace lsp {

//===----------------------------------------------------------------------===//
// Framing
//===----------------------------------------------------------------------===//

/// The JSON value of Text (nesting-limited), or nullopt with Why set.
static std::optional<json::Value> parseJson(StringRef Text, std::string &Why) {
  Why = checkJsonNesting(Text);
  if (!Why.empty())
    return std::nullopt;
  llvm::Expected<json::Value> V = json::parse(Text);
  if (V)
    return std::move(*V);
  Why = llvm::toString(V.takeError());
  return std::nullopt;
}
static bool isJson(StringRef Text) {
  std::string Why;
  return parseJson(Text, Why).has_value();
}
bool Transport::read(std::optional<json::Value> &Message, std::string &FrameError,
                   std::string &ParseError) {
  Message.reset();
  FrameError.clear();
  ParseError.clear();
  std::string &Error = FrameError;
  while (true) {
    size_t HeaderEnd = Buffer.find("\r\n\r\n");
    size_t Separator = 4;
    if (HeaderEnd == std::string::npos) {
      HeaderEnd = Buffer.find("\n\n");
      Separator = 2;
    }
    if (HeaderEnd == std::string::npos) {
      if (Buffer.size() > (1u << 16)) { // no header in 64 KiB: junk
        resync(1);
        Error = "no message header found; skipped input";
        return true;
      }
      if (!fill())
        return false;
      continue;
    }
    // The last Content-Length of the header block; anything before it (the
    // tail of a frame whose length was too small) is skipped.
    std::optional<size_t> Length;
    StringRef Header = StringRef(Buffer).take_front(HeaderEnd);
    size_t At = Header.rfind_insensitive("content-length:");
    if (At != StringRef::npos) {
      size_t N = 0;
      StringRef Value = Header.substr(At + strlen("content-length:")).split('\n').first.trim();
      if (!Value.getAsInteger(10, N) && N <= (64u << 20))
        Length = N;
    }
    size_t BodyStart = HeaderEnd + Separator;
    if (!Length) {
      resync(BodyStart);
      Error = "missing or invalid Content-Length header";
      return true;
    }
    if (Buffer.size() >= BodyStart + *Length) {
      Message = parseJson(StringRef(Buffer).substr(BodyStart, *Length), ParseError);
      if (Message) {
        consume(BodyStart + *Length);
        return true;
      }
      // A wrong length: too large (the body runs into the next frame) or
      // too small (the body is cut). Resume at the next frame either way.
      size_t Cut = splitPoint(BodyStart, BodyStart + *Length);
      if (Cut != std::string::npos) {
        consume(Cut);
        ParseError.clear();
        Error = "Content-Length larger than the message";
        return true;
      }
      consume(BodyStart + *Length);
      // Invalid JSON: answered as a parse error. What a too-small length
      // left behind is skipped with the next header (see above).
      return true;
    }
    // Waiting for more bytes. If what came is already a whole message
    // followed by another frame, the declared length is wrong: waiting
    // would deadlock with a client that waits for the answer.
    size_t Cut = splitPoint(BodyStart, Buffer.size());
    if (Cut != std::string::npos) {
      consume(Cut);
      Error = "Content-Length larger than the message";
      return true;
    }
    if (!fill())
      return false;
  }
}


bool Transport::write(const json::Value &Message) {
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  OS << Message;
  std::string Frame = "Content-Length: " + std::to_string(Text.size()) + "\r\n\r\n" + Text;
  std::lock_guard<std::mutex> Lock(WriteMutex);
  if (Closed)
    return false;
  const char *Data = Frame.data();
  size_t Left = Frame.size();
  while (Left) {
    ssize_t N = ::write(1, Data, Left);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      Closed = true;
      return false;
    }
    Data += N, Left -= N;
  }
  return true;
}


/// The next "Content-Length:" at or after From (frames are concatenated
/// with no separator, so a header may follow a body's last byte).
size_t Transport::findHeader(size_t From) const {
  size_t At = StringRef(Buffer).find_insensitive("content-length:", From);
  return At == StringRef::npos ? std::string::npos : At;
}
/// A header in [From, To) that a complete JSON body ends right before: the
/// body's first JSON value ends, blanks follow, then "Content-Length:".
/// Linear overall: the end of the value is found by one scan that resumes
/// where the last call stopped (trying each header with a JSON parse was
/// cubic: a 330 KB message of headers blocked the server for 54 s).
size_t Transport::splitPoint(size_t From, size_t To) {
  if (Scan.From != From)
    Scan = BodyScan{From, From};
  for (; Scan.Pos < To && Scan.End == std::string::npos; ++Scan.Pos) {
    char C = Buffer[Scan.Pos];
    if (Scan.InString) {
      if (Scan.Escaped)
        Scan.Escaped = false;
      else if (C == '\\')
        Scan.Escaped = true;
      else if (C == '"')
        Scan.InString = false;
    } else if (C == '"') {
      Scan.InString = true;
    } else if (C == '{' || C == '[') {
      ++Scan.Depth;
    } else if (C == '}' || C == ']') {
      if (--Scan.Depth == 0)
        Scan.End = Scan.Pos + 1;
      else if (Scan.Depth < 0)
        Scan.Pos = To; // not a JSON object or array: no split
    } else if (Scan.Depth == 0 && !isspace(static_cast<unsigned char>(C))) {
      Scan.Depth = -1, Scan.Pos = To; // a body that does not start with { or [
    }
  }
  if (Scan.End == std::string::npos)
    return std::string::npos;
  size_t At = Scan.End;
  while (At < To && isspace(static_cast<unsigned char>(Buffer[At])))
    ++At;
  if (At >= To || !StringRef(Buffer).substr(At).starts_with_insensitive("content-length:") ||
      !isJson(StringRef(Buffer).slice(From, At)))
    return std::string::npos;
  return At;
}
/// Drops the first N bytes; the body scan restarts with the next body.
void Transport::consume(size_t N) {
  Buffer.erase(0, N);
  Scan = BodyScan{};
}
void Transport::resync(size_t From) {
  size_t Next = findHeader(From);
  consume(Next == std::string::npos ? Buffer.size() : Next);
}
bool Transport::fill() {
  char Chunk[65536];
  while (true) {
    ssize_t N = ::read(0, Chunk, sizeof(Chunk));
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return false;
    Buffer.append(Chunk, N);
    return true;
  }
}


//===----------------------------------------------------------------------===//
// Positions
//===----------------------------------------------------------------------===//

bool fromJSON(const json::Value &V, Position &P, json::Path Path) {
  json::ObjectMapper O(V, Path);
  if (!O || !O.map("line", P.Line) || !O.map("character", P.Character))
    return false;
  if (P.Line < 0 || P.Character < 0) {
    Path.report("negative position");
    return false;
  }
  return true;
}
bool fromJSON(const json::Value &V, Range &R, json::Path Path) {
  json::ObjectMapper O(V, Path);
  return O && O.map("start", R.Start) && O.map("end", R.End);
}
json::Value toJSON(const Position &P) {
  return json::Object{{"line", P.Line}, {"character", P.Character}};
}
json::Value toJSON(const Range &R) { return json::Object{{"start", R.Start}, {"end", R.End}}; }

Position PositionCodec::position(StringRef Text, size_t Offset) const {
  LinePosition P = positionOf(Text, Offset, unit());
  return Position{static_cast<int64_t>(P.Line), static_cast<int64_t>(P.Column)};
}
std::optional<size_t> PositionCodec::offset(StringRef Text, const Position &P) const {
  if (P.Line < 0 || P.Character < 0)
    return std::nullopt;
  return offsetOf(Text, static_cast<uint64_t>(P.Line), static_cast<uint64_t>(P.Character), unit());
}
Range PositionCodec::tokenRange(StringRef Text, size_t Offset) const {
  size_t End = Offset;
  while (End < Text.size() && (llvm::isAlnum(Text[End]) || Text[End] == '_'))
    ++End;
  if (End == Offset && !Text.empty())
    End = std::min(Offset + utf8SequenceLength(Text, std::min(Offset, Text.size() - 1)), Text.size());
  return Range{position(Text, Offset), position(Text, End)};
}

//===----------------------------------------------------------------------===//
// Messages from the client
//===----------------------------------------------------------------------===//

bool fromJSON(const json::Value &V, InitializeParams &P, json::Path Path) {
  const json::Object *Params = V.getAsObject();
  const json::Object *Capabilities = Params ? Params->getObject("capabilities") : nullptr;
  if (!Capabilities)
    return true; // every capability is optional
  if (const json::Object *General = Capabilities->getObject("general"))
    if (const json::Array *Encodings = General->getArray("positionEncodings"))
      for (const json::Value &E : *Encodings)
        if (E.getAsString() == StringRef("utf-8"))
          P.Utf8Positions = true;
  if (const json::Object *Window = Capabilities->getObject("window"))
    P.WorkDoneProgress = Window->getBoolean("workDoneProgress").value_or(false);
  return true;
}

static bool mapUri(const json::Value &V, std::string &Uri, json::Path Path) {
  json::ObjectMapper O(V, Path);
  return O && O.map("uri", Uri);
}

bool fromJSON(const json::Value &V, DidOpenParams &P, json::Path Path) {
  json::ObjectMapper O(V, Path);
  const json::Object *Doc = V.getAsObject() ? V.getAsObject()->getObject("textDocument") : nullptr;
  if (!O || !Doc) {
    Path.report("textDocument missing");
    return false;
  }
  json::Path Sub = Path.field("textDocument");
  if (!mapUri(*V.getAsObject()->get("textDocument"), P.TextDocument.Uri, Sub))
    return false;
  P.TextDocument.Version = Doc->getInteger("version").value_or(0);
  P.TextDocument.Text = Doc->getString("text").value_or("").str();
  return true;
}

bool fromJSON(const json::Value &V, ContentChange &C, json::Path Path) {
  json::ObjectMapper O(V, Path);
  return O && O.map("text", C.Text) && O.mapOptional("range", C.ChangedRange);
}

bool fromJSON(const json::Value &V, DidChangeParams &P, json::Path Path) {
  json::ObjectMapper O(V, Path);
  const json::Object *Doc = V.getAsObject() ? V.getAsObject()->getObject("textDocument") : nullptr;
  if (!O || !Doc || !mapUri(*V.getAsObject()->get("textDocument"), P.Uri, Path.field("textDocument")))
    return false;
  P.Version = Doc->getInteger("version");
  return O.map("contentChanges", P.Changes);
}

bool fromJSON(const json::Value &V, DidSaveParams &P, json::Path Path) {
  json::ObjectMapper O(V, Path);
  const json::Object *Root = V.getAsObject();
  if (!O || !Root || !Root->get("textDocument") ||
      !mapUri(*Root->get("textDocument"), P.Uri, Path.field("textDocument")))
    return false;
  return O.mapOptional("text", P.Text);
}

bool fromJSON(const json::Value &V, DocumentParams &P, json::Path Path) {
  const json::Object *Root = V.getAsObject();
  if (!Root || !Root->get("textDocument")) {
    Path.report("textDocument missing");
    return false;
  }
  return mapUri(*Root->get("textDocument"), P.Uri, Path.field("textDocument"));
}

bool fromJSON(const json::Value &V, CodeActionParams &P, json::Path Path) {
  DocumentParams Doc;
  json::ObjectMapper O(V, Path);
  if (!O || !fromJSON(V, Doc, Path))
    return false;
  P.Uri = Doc.Uri;
  return O.map("range", P.Selection);
}

bool applyChange(std::string &Text, const ContentChange &Change, const PositionCodec &Codec) {
  if (!Change.ChangedRange) {
    Text = Change.Text;
    return true;
  }
  std::optional<size_t> Start = Codec.offset(Text, Change.ChangedRange->Start);
  std::optional<size_t> End = Codec.offset(Text, Change.ChangedRange->End);
  if (!Start || !End || *End < *Start)
    return false;
  Text.replace(*Start, *End - *Start, Change.Text);
  return true;
}

//===----------------------------------------------------------------------===//
// Messages to the client
//===----------------------------------------------------------------------===//

json::Value toJSON(const Diagnostic &D) {
  json::Object Out{{"range", D.Where},
                   {"severity", D.Severity},
                   {"code", D.Code},
                   {"source", "torch-syncfree"},
                   {"message", D.Message}};
  if (!D.CodeHref.empty())
    Out["codeDescription"] = json::Object{{"href", D.CodeHref}};
  if (!D.Data.empty())
    Out["data"] = json::Object(D.Data);
  if (!D.Related.empty()) {
    json::Array Related;
    for (const RelatedInformation &R : D.Related)
      Related.push_back(json::Object{
          {"location", json::Object{{"uri", R.Uri}, {"range", R.Where}}}, {"message", R.Message}});
    Out["relatedInformation"] = std::move(Related);
  }
  return Out;
}

json::Value toJSON(const CodeAction &A) {
  json::Array Edits;
  for (const TextEdit &E : A.Edits)
    Edits.push_back(json::Object{{"range", E.Where}, {"newText", E.NewText}});
  return json::Object{{"title", A.Title},
                      {"kind", "quickfix"},
                      {"isPreferred", true},
                      {"diagnostics", json::Array{toJSON(A.Fixes)}},
                      {"edit", json::Object{{"changes", json::Object{{A.Uri, std::move(Edits)}}}}}};
}

json::Value publishDiagnostics(const std::string &Uri, const std::vector<Diagnostic> &Diagnostics,
                               std::optional<int64_t> Version) {
  json::Array List;
  for (const Diagnostic &D : Diagnostics)
    List.push_back(toJSON(D));
  json::Object Params{{"uri", Uri}, {"diagnostics", std::move(List)}};
  if (Version)
    Params["version"] = *Version;
  return notification("textDocument/publishDiagnostics", std::move(Params));
}

json::Value response(const json::Value &Id, json::Value Result) {
  return json::Object{{"jsonrpc", "2.0"}, {"id", Id}, {"result", std::move(Result)}};
}

json::Value errorResponse(const json::Value *Id, int Code, const std::string &Message) {
  return json::Object{{"jsonrpc", "2.0"},
                      {"id", Id ? *Id : json::Value(nullptr)},
                      {"error", json::Object{{"code", Code}, {"message", Message}}}};
}

json::Value notification(StringRef Method, json::Value Params) {
  return json::Object{{"jsonrpc", "2.0"}, {"method", Method}, {"params", std::move(Params)}};
}

json::Value request(const json::Value &Id, StringRef Method, json::Value Params) {
  return json::Object{{"jsonrpc", "2.0"}, {"id", Id}, {"method", Method}, {"params", std::move(Params)}};
}

} // namespace lsp
} // namespace torch_syncfree
