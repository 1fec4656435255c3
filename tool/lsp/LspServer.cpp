// The language server (docs/editors.md), in clangd's layers:
//   lsp/Protocol   JSON-RPC framing and the typed messages
//   lsp/Scheduler  one worker per document, debounce, cancellation, staleness
//   lsp/Analysis   one analysis: compile databases, preambles, the checks
// This file binds them: it keeps each open document's text, turns analysis
// results into diagnostics (with --profile's measured cost) and code actions,
// and answers the client.
#include "lsp/LspServer.h"
#include "PrivateDirectory.h"
#include "Reporting.h"
#include "lsp/Analysis.h"
#include "lsp/Protocol.h"
#include "lsp/Scheduler.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include <csignal>
#include <map>
#include <mutex>
#include <string>
#include <unistd.h>

namespace json = llvm::json;
using llvm::StringRef;

#ifndef TORCH_SYNCFREE_VERSION
#define TORCH_SYNCFREE_VERSION "0.0.0"
#endif

namespace torch_syncfree {

namespace {

using namespace lsp;

/// One open document: its text, and what its last current analysis found.
struct Document {
  std::string Path;
  std::string Text;
  std::optional<int64_t> Version;
  uint64_t Generation = 0;
  std::string AnalysedText; ///< the text Findings were computed on
  std::vector<FindingRecord> Findings;
  std::vector<lsp::Diagnostic> Published; ///< Findings' diagnostics, in order
  std::string ProgressToken;
};

class Server {
public:
  explicit Server(LspOptions Options)
      : Opts(std::move(Options)), Databases(Opts.CompileCommandsDir),
        Preambles(preambleDirectory(), Opts.PchBuilder),
        Work(
            [this](const DocumentVersion &V, const std::shared_ptr<DocumentState> &State,
                   const std::atomic<bool> &Cancelled, std::function<void()> Reanalyse) {
              AnalysisInputs In{
                  V.Path, V.Text, Opts.Options, &Cancelled, std::move(Reanalyse), Opts.JoinSummaries};
              return analyseDocument(In, State, Databases, Preambles);
            },
            Scheduler::Callbacks{[this](const DocumentVersion &V) { started(V); },
                                 [this](const DocumentVersion &V, AnalysisResult R,
                                        std::chrono::milliseconds Took) { finished(V, std::move(R), Took); }},
            // One core for the preamble builder, the rest for analyses.
            std::max(2u, llvm::hardware_concurrency().compute_thread_count()) - 1) {}

  int run() {
    std::optional<json::Value> Parsed;
    std::string FrameError, ParseError;
    while (IO.read(Parsed, FrameError, ParseError)) {
      if (!FrameError.empty()) {
        llvm::errs() << "torch-syncfree --lsp: error: " << FrameError << "\n";
        IO.write(errorResponse(nullptr, ErrorCode::ParseError, FrameError));
        continue;
      }
      if (!Parsed) {
        llvm::errs() << "torch-syncfree --lsp: error: malformed message: " << ParseError << "\n";
        IO.write(errorResponse(nullptr, ErrorCode::ParseError, "parse error: " + ParseError));
        continue;
      }
      const json::Object *Message = Parsed->getAsObject();
      std::optional<StringRef> Method = Message ? Message->getString("method") : std::nullopt;
      const json::Value *Id = Message ? Message->get("id") : nullptr;
      if (!Method) {
        if (Message && Id && (Message->get("result") || Message->get("error")))
          continue; // a response to one of our requests (progress tokens)
        IO.write(errorResponse(nullptr, ErrorCode::InvalidRequest, "invalid request: no method"));
        continue;
      }
      if (*Method == "exit")
        finish(ShutDown ? 0 : 1);
      static const json::Value NoParams = json::Object{};
      const json::Value *Params = Message->get("params");
      handle(*Method, Id, Params ? *Params : NoParams);
    }
    finish(ShutDown ? 0 : 1);
    return 0;
  }

private:
  [[noreturn]] void finish(int Code) {
    // Analyses may be running; the process ends without waiting for them
    // (every reply has been written). The preambles go with their directory.
    if (!PreambleDir.empty())
      removeTreeNoFollow(PreambleDir);
    std::_Exit(Code);
  }

  /// Params of a known method that do not parse: an InvalidParams reply to a
  /// request, a log line for a notification.
  template <typename T> bool parse(const json::Value &Params, T &Out, StringRef Method, const json::Value *Id) {
    json::Path::Root Root(Method);
    if (fromJSON(Params, Out, Root))
      return true;
    std::string Why;
    llvm::raw_string_ostream(Why) << llvm::toString(Root.getError());
    llvm::errs() << "torch-syncfree --lsp: error: invalid " << Method << ": " << Why << "\n";
    if (Id)
      IO.write(errorResponse(Id, ErrorCode::InvalidParams, "invalid params: " + Why));
    return false;
  }

  void handle(StringRef Method, const json::Value *Id, const json::Value &Params) {
    if (Method == "initialize") {
      InitializeParams P;
      parse(Params, P, Method, nullptr); // capabilities are optional
      Codec.Utf8 = P.Utf8Positions;
      ClientProgress = P.WorkDoneProgress;
      return reply(Id, initializeResult());
    }
    if (Method == "initialized" || Method == "$/cancelRequest" || Method == "$/setTrace")
      return; // requests are answered at once: nothing to cancel
    if (Method == "shutdown") {
      ShutDown = true;
      return reply(Id, nullptr);
    }
    if (Method == "textDocument/didOpen") {
      DidOpenParams P;
      if (parse(Params, P, Method, Id))
        didOpen(P);
      return;
    }
    if (Method == "textDocument/didChange") {
      DidChangeParams P;
      if (parse(Params, P, Method, Id))
        didChange(P);
      return;
    }
    if (Method == "textDocument/didSave") {
      DidSaveParams P;
      if (parse(Params, P, Method, Id))
        didSave(P);
      return;
    }
    if (Method == "textDocument/didClose") {
      DocumentParams P;
      if (parse(Params, P, Method, Id))
        didClose(P);
      return;
    }
    if (Method == "textDocument/codeAction") {
      CodeActionParams P;
      if (parse(Params, P, Method, Id))
        reply(Id, codeActions(P));
      return;
    }
    if (Id)
      IO.write(errorResponse(Id, ErrorCode::MethodNotFound, "method not found: " + Method.str()));
  }

  json::Value initializeResult() const {
    json::Object Sync{{"openClose", true},
                      {"change", 2}, // incremental
                      {"save", json::Object{{"includeText", false}}}};
    return json::Object{
        {"capabilities",
         json::Object{{"positionEncoding", Codec.Utf8 ? "utf-8" : "utf-16"},
                      {"textDocumentSync", std::move(Sync)},
                      {"codeActionProvider", json::Object{{"codeActionKinds", json::Array{"quickfix"}}}}}},
        {"serverInfo", json::Object{{"name", "torch-syncfree"}, {"version", TORCH_SYNCFREE_VERSION}}}};
  }

  //===--------------------------------------------------------------------===//
  // Documents
  //===--------------------------------------------------------------------===//

  /// Under Mutex: hands the document's current text to the scheduler.
  void schedule(const std::string &Uri, Document &Doc, std::chrono::milliseconds Delay) {
    ++Doc.Generation;
    Work.update(DocumentVersion{Uri, Doc.Path, Doc.Text, Doc.Version, Doc.Generation}, Delay);
  }

  void didOpen(const DidOpenParams &P) {
    std::optional<std::string> Path = pathFromUri(P.TextDocument.Uri);
    if (!Path) {
      llvm::errs() << "torch-syncfree --lsp: error: not a file URI: " << P.TextDocument.Uri << "\n";
      return;
    }
    std::lock_guard<std::mutex> Lock(Mutex);
    Document &Doc = Documents[P.TextDocument.Uri];
    Doc.Path = *Path;
    Doc.Text = P.TextDocument.Text;
    Doc.Version = P.TextDocument.Version;
    schedule(P.TextDocument.Uri, Doc, std::chrono::milliseconds(0));
  }

  void didChange(const DidChangeParams &P) {
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = Documents.find(P.Uri);
    if (It == Documents.end())
      return;
    Document &Doc = It->second;
    for (const ContentChange &Change : P.Changes)
      if (!applyChange(Doc.Text, Change, Codec))
        llvm::errs() << "torch-syncfree --lsp: error: invalid range in didChange\n";
    if (P.Version)
      Doc.Version = P.Version;
    schedule(P.Uri, Doc, std::chrono::milliseconds(Opts.DebounceMs));
  }

  void didSave(const DidSaveParams &P) {
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = Documents.find(P.Uri);
    if (It == Documents.end())
      return;
    if (P.Text)
      It->second.Text = *P.Text;
    // A save re-reads the flags and the headers on disk: always re-analyse.
    schedule(P.Uri, It->second, std::chrono::milliseconds(0));
  }

  void didClose(const DocumentParams &P) {
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      auto It = Documents.find(P.Uri);
      if (It != Documents.end() && !It->second.ProgressToken.empty())
        endProgress(It->second.ProgressToken);
      Documents.erase(P.Uri);
    }
    Work.remove(P.Uri);
    IO.write(publishDiagnostics(P.Uri, {}, std::nullopt));
  }

  //===--------------------------------------------------------------------===//
  // Results
  //===--------------------------------------------------------------------===//

  void started(const DocumentVersion &V) {
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = Documents.find(V.Uri);
    if (It == Documents.end() || !It->second.ProgressToken.empty() || !ClientProgress)
      return;
    It->second.ProgressToken = beginProgress("Analysing " + llvm::sys::path::filename(V.Path).str());
  }

  void finished(const DocumentVersion &V, AnalysisResult R, std::chrono::milliseconds Took) {
    // One write per line (stderr is unbuffered): clients log it by chunk.
    llvm::errs() << ("torch-syncfree --lsp: analysed " + V.Path + " in " + std::to_string(Took.count()) +
                     " ms (" + (R.How.empty() ? std::string("no preamble") : R.How) + ")" +
                     (R.Discard ? ": not shown, the patched parse does not compile; the new "
                                  "preamble will answer"
                                : "") +
                     "\n");
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = Documents.find(V.Uri);
    if (It == Documents.end() || It->second.Generation != V.Generation)
      return; // closed or edited since: the newer version is scheduled
    Document &Doc = It->second;
    if (!R.Provisional && !Doc.ProgressToken.empty()) {
      endProgress(Doc.ProgressToken);
      Doc.ProgressToken.clear();
    }
    if (R.Discard)
      return;
    std::vector<lsp::Diagnostic> Diagnostics;
    for (const Problem &P : R.Problems)
      Diagnostics.push_back(problem(V.Text, P));
    Doc.Published.clear();
    for (const FindingRecord &F : R.Findings)
      Doc.Published.push_back(diagnostic(F, V.Text));
    if (Opts.Profile)
      addMeasuredCost(R.Findings, Doc.Published, V.Path, V.Text);
    Doc.AnalysedText = V.Text;
    Doc.Findings = std::move(R.Findings);
    Diagnostics.insert(Diagnostics.end(), Doc.Published.begin(), Doc.Published.end());
    IO.write(publishDiagnostics(V.Uri, Diagnostics, V.Version));
  }

  lsp::Diagnostic problem(StringRef Text, const Problem &P) const {
    lsp::Diagnostic D;
    D.Where = Codec.tokenRange(Text, P.Offset);
    D.Severity = P.Severity;
    D.Code = P.Code;
    D.Message = P.Message;
    return D;
  }

  lsp::Diagnostic diagnostic(const FindingRecord &E, StringRef Text) const {
    lsp::Diagnostic D;
    D.Where = Codec.tokenRange(Text, E.Message.FileOffset);
    D.Severity = E.DiagLevel == clang::tidy::ClangTidyError::Error ? 1 : 2;
    D.Code = E.DiagnosticName;
    D.Message = E.Message.Message;
    D.CodeHref = checkDocsUrl(E.DiagnosticName);
    D.Data = json::Object{{"dependency", E.Facts ? dependencyName(E.Facts->Class) : "unknown"},
                          {"fixable", !E.Message.Fix.empty()}};
    addPublicFacts(E.Facts.value_or(FindingFacts()), D.Data);
    for (const clang::tooling::DiagnosticMessage &Note : E.Notes) {
      if (Note.FilePath.empty())
        continue;
      Range Where;
      if (Note.FilePath == E.Message.FilePath) {
        Where = Codec.tokenRange(Text, Note.FileOffset);
      } else {
        auto Buffer = llvm::MemoryBuffer::getFile(Note.FilePath);
        if (!Buffer)
          continue;
        Where = Codec.tokenRange((*Buffer)->getBuffer(), Note.FileOffset);
      }
      D.Related.push_back(RelatedInformation{uriFromPath(Note.FilePath), Where, Note.Message});
    }
    return D;
  }

  /// --profile: each finding's measured syncs and host wait, joined as the
  /// batch run joins them (ProfileJoin.h), at the lines of the editor's text.
  void addMeasuredCost(const std::vector<FindingRecord> &Findings, std::vector<lsp::Diagnostic> &Out,
                       StringRef File, StringRef Text) const {
    std::vector<ReportedFinding> Joined;
    for (const FindingRecord &F : Findings) {
      ReportedFinding R;
      R.Check = F.DiagnosticName;
      R.File = File.str();
      R.Offset = F.Message.FileOffset;
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
      lsp::Diagnostic &D = Out[I];
      D.Data["measuredCount"] = static_cast<int64_t>(Same->MeasuredCount);
      D.Data["measuredWaitMs"] = Same->MeasuredWaitMs;
      D.Data["executed"] = Same->MeasuredCount > 0;
      if (Same->MeasuredCount) {
        D.Message += " [measured: " + std::to_string(Same->MeasuredCount) + " syncs";
        if (Same->MeasuredPerStep > 0)
          D.Message += llvm::formatv(" ({0:F2}/step)", Same->MeasuredPerStep).str();
        D.Message += llvm::formatv(", {0:F3} ms waited", Same->MeasuredWaitMs).str();
        const SyncProfile &P = *Opts.Profile;
        if (P.Steps && P.StepMs > 0)
          D.Message += llvm::formatv(", {0:F1} % of a step", 100.0 * Same->MeasuredWaitMs / P.Steps / P.StepMs).str();
        D.Message += "]";
      } else {
        D.Message += " [not executed in the profiled run]";
      }
    }
  }

  json::Value codeActions(const CodeActionParams &P) {
    json::Array Actions;
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = Documents.find(P.Uri);
    if (It == Documents.end())
      return Actions;
    const Document &Doc = It->second;
    // Edits are offsets into the analysed text: none while the buffer differs.
    if (Doc.Text != Doc.AnalysedText)
      return Actions;
    std::optional<size_t> First = Codec.offset(Doc.Text, P.Selection.Start);
    std::optional<size_t> Last = Codec.offset(Doc.Text, P.Selection.End);
    if (!First || !Last)
      return Actions;
    StringRef Text = Doc.Text;
    size_t LineStart = Text.take_front(*First).rfind('\n');
    size_t From = LineStart == StringRef::npos ? 0 : LineStart + 1;
    size_t To = std::min(Text.find('\n', *Last), Text.size());
    for (size_t I = 0; I < Doc.Findings.size(); ++I) {
      const FindingRecord &F = Doc.Findings[I];
      size_t At = F.Message.FileOffset;
      if (At < From || At > To)
        continue;
      CodeAction Action;
      for (const auto &Entry : F.Message.Fix)
        for (const clang::tooling::Replacement &R : Entry.second)
          Action.Edits.push_back(TextEdit{Range{Codec.position(Text, R.getOffset()),
                                                Codec.position(Text, R.getOffset() + R.getLength())},
                                          R.getReplacementText().str()});
      if (Action.Edits.empty())
        continue;
      Action.Title = "torch-syncfree: apply the fix for " + F.DiagnosticName;
      Action.Fixes = Doc.Published[I];
      Action.Uri = P.Uri;
      Actions.push_back(toJSON(Action));
    }
    return Actions;
  }

  //===--------------------------------------------------------------------===//
  // Replies and progress
  //===--------------------------------------------------------------------===//

  void reply(const json::Value *Id, json::Value Result) {
    if (Id)
      IO.write(response(*Id, std::move(Result)));
  }

  std::string beginProgress(const std::string &Title) {
    std::string Token = "torch-syncfree-" + std::to_string(++ProgressCounter);
    IO.write(request(Token, "window/workDoneProgress/create", json::Object{{"token", Token}}));
    IO.write(notification("$/progress", json::Object{{"token", Token},
                                                     {"value", json::Object{{"kind", "begin"},
                                                                            {"title", "torch-syncfree"},
                                                                            {"message", Title}}}}));
    return Token;
  }
  void endProgress(const std::string &Token) {
    IO.write(notification("$/progress",
                          json::Object{{"token", Token}, {"value", json::Object{{"kind", "end"}}}}));
  }

  /// This server's private directory for preambles (PrivateDirectory.h),
  /// created first: the directories of servers that died without removing
  /// theirs are removed.
  std::string preambleDirectory() {
    std::string Why;
    std::string Base = privateBaseDirectory(Why);
    if (Base.empty()) {
      llvm::errs() << "torch-syncfree --lsp: preambles off: " << Why << "\n";
      return "";
    }
    removeStaleEntries(Base, "preamble-");
    llvm::SmallString<128> Model(Base);
    llvm::sys::path::append(Model, "preamble-" + std::to_string(::getpid())); // + "-XXXXXX"
    llvm::SmallString<128> Dir;
    if (!llvm::sys::fs::createUniqueDirectory(Model, Dir))
      PreambleDir = std::string(Dir);
    return PreambleDir;
  }

  LspOptions Opts;
  std::string PreambleDir; ///< this server's preamble files; removed at exit
  Transport IO;
  PositionCodec Codec;
  bool ClientProgress = false;
  unsigned ProgressCounter = 0;
  bool ShutDown = false;
  std::mutex Mutex; ///< Documents, and what analyses hand back
  std::map<std::string, Document> Documents;
  CompileDatabases Databases;
  PreambleStore Preambles;
  Scheduler Work; ///< last: its workers use everything above
};

} // namespace

int runLspServer(LspOptions Options) {
  // A client that closes its end must not kill the server with SIGPIPE in the
  // middle of a write; the write fails and the server ends at end of input.
  std::signal(SIGPIPE, SIG_IGN);
  return Server(std::move(Options)).run();
}

} // namespace torch_syncfree
