#include "LspServer.h"

#include "clang-tidy/ClangTidy.h"
#include "clang-tidy/ClangTidyDiagnosticConsumer.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"
#include <cstdio>
#include <iostream>
#include <map>
#include <string>

using namespace clang;
using namespace clang::tidy;
namespace json = llvm::json;

namespace torch_syncfree {
namespace {

/// One JSON-RPC message from stdin ("Content-Length: N\r\n\r\n<N bytes>").
/// Returns false at end of input.
bool readMessage(std::string &Body, std::string &Error) {
  size_t Length = 0;
  bool HaveLength = false;
  std::string Line;
  while (true) {
    if (!std::getline(std::cin, Line))
      return false;
    if (!Line.empty() && Line.back() == '\r')
      Line.pop_back();
    if (Line.empty())
      break;
    llvm::StringRef Header(Line);
    if (Header.consume_front("Content-Length:")) {
      HaveLength = !Header.trim().getAsInteger(10, Length);
    }
  }
  if (!HaveLength || Length > (64u << 20)) {
    Error = "missing or invalid Content-Length header";
    Body.clear();
    return true;
  }
  Body.assign(Length, '\0');
  std::cin.read(&Body[0], Length);
  if (static_cast<size_t>(std::cin.gcount()) != Length)
    return false;
  Error.clear();
  return true;
}

void writeMessage(const json::Value &Message) {
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  OS << Message;
  std::cout << "Content-Length: " << Text.size() << "\r\n\r\n" << Text;
  std::cout.flush();
}

std::string pathFromUri(llvm::StringRef Uri) {
  Uri.consume_front("file://");
  return Uri.str();
}

/// LSP positions are 0-based lines and UTF-16 columns; sources here are treated as
/// one code unit per byte (ASCII), which is what C++ sources almost always are.
json::Object position(llvm::StringRef Text, unsigned Offset) {
  Offset = std::min<unsigned>(Offset, Text.size());
  llvm::StringRef Before = Text.take_front(Offset);
  unsigned Line = Before.count('\n');
  size_t LastNewline = Before.rfind('\n');
  unsigned Column = LastNewline == llvm::StringRef::npos ? Offset : Offset - LastNewline - 1;
  return json::Object{{"line", Line}, {"character", Column}};
}

struct Document {
  std::string Text;
  std::vector<ClangTidyError> Findings;
};

class Server {
public:
  explicit Server(std::function<std::unique_ptr<ClangTidyOptionsProvider>()> Options)
      : Options(std::move(Options)) {}

  int run() {
    std::string Body, Error;
    while (readMessage(Body, Error)) {
      if (!Error.empty()) {
        llvm::errs() << "torch-syncfree --lsp: error: " << Error << "\n";
        reply(nullptr, errorObject(-32700, Error));
        continue;
      }
      llvm::Expected<json::Value> Parsed = json::parse(Body);
      if (!Parsed) {
        std::string Message = llvm::toString(Parsed.takeError());
        llvm::errs() << "torch-syncfree --lsp: error: malformed message: " << Message << "\n";
        reply(nullptr, errorObject(-32700, "parse error: " + Message));
        continue;
      }
      const json::Object *Request = Parsed->getAsObject();
      std::optional<llvm::StringRef> Method = Request ? Request->getString("method") : std::nullopt;
      const json::Value *Id = Request ? Request->get("id") : nullptr;
      if (!Method) {
        reply(Id, errorObject(-32600, "invalid request: no method"));
        continue;
      }
      const json::Object *Params = Request->getObject("params");
      if (*Method == "initialize")
        reply(Id, json::Object{{"capabilities",
                                json::Object{{"textDocumentSync", 1}, {"codeActionProvider", true}}},
                               {"serverInfo", json::Object{{"name", "torch-syncfree"}}}});
      else if (*Method == "shutdown")
        reply(Id, nullptr), ShutDown = true;
      else if (*Method == "exit")
        return ShutDown ? 0 : 1;
      else if (*Method == "textDocument/didOpen" || *Method == "textDocument/didChange" ||
               *Method == "textDocument/didSave")
        documentChanged(*Method, Params);
      else if (*Method == "textDocument/didClose")
        Documents.erase(uriOf(Params));
      else if (*Method == "textDocument/codeAction")
        reply(Id, codeActions(Params));
      else if (Id)
        reply(Id, errorObject(-32601, "method not found: " + Method->str()));
    }
    return ShutDown ? 0 : 1;
  }

private:
  static json::Object errorObject(int Code, const std::string &Message) {
    return json::Object{{"code", Code}, {"message", Message}};
  }

  void reply(const json::Value *Id, json::Value Result) {
    if (!Id)
      return;
    json::Object Message{{"jsonrpc", "2.0"}, {"id", *Id}};
    const json::Object *Object = Result.getAsObject();
    if (Object && Object->get("code") && Object->get("message") && !Object->get("capabilities"))
      Message["error"] = std::move(Result);
    else
      Message["result"] = std::move(Result);
    writeMessage(std::move(Message));
  }
  void reply(std::nullptr_t, json::Value Result) {
    json::Value Null(nullptr);
    json::Object Message{{"jsonrpc", "2.0"}, {"id", nullptr}, {"error", std::move(Result)}};
    writeMessage(std::move(Message));
  }

  static std::string uriOf(const json::Object *Params) {
    if (!Params)
      return "";
    if (const json::Object *Doc = Params->getObject("textDocument"))
      if (auto Uri = Doc->getString("uri"))
        return Uri->str();
    return "";
  }

  void documentChanged(llvm::StringRef Method, const json::Object *Params) {
    std::string Uri = uriOf(Params);
    if (Uri.empty())
      return;
    Document &Doc = Documents[Uri];
    const json::Object *TextDocument = Params->getObject("textDocument");
    if (Method == "textDocument/didOpen") {
      if (auto Text = TextDocument->getString("text"))
        Doc.Text = Text->str();
    } else if (Method == "textDocument/didChange") {
      if (const json::Array *Changes = Params->getArray("contentChanges"))
        if (!Changes->empty())
          if (const json::Object *Change = Changes->back().getAsObject())
            if (auto Text = Change->getString("text"))
              Doc.Text = Text->str();
      return; // analysed on save, as most linters do
    }
    analyse(Uri, Doc);
    publish(Uri, Doc);
  }

  void analyse(const std::string &Uri, Document &Doc) {
    std::string Path = pathFromUri(Uri);
    // Compile flags from the nearest compile_commands.json, else plain C++17.
    std::string Error;
    std::unique_ptr<tooling::CompilationDatabase> Database =
        tooling::CompilationDatabase::autoDetectFromSource(Path, Error);
    if (!Database || Database->getCompileCommands(Path).empty())
      Database = std::make_unique<tooling::FixedCompilationDatabase>(
          llvm::sys::path::parent_path(Path), std::vector<std::string>{"-std=c++17"});
    // The editor's text, not the file on disk.
    auto Memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
    Memory->addFile(Path, 0, llvm::MemoryBuffer::getMemBufferCopy(Doc.Text, Path));
    auto Overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(
        llvm::vfs::createPhysicalFileSystem());
    Overlay->pushOverlay(Memory);
    ClangTidyContext Context(Options());
    std::vector<ClangTidyError> Errors =
        runClangTidy(Context, *Database, {Path}, Overlay, false, false, "", true);
    Doc.Findings.clear();
    for (ClangTidyError &E : Errors)
      if (llvm::StringRef(E.DiagnosticName).starts_with("torch-sync-") &&
          llvm::sys::path::filename(E.Message.FilePath) == llvm::sys::path::filename(Path))
        Doc.Findings.push_back(std::move(E));
  }

  void publish(const std::string &Uri, const Document &Doc) {
    json::Array Diagnostics;
    for (const ClangTidyError &E : Doc.Findings) {
      unsigned Offset = E.Message.FileOffset;
      // The range covers the token at the finding (an identifier).
      unsigned End = Offset;
      while (End < Doc.Text.size() && (isalnum(static_cast<unsigned char>(Doc.Text[End])) || Doc.Text[End] == '_'))
        ++End;
      if (End == Offset)
        End = Offset + 1;
      Diagnostics.push_back(json::Object{
          {"range", json::Object{{"start", position(Doc.Text, Offset)}, {"end", position(Doc.Text, End)}}},
          {"severity", E.DiagLevel == ClangTidyError::Error ? 1 : 2},
          {"code", E.DiagnosticName},
          {"source", "torch-syncfree"},
          {"message", E.Message.Message}});
    }
    writeMessage(json::Object{
        {"jsonrpc", "2.0"},
        {"method", "textDocument/publishDiagnostics"},
        {"params", json::Object{{"uri", Uri}, {"diagnostics", std::move(Diagnostics)}}}});
  }

  json::Value codeActions(const json::Object *Params) {
    json::Array Actions;
    std::string Uri = uriOf(Params);
    auto It = Documents.find(Uri);
    const json::Object *Range = Params ? Params->getObject("range") : nullptr;
    if (It == Documents.end() || !Range)
      return Actions;
    const Document &Doc = It->second;
    auto LineOf = [&](const json::Object *Position) {
      return Position ? Position->getInteger("line").value_or(-1) : -1;
    };
    int64_t First = LineOf(Range->getObject("start")), Last = LineOf(Range->getObject("end"));
    for (const ClangTidyError &E : Doc.Findings) {
      json::Array Edits;
      for (const auto &Entry : E.Message.Fix)
        for (const tooling::Replacement &R : Entry.second)
          Edits.push_back(json::Object{
              {"range", json::Object{{"start", position(Doc.Text, R.getOffset())},
                                     {"end", position(Doc.Text, R.getOffset() + R.getLength())}}},
              {"newText", R.getReplacementText().str()}});
      int64_t Line = position(Doc.Text, E.Message.FileOffset).getInteger("line").value_or(-2);
      if (Edits.empty() || Line < First || Line > Last)
        continue;
      Actions.push_back(json::Object{
          {"title", "torch-syncfree: apply the fix for " + E.DiagnosticName},
          {"kind", "quickfix"},
          {"edit", json::Object{{"changes", json::Object{{Uri, std::move(Edits)}}}}}});
    }
    return Actions;
  }

  std::function<std::unique_ptr<ClangTidyOptionsProvider>()> Options;
  std::map<std::string, Document> Documents;
  bool ShutDown = false;
};

} // namespace

int runLspServer(std::function<std::unique_ptr<ClangTidyOptionsProvider>()> Options) {
  std::ios::sync_with_stdio(false);
  return Server(std::move(Options)).run();
}

} // namespace torch_syncfree
