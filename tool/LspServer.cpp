#include "LspServer.h"
#include "TextEncoding.h"
#include "PrivateDirectory.h"

#include "CheckRunner.h"
#include "CompileFlags.h"
#include "JsonLimits.h"
#include "Reporting.h"
#include "SafeFileSystem.h"
#include "SyncCheck.h"
#include "UseClassifier.h"

#include "clang-tidy/ClangTidy.h"
#include "clang-tidy/ClangTidyDiagnosticConsumer.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"
#include <cerrno>
#include <cstring>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>

using namespace clang;
using namespace clang::tidy;
namespace json = llvm::json;
using llvm::StringRef;

#ifndef TORCH_SYNCFREE_VERSION
#define TORCH_SYNCFREE_VERSION "0.0.0"
#endif

namespace torch_syncfree {


namespace {

//===----------------------------------------------------------------------===//
// Framing. Hand-written: LLVM has no LSP transport outside clangd's sources.
//===----------------------------------------------------------------------===//

/// Reads "Content-Length: N\r\n\r\n<N bytes>" frames from fd 0. A frame whose
/// header or length is wrong is answered with an error and skipped: reading
/// resumes at the next "Content-Length:" header, so one bad frame never
/// desynchronises the stream for good.
class Transport {
public:
  /// False at end of input. Otherwise one of: Message (a frame whose body is
  /// JSON, parsed once here), FrameError (a bad frame, skipped) or ParseError
  /// (a well-framed body that is not JSON).
  bool read(std::optional<json::Value> &Message, std::string &FrameError,
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

  /// Writes one message; false when the client has gone (EPIPE).
  bool write(const json::Value &Message) {
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

private:
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
  /// The next "Content-Length:" at or after From (frames are concatenated
  /// with no separator, so a header may follow a body's last byte).
  size_t findHeader(size_t From) const {
    size_t At = StringRef(Buffer).find_insensitive("content-length:", From);
    return At == StringRef::npos ? std::string::npos : At;
  }
  /// A header in [From, To) that a complete JSON body ends right before: the
  /// body's first JSON value ends, blanks follow, then "Content-Length:".
  /// Linear overall: the end of the value is found by one scan that resumes
  /// where the last call stopped (trying each header with a JSON parse was
  /// cubic: a 330 KB message of headers blocked the server for 54 s).
  size_t splitPoint(size_t From, size_t To) {
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
  void consume(size_t N) {
    Buffer.erase(0, N);
    Scan = BodyScan{};
  }
  void resync(size_t From) {
    size_t Next = findHeader(From);
    consume(Next == std::string::npos ? Buffer.size() : Next);
  }
  /// Where splitPoint's scan of the current body stands (reset when the body
  /// start moves: every erase of the buffer moves it to another frame).
  struct BodyScan {
    size_t From = std::string::npos, Pos = 0;
    int Depth = 0;
    bool InString = false, Escaped = false;
    size_t End = std::string::npos;
  } Scan;
  bool fill() {
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

  std::string Buffer;
  std::mutex WriteMutex;
  bool Closed = false;
};

//===----------------------------------------------------------------------===//
// Positions: LSP lines and columns in UTF-16 code units (the default) or UTF-8
// bytes when the client offers it (LSP 3.17 positionEncodings).
//===----------------------------------------------------------------------===//

struct PositionCodec {
  bool Utf8 = false;
  ColumnUnit unit() const { return Utf8 ? ColumnUnit::Utf8Bytes : ColumnUnit::Utf16CodeUnits; }

  json::Object position(StringRef Text, size_t Offset) const {
    LinePosition P = positionOf(Text, Offset, unit());
    return json::Object{{"line", static_cast<int64_t>(P.Line)},
                        {"character", static_cast<int64_t>(P.Column)}};
  }

  /// Byte offset of an LSP position; positions past a line's end clamp to it.
  std::optional<size_t> offset(StringRef Text, const json::Object *Position) const {
    if (!Position)
      return std::nullopt;
    auto Line = Position->getInteger("line");
    auto Character = Position->getInteger("character");
    if (!Line || !Character || *Line < 0 || *Character < 0)
      return std::nullopt;
    return offsetOf(Text, static_cast<uint64_t>(*Line), static_cast<uint64_t>(*Character), unit());
  }
};

//===----------------------------------------------------------------------===//
// Documents and analyses
//===----------------------------------------------------------------------===//

struct Finding {
  FindingRecord Error;
  json::Object Diagnostic;
};

struct Document {
  std::string Path;
  std::string Text;
  uint64_t Generation = 0;      ///< bumped by every edit
  std::string AnalysedText;     ///< the text the findings were computed on
  std::vector<Finding> Findings;
  bool EverAnalysed = false;
  std::chrono::steady_clock::time_point Due; ///< when the next analysis may start
  bool Pending = false;
  /// The parsed #include block, reused across edits; shared with a running analysis.
  std::shared_ptr<PreambleSlot> Preamble;
};



class Server {
public:
  explicit Server(LspOptions Options) : Opts(std::move(Options)) {}

  int run() {
    Worker = std::thread([this] { workLoop(); });
    std::optional<json::Value> Parsed;
    std::string FrameError, ParseError;
    while (IO.read(Parsed, FrameError, ParseError)) {
      if (!FrameError.empty()) {
        llvm::errs() << "torch-syncfree --lsp: error: " << FrameError << "\n";
        replyError(nullptr, -32700, FrameError);
        continue;
      }
      if (!Parsed) {
        llvm::errs() << "torch-syncfree --lsp: error: malformed message: " << ParseError << "\n";
        replyError(nullptr, -32700, "parse error: " + ParseError);
        continue;
      }
      const json::Object *Request = Parsed->getAsObject();
      std::optional<StringRef> Method = Request ? Request->getString("method") : std::nullopt;
      const json::Value *Id = Request ? Request->get("id") : nullptr;
      if (!Method) {
        if (Request && Id && (Request->get("result") || Request->get("error")))
          continue; // a response to one of our requests (progress tokens)
        replyError(nullptr, -32600, "invalid request: no method");
        continue;
      }
      const json::Object *Params = Request->getObject("params");
      if (*Method == "exit")
        finish(ShutDown ? 0 : 1);
      handle(*Method, Id, Params);
    }
    finish(ShutDown ? 0 : 1);
    return 0;
  }

private:
  [[noreturn]] void finish(int Code) {
    // An analysis may be running; the process ends without waiting for it
    // (nothing it holds needs flushing: every reply has been written). The
    // preambles' files go with their directory (open files included).
    if (!PreambleDir.empty())
      removeTreeNoFollow(PreambleDir);
    std::_Exit(Code);
  }

  void handle(StringRef Method, const json::Value *Id, const json::Object *Params) {
    if (Method == "initialize")
      return reply(Id, initialize(Params));
    if (Method == "initialized" || Method == "$/cancelRequest" || Method == "$/setTrace")
      return; // requests are answered at once, so there is nothing to cancel
    if (Method == "shutdown") {
      ShutDown = true;
      return reply(Id, nullptr);
    }
    if (Method == "textDocument/didOpen")
      return didOpen(Params);
    if (Method == "textDocument/didChange")
      return didChange(Params);
    if (Method == "textDocument/didSave")
      return didSave(Params);
    if (Method == "textDocument/didClose")
      return didClose(Params);
    if (Method == "textDocument/codeAction")
      return reply(Id, codeActions(Params));
    if (Id)
      replyError(Id, -32601, "method not found: " + Method.str());
  }

  json::Value initialize(const json::Object *Params) {
    const json::Object *Capabilities = Params ? Params->getObject("capabilities") : nullptr;
    if (Capabilities) {
      if (const json::Object *General = Capabilities->getObject("general"))
        if (const json::Array *Encodings = General->getArray("positionEncodings"))
          for (const json::Value &E : *Encodings)
            if (E.getAsString() == StringRef("utf-8"))
              Codec.Utf8 = true;
      if (const json::Object *Window = Capabilities->getObject("window"))
        ClientProgress = Window->getBoolean("workDoneProgress").value_or(false);
    }
    json::Object Sync{{"openClose", true},
                      {"change", 2}, // incremental
                      {"save", json::Object{{"includeText", false}}}};
    return json::Object{
        {"capabilities",
         json::Object{{"positionEncoding", Codec.Utf8 ? "utf-8" : "utf-16"},
                      {"textDocumentSync", std::move(Sync)},
                      {"codeActionProvider",
                       json::Object{{"codeActionKinds", json::Array{"quickfix"}}}}}},
        {"serverInfo", json::Object{{"name", "torch-syncfree"}, {"version", TORCH_SYNCFREE_VERSION}}}};
  }

  static std::string uriOf(const json::Object *Params) {
    if (const json::Object *Doc = Params ? Params->getObject("textDocument") : nullptr)
      if (auto Uri = Doc->getString("uri"))
        return Uri->str();
    return "";
  }

  void didOpen(const json::Object *Params) {
    std::string Uri = uriOf(Params);
    std::optional<std::string> Path = pathFromUri(Uri);
    if (!Path) {
      llvm::errs() << "torch-syncfree --lsp: error: not a file URI: " << Uri << "\n";
      return;
    }
    const json::Object *TextDocument = Params->getObject("textDocument");
    std::lock_guard<std::mutex> Lock(Mutex);
    Document &Doc = Documents[Uri];
    Doc.Path = *Path;
    Doc.Text = TextDocument->getString("text").value_or("").str();
    ++Doc.Generation;
    schedule(Doc, std::chrono::milliseconds(0));
  }

  void didChange(const json::Object *Params) {
    std::string Uri = uriOf(Params);
    const json::Array *Changes = Params ? Params->getArray("contentChanges") : nullptr;
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = Documents.find(Uri);
    if (It == Documents.end() || !Changes)
      return;
    Document &Doc = It->second;
    for (const json::Value &ChangeValue : *Changes) {
      const json::Object *Change = ChangeValue.getAsObject();
      std::optional<StringRef> Text = Change ? Change->getString("text") : std::nullopt;
      if (!Text)
        continue;
      const json::Object *Range = Change->getObject("range");
      if (!Range) {
        Doc.Text = Text->str();
        continue;
      }
      std::optional<size_t> Start = Codec.offset(Doc.Text, Range->getObject("start"));
      std::optional<size_t> End = Codec.offset(Doc.Text, Range->getObject("end"));
      if (!Start || !End || *End < *Start) {
        llvm::errs() << "torch-syncfree --lsp: error: invalid range in didChange\n";
        continue;
      }
      Doc.Text.replace(*Start, *End - *Start, Text->str());
    }
    ++Doc.Generation;
    schedule(Doc, std::chrono::milliseconds(Opts.DebounceMs));
  }

  void didSave(const json::Object *Params) {
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = Documents.find(uriOf(Params));
    if (It == Documents.end())
      return;
    if (auto Text = Params->getString("text"))
      It->second.Text = Text->str(), ++It->second.Generation;
    // A save re-reads the flags and the headers on disk: always re-analyse.
    ++It->second.Generation;
    schedule(It->second, std::chrono::milliseconds(0));
  }

  void didClose(const json::Object *Params) {
    std::string Uri = uriOf(Params);
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      Documents.erase(Uri);
    }
    publish(Uri, json::Array{});
  }

  /// Under Mutex.
  void schedule(Document &Doc, std::chrono::milliseconds Delay) {
    Doc.Due = std::chrono::steady_clock::now() + Delay;
    Doc.Pending = true;
    WorkReady.notify_one();
  }

  void workLoop() {
    std::unique_lock<std::mutex> Lock(Mutex);
    while (true) {
      // The pending document that is due first.
      std::string Next;
      auto Earliest = std::chrono::steady_clock::time_point::max();
      for (auto &[Uri, Doc] : Documents)
        if (Doc.Pending && Doc.Due < Earliest)
          Earliest = Doc.Due, Next = Uri;
      if (Next.empty()) {
        WorkReady.wait(Lock);
        continue;
      }
      if (Earliest > std::chrono::steady_clock::now()) {
        WorkReady.wait_until(Lock, Earliest);
        continue; // an edit may have moved it
      }
      Document &Doc = Documents[Next];
      Doc.Pending = false;
      std::string Path = Doc.Path, Text = Doc.Text;
      uint64_t Generation = Doc.Generation;
      bool First = !Doc.EverAnalysed;
      if (!Doc.Preamble)
        Doc.Preamble = std::make_shared<PreambleSlot>(preambleDirectory());
      std::shared_ptr<PreambleSlot> Preamble = Doc.Preamble;
      Lock.unlock();
      std::string Token;
      if (First)
        Token = beginProgress("Analysing " + llvm::sys::path::filename(Path).str());
      auto Started = std::chrono::steady_clock::now();
      unsigned BuildsBefore = Preamble->builds();
      Analysis Result = analyse(Path, Text, *Preamble);
      llvm::errs() << "torch-syncfree --lsp: analysed " << Path << " in "
                     << std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - Started)
                            .count()
                     << " ms (preamble "
                     << (Preamble->builds() != BuildsBefore ? "built" : "reused") << ")\n";
      if (!Token.empty())
        endProgress(Token);
      Lock.lock();
      auto It = Documents.find(Next);
      // Stale: edited or closed while it ran. Its results are dropped; the
      // newer text is already scheduled.
      if (It == Documents.end() || It->second.Generation != Generation)
        continue;
      It->second.EverAnalysed = true;
      It->second.AnalysedText = Text;
      It->second.Findings = std::move(Result.Findings);
      json::Array Diagnostics = std::move(Result.Extra);
      for (const Finding &F : It->second.Findings)
        Diagnostics.push_back(json::Object(F.Diagnostic));
      Lock.unlock();
      publish(Next, std::move(Diagnostics));
      Lock.lock();
    }
  }

  std::string beginProgress(const std::string &Title) {
    if (!ClientProgress)
      return "";
    std::string Token = "torch-syncfree-" + std::to_string(++ProgressCounter);
    IO.write(json::Object{{"jsonrpc", "2.0"},
                          {"id", Token},
                          {"method", "window/workDoneProgress/create"},
                          {"params", json::Object{{"token", Token}}}});
    IO.write(json::Object{
        {"jsonrpc", "2.0"},
        {"method", "$/progress"},
        {"params", json::Object{{"token", Token},
                                {"value", json::Object{{"kind", "begin"},
                                                       {"title", "torch-syncfree"},
                                                       {"message", Title}}}}}});
    return Token;
  }
  void endProgress(const std::string &Token) {
    IO.write(json::Object{
        {"jsonrpc", "2.0"},
        {"method", "$/progress"},
        {"params", json::Object{{"token", Token}, {"value", json::Object{{"kind", "end"}}}}}});
  }

  struct Analysis {
    std::vector<Finding> Findings;
    json::Array Extra; ///< "cannot analyse" and "no flags" diagnostics
  };

  json::Object problem(StringRef Text, size_t Offset, int Severity, StringRef Code,
                       const std::string &Message) const {
    return json::Object{{"range", tokenRange(Text, Offset)},
                        {"severity", Severity},
                        {"code", Code.str()},
                        {"source", "torch-syncfree"},
                        {"message", Message}};
  }

  Analysis analyse(const std::string &Path, const std::string &Text, PreambleSlot &Preamble) {
    Analysis Result;
    std::string Error;
    std::unique_ptr<SanitizedDatabase> Database;
    std::string Dir = Opts.CompileCommandsDir.empty() ? findCompileCommandsDir(Path)
                                                      : Opts.CompileCommandsDir;
    if (!Dir.empty())
      Database = loadCompileCommands(Dir, Error);
    if (!Database) {
      std::string Why = Dir.empty() ? "no compile_commands.json found beside this file, in a "
                                      "parent directory or in a build*/ directory"
                                    : Error;
      Result.Extra.push_back(problem(Text, 0, 2, "torch-syncfree-no-flags",
                                     Why + "; analysed with -std=c++17 only (pass "
                                           "--compile-commands-dir to the server)"));
      Database = std::make_unique<SanitizedDatabase>(
          std::make_unique<tooling::FixedCompilationDatabase>(
              llvm::sys::path::parent_path(Path), std::vector<std::string>{"-std=c++17"}));
    }
    std::string CommandError = Database->commandError(Path);
    if (!CommandError.empty()) {
      Result.Extra.push_back(problem(Text, 0, 1, "torch-syncfree-cannot-analyse",
                                     "torch-syncfree cannot analyse this file: " + CommandError));
      return Result;
    }
    // The editor's text, not the file on disk; only regular files are read.
    auto Memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
    Memory->addFile(Path, 0, llvm::MemoryBuffer::getMemBufferCopy(Text, Path));
    auto Overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(
        makeSafeFileSystem(llvm::vfs::createPhysicalFileSystem()));
    Overlay->pushOverlay(Memory);
    ClangTidyContext Context(Opts.Options());
    RunOptions Run;
    Run.Preamble = &Preamble;
    Run.ConfirmErrorsInMainFile = false; // a typo mid-edit is the user's: no second parse
    std::vector<FindingRecord> Errors = runChecks(Context, *Database, {Path}, Overlay, Run);
    bool ReportedCompileError = false;
    SmallString<256> Self(Path);
    llvm::sys::path::remove_dots(Self, true);
    for (FindingRecord &E : Errors) {
      makePathsAbsolute(E);
      bool InThisFile = E.Message.FilePath == Self;
      if (isCompileError(E)) {
        // One diagnostic at the first error: the findings of a file that does
        // not compile are incomplete, and the user must know why.
        if (ReportedCompileError)
          continue;
        ReportedCompileError = true;
        std::string Message = "torch-syncfree cannot analyse this file: " +
                              (InThisFile ? "" : E.Message.FilePath + ": ") +
                              quotableCompileError(E.Message.Message);
        Result.Extra.push_back(
            problem(Text, InThisFile ? E.Message.FileOffset : 0, 1, E.DiagnosticName, Message));
        continue;
      }
      if (!StringRef(E.DiagnosticName).starts_with("torch-sync-") || !InThisFile)
        continue;
      json::Object Diagnostic = diagnostic(E, Text);
      Result.Findings.push_back(Finding{std::move(E), std::move(Diagnostic)});
    }
    if (Opts.Profile)
      addMeasuredCost(Result.Findings, Self, Text);
    return Result;
  }

  /// --profile: each finding's measured syncs and host wait, joined as the
  /// batch run joins them (ProfileJoin.h), at the lines of the editor's text.
  void addMeasuredCost(std::vector<Finding> &Findings, StringRef File, StringRef Text) const {
    std::vector<ReportedFinding> Joined;
    for (const Finding &F : Findings) {
      ReportedFinding R;
      R.Check = F.Error.DiagnosticName;
      R.File = File.str();
      R.Offset = F.Error.Message.FileOffset;
      StringRef Before = Text.take_front(R.Offset);
      R.Line = 1 + Before.count('\n');
      R.Column = 1 + R.Offset - (Before.rfind('\n') + 1); // the join's tie-break (bytes, 1-based)
      Joined.push_back(std::move(R));
    }
    std::vector<ReportedFinding> ByCost = Joined;
    joinProfile(*Opts.Profile, ByCost, {File.str()}); // reorders ByCost by cost
    for (size_t I = 0; I < Findings.size(); ++I) {
      auto Same = llvm::find_if(ByCost, [&](const ReportedFinding &R) {
        return R.Offset == Joined[I].Offset && R.Check == Joined[I].Check;
      });
      if (Same == ByCost.end())
        continue;
      json::Object &D = Findings[I].Diagnostic;
      json::Object *Data = D.getObject("data");
      if (Data) {
        (*Data)["measuredCount"] = static_cast<int64_t>(Same->MeasuredCount);
        (*Data)["measuredWaitMs"] = Same->MeasuredWaitMs;
        (*Data)["executed"] = Same->MeasuredCount > 0;
      }
      std::string Message = D.getString("message").value_or("").str();
      if (Same->MeasuredCount) {
        Message += " [measured: " + std::to_string(Same->MeasuredCount) + " syncs";
        if (Same->MeasuredPerStep > 0)
          Message += llvm::formatv(" ({0:F2}/step)", Same->MeasuredPerStep).str();
        Message += llvm::formatv(", {0:F3} ms waited", Same->MeasuredWaitMs).str();
        const SyncProfile &P = *Opts.Profile;
        if (P.Steps && P.StepMs > 0)
          Message += llvm::formatv(", {0:F1} % of a step",
                                   100.0 * Same->MeasuredWaitMs / P.Steps / P.StepMs)
                         .str();
        Message += "]";
      } else {
        Message += " [not executed in the profiled run]";
      }
      D["message"] = std::move(Message);
    }
  }

  /// The range of the token at Offset (an identifier, or one character).
  json::Object tokenRange(StringRef Text, size_t Offset) const {
    size_t End = Offset;
    while (End < Text.size() && (llvm::isAlnum(Text[End]) || Text[End] == '_'))
      ++End;
    if (End == Offset)
      End = std::min(Offset + utf8SequenceLength(Text, std::min(Offset, Text.size() - 1)), Text.size());
    return json::Object{{"start", Codec.position(Text, Offset)}, {"end", Codec.position(Text, End)}};
  }

  json::Object diagnostic(const FindingRecord &E, StringRef Text) const {
    json::Object D{{"range", tokenRange(Text, E.Message.FileOffset)},
                   {"severity", E.DiagLevel == ClangTidyError::Error ? 1 : 2},
                   {"code", E.DiagnosticName},
                   {"source", "torch-syncfree"},
                   {"message", E.Message.Message}};
    if (std::string Url = checkDocsUrl(E.DiagnosticName); !Url.empty())
      D["codeDescription"] = json::Object{{"href", Url}};
    json::Object Data{{"dependency", E.Facts ? dependencyName(E.Facts->Class) : "unknown"},
                      {"fixable", !E.Message.Fix.empty()}};
    if (E.Facts && E.Facts->LoopLine)
      Data["loopLine"] = E.Facts->LoopLine;
    D["data"] = std::move(Data);
    json::Array Related;
    for (const tooling::DiagnosticMessage &Note : E.Notes) {
      if (Note.FilePath.empty())
        continue;
      json::Object Range;
      if (Note.FilePath == E.Message.FilePath) {
        Range = tokenRange(Text, Note.FileOffset);
      } else {
        auto Buffer = llvm::MemoryBuffer::getFile(Note.FilePath);
        if (!Buffer)
          continue;
        Range = tokenRange((*Buffer)->getBuffer(), Note.FileOffset);
      }
      Related.push_back(json::Object{
          {"location", json::Object{{"uri", uriFromPath(Note.FilePath)}, {"range", std::move(Range)}}},
          {"message", Note.Message}});
    }
    if (!Related.empty())
      D["relatedInformation"] = std::move(Related);
    return D;
  }

  json::Value codeActions(const json::Object *Params) {
    json::Array Actions;
    std::string Uri = uriOf(Params);
    const json::Object *Range = Params ? Params->getObject("range") : nullptr;
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = Documents.find(Uri);
    if (It == Documents.end() || !Range)
      return Actions;
    const Document &Doc = It->second;
    // Edits are offsets into the analysed text: none while the buffer differs.
    if (Doc.Text != Doc.AnalysedText)
      return Actions;
    std::optional<size_t> First = Codec.offset(Doc.Text, Range->getObject("start"));
    std::optional<size_t> Last = Codec.offset(Doc.Text, Range->getObject("end"));
    if (!First || !Last)
      return Actions;
    auto LineStart = [&](size_t Offset) {
      size_t At = StringRef(Doc.Text).take_front(Offset).rfind('\n');
      return At == StringRef::npos ? 0 : At + 1;
    };
    auto LineEnd = [&](size_t Offset) { return std::min(Doc.Text.find('\n', Offset), Doc.Text.size()); };
    size_t From = LineStart(*First), To = LineEnd(*Last);
    for (const Finding &F : Doc.Findings) {
      size_t At = F.Error.Message.FileOffset;
      if (At < From || At > To)
        continue;
      json::Array Edits;
      for (const auto &Entry : F.Error.Message.Fix)
        for (const tooling::Replacement &R : Entry.second)
          Edits.push_back(json::Object{
              {"range", json::Object{{"start", Codec.position(Doc.Text, R.getOffset())},
                                     {"end", Codec.position(Doc.Text, R.getOffset() + R.getLength())}}},
              {"newText", R.getReplacementText().str()}});
      if (Edits.empty())
        continue;
      Actions.push_back(json::Object{
          {"title", "torch-syncfree: apply the fix for " + F.Error.DiagnosticName},
          {"kind", "quickfix"},
          {"isPreferred", true},
          {"diagnostics", json::Array{json::Object(F.Diagnostic)}},
          {"edit", json::Object{{"changes", json::Object{{Uri, std::move(Edits)}}}}}});
    }
    return Actions;
  }

  void publish(const std::string &Uri, json::Array Diagnostics) {
    IO.write(json::Object{
        {"jsonrpc", "2.0"},
        {"method", "textDocument/publishDiagnostics"},
        {"params", json::Object{{"uri", Uri}, {"diagnostics", std::move(Diagnostics)}}}});
  }

  void reply(const json::Value *Id, json::Value Result) {
    if (!Id)
      return;
    IO.write(json::Object{{"jsonrpc", "2.0"}, {"id", *Id}, {"result", std::move(Result)}});
  }
  void replyError(const json::Value *Id, int Code, const std::string &Message) {
    if (Id == nullptr && Code != -32700 && Code != -32600)
      return;
    IO.write(json::Object{{"jsonrpc", "2.0"},
                          {"id", Id ? *Id : json::Value(nullptr)},
                          {"error", json::Object{{"code", Code}, {"message", Message}}}});
  }

  LspOptions Opts;
  Transport IO;
  PositionCodec Codec;
  bool ClientProgress = false;
  unsigned ProgressCounter = 0;
  bool ShutDown = false;
  std::string PreambleDir; ///< this server's preamble files; removed at exit

  /// Under Mutex. Created on first use; the directories of servers that died
  /// without removing theirs (killed) are removed first.
  const std::string &preambleDirectory() {
    if (!PreambleDir.empty())
      return PreambleDir;
    // A private per-user base (PrivateDirectory.h): never $TMPDIR itself,
    // where another user's directory or link could stand in for ours.
    std::string Why;
    std::string Base = privateBaseDirectory(Why);
    if (Base.empty()) {
      llvm::errs() << "torch-syncfree --lsp: preambles off: " << Why << "\n";
      return PreambleDir;
    }
    removeStaleEntries(Base, "preamble-");
    SmallString<128> Model(Base);
    llvm::sys::path::append(Model, "preamble-" + std::to_string(::getpid())); // + "-XXXXXX"
    SmallString<128> Dir;
    if (!llvm::sys::fs::createUniqueDirectory(Model, Dir))
      PreambleDir = std::string(Dir);
    return PreambleDir;
  }
  std::mutex Mutex;
  std::condition_variable WorkReady;
  std::map<std::string, Document> Documents;
  std::thread Worker;
};

} // namespace

int runLspServer(LspOptions Options) {
  // A client that closes its end must not kill the server with SIGPIPE in the
  // middle of a write; the write fails and the server ends at end of input.
  std::signal(SIGPIPE, SIG_IGN);
  return Server(std::move(Options)).run();
}

} // namespace torch_syncfree
