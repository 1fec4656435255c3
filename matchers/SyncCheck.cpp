#include "SyncCheck.h"
#include <map>

#include "ApiFacts.h"
#include "FindingFacts.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Tooling/Transformer/SourceCode.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;
using namespace clang::tidy;

namespace torch_syncfree {

std::string formatMessage(const Finding &F) {
  std::string Message = F.What + "; " + dependencyLabel(F.Use.Kind) + ": " + F.Use.Reason;
  if (F.Use.IntervalLine)
    Message += " (under the log interval `" + F.Use.IntervalCondition + "` at line " +
               std::to_string(F.Use.IntervalLine) + ")";
  else if (F.Use.LoopLine)
    Message += " (every iteration of the loop at line " + std::to_string(F.Use.LoopLine) + ")";
  if (!F.Use.ValidationMacro.empty())
    Message += "; validate on the device instead (`at::_assert_async(<condition>)` queues the "
               "check without a host wait), or check outside the hot path (every N steps, or "
               "once after the loop)";
  else if (!F.Remedy.empty())
    Message += "; " + F.Remedy;
  return Message;
}

std::string countedReason(const CountReads &Counted, llvm::StringRef What) {
  std::string Through = Counted.Through ? "through `" + Counted.Through->getNameAsString() + "`, " : "";
  return Through + "only " + What.str() + "'s size is read (`" + (Counted.Numel ? "numel()" : "size(0)") +
         "`), and " + Counted.Verdict.Reason;
}

std::string SyncCheck::stableSpelling(ASTContext &Ctx, const Expr *E, StringRef Generic) {
  bool Rewritable = false;
  std::function<void(const Stmt *)> Visit = [&](const Stmt *S) {
    if (!S || Rewritable)
      return;
    if (const auto *Call = dyn_cast<CallExpr>(S))
      Rewritable = (apiTraits(calleeName(Call)) & (DeviceMove | Factory | ValueRead)) != 0;
    for (const Stmt *Child : S->children())
      Visit(Child);
  };
  Visit(E);
  return Rewritable ? Generic.str() : asPostfix(Ctx, E);
}

std::string countRemedy(const std::string &Count, const std::string &Caveat, const UseVerdict &Use) {
  std::string Remedy = "count on the device with `" + Count + "`" + Caveat;
  if (Use.Accumulated && Use.LoopLine)
    return Remedy + ", add those counts into a tensor on the device and read the total once, after the loop";
  return Remedy + ": no selection is built and nothing waits until the host reads the count";
}

std::string tensorPhrase(Placement P) {
  switch (P) {
  case Placement::Gpu:
    return "a GPU tensor";
  case Placement::Cpu:
    return "a CPU tensor";
  case Placement::Unknown:
    return "a tensor that may be on the GPU";
  }
  return "a tensor";
}

SyncCheck::SyncCheck(StringRef Name, ClangTidyContext *Context, bool FixByDefault)
    : ClangTidyCheck(Name, Context), FixesEnabled(Options.get("Fix", FixByDefault)),
      Hub(std::make_shared<AnalysisHub>()), TidyContext(Context),
      OnlyDefiniteGPU(Options.getLocalOrGlobal("OnlyDefiniteGPU", false)),
      ReportIntervalReads(Options.getLocalOrGlobal("ReportIntervalReads", false)),
      RewriteDespiteWaits(Options.getLocalOrGlobal("RewriteDespiteWaits", false)),
      ProjectSummariesOption(Options.getLocalOrGlobal("ProjectSummaries", false)),
      LoggingFunctionsOption(Options.getLocalOrGlobal("LoggingFunctions", "")),
      BlockingFunctionsOption(Options.getLocalOrGlobal("BlockingFunctions", "")),
      LibTorchVersionOption(Options.getLocalOrGlobal("LibTorchVersion", "")) {
  for (StringRef Item : llvm::split(LoggingFunctionsOption, ';')) {
    Item = Item.trim();
    if (!Item.empty())
      ClassifierOpts.LoggingFunctions.push_back(Item.str());
  }
  for (StringRef Item : llvm::split(BlockingFunctionsOption, ';'))
    if (!Item.trim().empty())
      BlockingFunctions.push_back(Item.trim().ltrim(':').str());
}

bool SyncCheck::isBlockingFunction(const FunctionDecl *FD) const {
  if (!FD || BlockingFunctions.empty() || !FD->getDeclName().isIdentifier())
    return false;
  std::string Qualified = FD->getQualifiedNameAsString();
  return llvm::any_of(BlockingFunctions, [&](const std::string &Name) {
    return Name == Qualified || (Name.find("::") == std::string::npos && Name == FD->getName());
  });
}

void SyncCheck::storeOptions(ClangTidyOptions::OptionMap &Opts) {
  Options.store(Opts, "Fix", FixesEnabled);
  Options.store(Opts, "OnlyDefiniteGPU", OnlyDefiniteGPU);
  Options.store(Opts, "ReportIntervalReads", ReportIntervalReads);
  Options.store(Opts, "RewriteDespiteWaits", RewriteDespiteWaits);
  Options.store(Opts, "LoggingFunctions", LoggingFunctionsOption);
  Options.store(Opts, "BlockingFunctions", BlockingFunctionsOption);
  Options.store(Opts, "LibTorchVersion", LibTorchVersionOption);
}

void SyncCheck::registerPPCallbacks(const SourceManager &, Preprocessor *PP, Preprocessor *) {
  Hub->setPreprocessor(PP);
}

SyncCheck::VersionInUse SyncCheck::libTorchVersion(ASTContext &Ctx) {
  if (std::optional<LibTorchVersion> Read = analysis(Ctx).headerLibTorchVersion())
    return {*Read, "LibTorch " + Read->str() + " (the headers' version)"};
  if (std::optional<LibTorchVersion> Given = parseLibTorchVersion(LibTorchVersionOption))
    return {*Given, "LibTorch " + Given->str() + " (the `LibTorchVersion` option)"};
  return {NewestKnownLibTorch, "LibTorch " + NewestKnownLibTorch.str() +
                                   " (assumed: the headers do not define `TORCH_VERSION_MAJOR`)"};
}

SyncCheck::~SyncCheck() {
  if (Identity)
    Hub->claimants().withdraw(*Identity, this);
}

void SyncCheck::identifyAs(CheckId CheckIdentity) {
  if (Identity)
    Hub->claimants().withdraw(*Identity, this);
  Identity = CheckIdentity;
  Hub->claimants().enroll(*Identity, this);
}

void SyncCheck::shareAnalysesThrough(std::shared_ptr<AnalysisHub> Shared) {
  if (Identity) {
    Hub->claimants().withdraw(*Identity, this);
    Shared->claimants().enroll(*Identity, this);
  }
  Hub = std::move(Shared);
}

void SyncCheck::onStartOfTranslationUnit() { Hub->startTranslationUnit(); }

TranslationUnitAnalysis &SyncCheck::analysis(ASTContext &Ctx) { return Hub->analysis(Ctx); }

DeviceOracle &SyncCheck::oracle(ASTContext &Ctx) { return analysis(Ctx).oracle(); }

UseClassifier &SyncCheck::classifier(ASTContext &Ctx) {
  return analysis(Ctx).classifier(ClassifierOpts);
}

void SyncCheck::report(SourceLocation Loc, const Finding &F, ArrayRef<FixItHint> Fixes) {
  // A value logged or recorded only every N iterations already follows the
  // remedy: one wait per interval, not per step.
  if (F.Use.IntervalLine && !ReportIntervalReads)
    return;
  {
    auto Diag = diag(Loc, "%0") << formatMessage(F);
    FindingFacts Facts = F.Facts;
    Facts.Class = F.Use.Kind;
    Facts.LoopLine = F.Use.LoopLine;
    Facts.IntervalRead = F.Use.IntervalLine != 0;
    attachFacts(Diag, Facts);
    if (FixesEnabled)
      for (const FixItHint &Fix : Fixes)
        Diag << Fix;
  } // emitted here, before the record that refers to it
  // A value returned to callers this unit does not show: the batch takes its
  // class from the project's callers of ReturnedBy (issue 42).
  if (F.Use.ReturnedToUnseenCaller && F.Use.ReturnedBy && projectSummaries())
    emitSummaryRecord(Loc, llvm::json::Object{{"returnedBy", linkageName(F.Use.ReturnedBy)},
                                              {"internal", !F.Use.ReturnedBy->isExternallyVisible()},
                                              {"name", F.Use.ReturnedBy->getNameAsString()},
                                              {"what", F.What},
                                              {"loopLine", F.Use.LoopLine}});
  // A tensor this unit cannot place: the origins in other units that would put
  // it on the CPU (issue 43); the batch drops the finding when each does.
  if (TranslationUnitAnalysis *TU = F.Subject && projectSummaries() ? Hub->current() : nullptr) {
    CpuCondition Condition = TU->oracle().cpuCondition(F.Subject);
    if (Condition.OnCpu && !Condition.Origins.empty())
      emitSummaryRecord(
          Loc, llvm::json::Object{{"cpuIf", llvm::json::Array(Condition.Origins)}, {"what", F.What}});
  }
}

void SyncCheck::emitSummaryRecord(SourceLocation Loc, llvm::json::Object Record) {
  std::string Text;
  llvm::raw_string_ostream(Text) << llvm::json::Value(std::move(Record));
  // Facts travel with every finding of a torch-sync check, records included.
  attachFacts(diag(Loc, "%0", DiagnosticIDs::Remark) << (ProjectSummaryPrefix + Text).str(), FindingFacts{});
}


std::string SyncCheck::noGainReason(ASTContext &Ctx, ArrayRef<const Stmt *> Sites) {
  if (RewriteDespiteWaits || Sites.empty())
    return "";
  const Stmt *Loop = analysis(Ctx).enclosingLoop(Sites.front());
  if (!Loop)
    return "";
  // Whether Inner is Outer or inside it (below the loop).
  auto Within = [&](const Stmt *Inner, const Stmt *Outer) {
    return Inner == Outer ||
           innermostAncestor(Ctx, Inner, [Outer](const Stmt *S) { return S == Outer; }, Loop);
  };
  // The wait named: the first one the host needs (the one to restructure
  // first), else the first other one.
  const CallExpr *Wait = nullptr;
  bool Needed = false;
  for (const CallExpr *Candidate : classifier(Ctx).waitsEveryIteration(Loop)) {
    // A wait inside a rewritten site is the one the rewrite removes; one around
    // it (`(f(x.cuda())).sum().item()`) still waits, for the site's result too.
    if (llvm::any_of(Sites, [&](const Stmt *Site) { return Within(Candidate, Site); }))
      continue;
    bool CandidateNeeded = classifier(Ctx).classify(Candidate).Kind == Dependency::True;
    if (!Wait || (CandidateNeeded && !Needed)) {
      Wait = Candidate;
      Needed = CandidateNeeded;
    }
    if (Needed)
      break;
  }
  if (!Wait)
    return "";
  std::string Spelled = sourceText(Ctx, Wait);
  if (Spelled.empty() || Spelled.size() > 48 || Spelled.find('\n') != std::string::npos)
    Spelled = calleeName(Wait).str() + "()";
  unsigned Line = Ctx.getSourceManager().getExpansionLineNumber(Wait->getExprLoc());
  return "no gain while `" + Spelled + "` at line " + std::to_string(Line) +
         (Needed ? " waits every iteration for a value the host needs"
                 : " still waits every iteration (no fix of this run removes it)") +
         "; remove that wait first (`RewriteDespiteWaits: true` rewrites anyway)";
}

std::optional<std::vector<FixItHint>>
SyncCheck::fixItsFor(ArrayRef<transformer::ASTEdit> Edits,
                     const ast_matchers::MatchFinder::MatchResult &Result) {
  std::vector<FixItHint> Fixes;
  for (const transformer::ASTEdit &Edit : Edits) {
    Expected<CharSourceRange> Range = Edit.TargetRange(Result);
    if (!Range) {
      llvm::consumeError(Range.takeError());
      return std::nullopt;
    }
    // IncludeMacroExpansion=false: an edit inside a macro body or over a whole
    // macro expansion is refused; macro arguments spelled in the file are fine.
    std::optional<CharSourceRange> FileRange =
        tooling::getFileRangeForEdit(*Range, *Result.Context, /*IncludeMacroExpansion=*/false);
    if (!FileRange)
      return std::nullopt;
    Expected<std::string> Text = Edit.Replacement->eval(Result);
    if (!Text) {
      llvm::consumeError(Text.takeError());
      return std::nullopt;
    }
    Fixes.push_back(FixItHint::CreateReplacement(*FileRange, *Text));
  }
  return Fixes;
}

std::string SyncCheck::cudaDeviceSpelling(ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  StringRef Text = SM.getBufferData(SM.getMainFileID());
  if (Text.contains("torch::"))
    return "torch::kCUDA";
  if (Text.contains("at::"))
    return "at::kCUDA";
  if (Text.contains("c10::"))
    return "c10::kCUDA";
  return "torch::kCUDA";
}

std::string SyncCheck::torchNamespacePrefix(ASTContext &Ctx) {
  std::string Spelling = cudaDeviceSpelling(Ctx);
  return Spelling.substr(0, Spelling.rfind("::") + 2);
}

std::string SyncCheck::sourceText(ASTContext &Ctx, const Stmt *S) { return spelledText(Ctx, S); }

std::string SyncCheck::asPostfix(ASTContext &Ctx, const Expr *E) {
  const Expr *Spelled = ignoreWrappers(E)->IgnoreImplicit();
  std::string Text = sourceText(Ctx, Spelled);
  if (isa<DeclRefExpr, CallExpr, ParenExpr, MemberExpr, ArraySubscriptExpr>(Spelled) &&
      !isa<CXXOperatorCallExpr>(Spelled))
    return Text;
  return "(" + Text + ")";
}

bool SyncCheck::isDiscarded(ASTContext &Ctx, const Expr *E) { return isValueDiscarded(Ctx, E); }

} // namespace torch_syncfree
