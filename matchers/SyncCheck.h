// The base of every torch-syncfree check: options shared by all checks, the
// per-translation-unit analyses (device oracle, use classifier), the one message
// format, and the conversion of Transformer edits into all-or-nothing fix-its.
#ifndef TORCH_SYNCFREE_SYNCCHECK_H
#define TORCH_SYNCFREE_SYNCCHECK_H

#include "DeviceInference.h"
#include "FindingFacts.h"
#include "TranslationUnitAnalysis.h"
#include "UseClassifier.h"

#include "clang-tidy/ClangTidyCheck.h"
#include "clang/Tooling/Transformer/RewriteRule.h"
#include "llvm/Support/JSON.h"
#include <memory>
#include <optional>

namespace torch_syncfree {

/// What a finding says, in the order the message prints it.
struct Finding {
  std::string What;   ///< the sync: "`item()` on a GPU tensor makes the host wait for the GPU"
  UseVerdict Use;     ///< dependency class and why
  std::string Remedy; ///< what to do instead (may be empty)
  /// Facts of FindingFacts.def a check sets itself (ModuleMove); report() fills
  /// the class, the loop line and the interval from Use.
  FindingFacts Facts;
  /// The tensor (or container, module) the sync is on, when the unit cannot
  /// tell whether it is on the GPU: in a batch run, report() says which
  /// origins in other units would put it on the CPU (issue 43), and the batch
  /// drops the finding when every one does.
  const clang::Expr *Subject = nullptr;
};

/// A project summary record (issue 42): a remark of torch-sync-call-in-loop
/// whose text is this prefix and one JSON object; the batch front end joins
/// and removes them (tool/batch/ProjectSummaries.cpp).
inline constexpr llvm::StringLiteral ProjectSummaryPrefix = "torch-syncfree summary: ";
inline constexpr llvm::StringLiteral ProjectSummaryCheck = "torch-sync-call-in-loop";

/// Formats "<what>; <class>: <why>[ (every iteration of the loop at line N | under the
/// log interval `<condition>` at line N)][; <remedy>]".
std::string formatMessage(const Finding &F);

/// "a GPU tensor" / "a tensor that may be on the GPU".
std::string tensorPhrase(Placement P);

/// Why a selection of which only the count is read is a false dependency: "only
/// <What>'s size is read (`numel()`), and <how the host uses the count>".
std::string countedReason(const CountReads &Counted, llvm::StringRef What);
/// The remedy for such a selection: count on the device with \p Count (the user's
/// own expressions: `p.eq(t).sum()`), and, for a count accumulated in a loop, add the
/// counts on the device and read the total once after the loop.
std::string countRemedy(const std::string &Count, const std::string &Caveat, const UseVerdict &Use);

class SyncCheck : public clang::tidy::ClangTidyCheck, public SiteClaimant {
public:
  /// \p FixByDefault: the `Fix` option's default (a check whose fix is opt-in passes false).
  SyncCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context, bool FixByDefault = true);
  ~SyncCheck() override;
  SyncCheck(const SyncCheck &) = delete;
  SyncCheck &operator=(const SyncCheck &) = delete;
  bool fixesEnabled() const { return FixesEnabled; }
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &Opts) override;
  bool isLanguageVersionSupported(const clang::LangOptions &LangOpts) const override {
    return LangOpts.CPlusPlus;
  }
  void onStartOfTranslationUnit() override;
  /// Hands the TU's preprocessor to the analysis (the LibTorch version is in
  /// its macro table).
  void registerPPCallbacks(const clang::SourceManager &SM, clang::Preprocessor *PP,
                           clang::Preprocessor *ModuleExpanderPP) override;
  /// The checks of one factory set share one hub, hence one analysis per TU
  /// (TorchSyncModule); a check made alone has a hub of its own.
  void shareAnalysesThrough(std::shared_ptr<AnalysisHub> Shared);
  /// Which line of Checks.def this check is (set by its factory): the hub's
  /// checks claim sync sites under it.
  void identifyAs(CheckId CheckIdentity);
  /// By default a check listed for a kind of site in Checks.def reports every
  /// site of that kind that no check ranked above it claims.
  bool claimsSite(SyncSiteKind, TranslationUnitAnalysis &, const clang::Expr *) override { return true; }

protected:
  /// With OnlyDefiniteGPU, only tensors known to be on the GPU are reported;
  /// by default unknown ones (parameters, members, ...) are reported too.
  bool mayBeOnGpu(Placement P) const {
    return P == Placement::Gpu || (P == Placement::Unknown && !OnlyDefiniteGPU);
  }
  bool mayBeOnCpu(Placement P) const {
    return P == Placement::Cpu || (P == Placement::Unknown && !OnlyDefiniteGPU);
  }
  /// This TU's analysis: memos, indices, the oracle and the classifiers.
  TranslationUnitAnalysis &analysis(clang::ASTContext &Ctx);
  /// For matchers that ask the analysis (matchers::userCode).
  AnalysisHub *hub() const { return Hub.get(); }
  DeviceOracle &oracle(clang::ASTContext &Ctx);
  UseClassifier &classifier(clang::ASTContext &Ctx);

  /// Whether this check reports the sync site \p Site (Checks.def's
  /// precedence and the checks' claims; SiteOwnership.h).
  bool ownsSite(clang::ASTContext &Ctx, const clang::Expr *Site) {
    return Identity && analysis(Ctx).ownerOfSite(Site) == Identity;
  }
  /// Whether a check ranked above this one for \p Site's kind reports it.
  bool isSiteClaimedAbove(clang::ASTContext &Ctx, const clang::Expr *Site) {
    return Identity && analysis(Ctx).isSiteClaimedAbove(Site, *Identity);
  }

  /// Emits the finding at \p Loc with the fix-its (possibly none).
  void report(clang::SourceLocation Loc, const Finding &F,
              llvm::ArrayRef<clang::FixItHint> Fixes = {});

  /// Evaluates Transformer edits against a match. Returns nothing unless every
  /// edit lands on source spelled in a file outside any macro body, so a fix is
  /// applied whole or not at all.
  std::optional<std::vector<clang::FixItHint>>
  fixItsFor(llvm::ArrayRef<clang::transformer::ASTEdit> Edits,
            const clang::ast_matchers::MatchFinder::MatchResult &Result);

  /// A Transformer range selector for a range the check computed itself.
  static clang::transformer::RangeSelector selectRange(clang::CharSourceRange Range) {
    return [Range](const clang::ast_matchers::MatchFinder::MatchResult &)
               -> llvm::Expected<clang::CharSourceRange> { return Range; };
  }
  static clang::transformer::RangeSelector selectTokens(const clang::Stmt *S) {
    return selectRange(clang::CharSourceRange::getTokenRange(S->getSourceRange()));
  }
  static clang::transformer::RangeSelector selectPoint(clang::SourceLocation Loc) {
    return selectRange(clang::CharSourceRange::getCharRange(Loc, Loc));
  }

  /// `torch::kCUDA`, `at::kCUDA` or `c10::kCUDA`: the namespace the main file
  /// already spells.
  std::string cudaDeviceSpelling(clang::ASTContext &Ctx);
  /// "torch::", "at::" or "c10::", as cudaDeviceSpelling.
  std::string torchNamespacePrefix(clang::ASTContext &Ctx);

  /// The source text of a node as written (empty when it is not in a file).
  static std::string sourceText(clang::ASTContext &Ctx, const clang::Stmt *S);
  /// Parenthesised unless it is already a postfix-expression.
  static std::string asPostfix(clang::ASTContext &Ctx, const clang::Expr *E);
  /// \p E as spelled (asPostfix), for a message that quotes the user's code;
  /// \p Generic when E holds a copy, a factory or a read, which another check's
  /// fix of the same run may rewrite (the message would change after --fix).
  static std::string stableSpelling(clang::ASTContext &Ctx, const clang::Expr *E, llvm::StringRef Generic);

  /// Whether the value of \p E is discarded (a full-expression statement).
  static bool isDiscarded(clang::ASTContext &Ctx, const clang::Expr *E);

  /// Why rewriting \p Site saves no wait, or "" when it may: its loop still
  /// waits every iteration for a value the host needs ("no gain while
  /// `loss.item<float>()` at line 12 waits every iteration ..."). The
  /// `RewriteDespiteWaits` option (default false) rewrites anyway.
  /// Waits inside one of \p Sites (the rewritten code) do not count; one
  /// around a site (a read of what the copied tensor computes, in the same
  /// expression) does.
  std::string noGainReason(clang::ASTContext &Ctx, llvm::ArrayRef<const clang::Stmt *> Sites);

  /// The LibTorch version the TU is compiled against, and how the tool knows:
  /// the headers' `TORCH_VERSION_MAJOR`/`_MINOR`; else the `LibTorchVersion`
  /// option (global; "1.13"); else NewestKnownLibTorch, assumed.
  struct VersionInUse {
    LibTorchVersion Version;
    /// "LibTorch 1.13 (the headers' version)" and kin, for messages.
    std::string Phrase;
  };
  VersionInUse libTorchVersion(clang::ASTContext &Ctx);

  /// Whether another check runs on this file: a site that a more specific
  /// check reports (deferred-log, deferred-accumulate) is left to it.
  bool isCheckEnabled(llvm::StringRef CheckName) const {
    return TidyContext->isCheckEnabled(CheckName);
  }

  /// `<check>.Fix` (default true): false reports without fix-its.
  bool FixesEnabled;

  /// Project summaries (issue 42): on in batch runs (`ProjectSummaries`, set by
  /// the batch front end) while torch-sync-call-in-loop, which says what each
  /// unit defines and calls, runs too.
  bool projectSummaries() const { return ProjectSummariesOption && isCheckEnabled(ProjectSummaryCheck); }
  /// Emits one project summary record at \p Loc: a remark the batch joins and
  /// removes (tool/batch/ProjectSummaries.cpp).
  void emitSummaryRecord(clang::SourceLocation Loc, llvm::json::Object Record);

  /// `BlockingFunctions` (global or per check, ';'-separated names, qualified
  /// or not): functions of compiled libraries the tool cannot see that block
  /// the host until the GPU is done (a library's `copy_to_host`).
  bool isBlockingFunction(const clang::FunctionDecl *FD) const;

private:
  std::shared_ptr<AnalysisHub> Hub;
  std::optional<CheckId> Identity;
  clang::tidy::ClangTidyContext *TidyContext;
  bool OnlyDefiniteGPU;
  /// `ReportIntervalReads` (default false): report false dependencies read
  /// only under a log interval (`if (step % N == 0)`), with the interval.
  bool ReportIntervalReads;
  bool RewriteDespiteWaits;
  bool ProjectSummariesOption;
  std::string LoggingFunctionsOption;
  std::string BlockingFunctionsOption;
  std::vector<std::string> BlockingFunctions;
  /// `LibTorchVersion` (global, default ""): the version of units whose headers
  /// do not define `TORCH_VERSION_MAJOR` (<ATen/ATen.h> or <torch/script.h> alone).
  std::string LibTorchVersionOption;
  ClassifierOptions ClassifierOpts;
};

/// Ends each check's .cpp: the module makes the check through `make<Class>`,
/// declared for every line of Checks.def, so a check's class needs no header
/// and no include list to register (a new check: its .cpp, one line in
/// Checks.def, its test, its docs page).
#define TORCH_SYNC_CHECK_FACTORY(Class)                                                                      \
  std::unique_ptr<SyncCheck> make##Class(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context) {     \
    auto Check = std::make_unique<Class>(Name, Context);                                                     \
    Check->identifyAs(CheckId::Class);                                                                       \
    return Check;                                                                                            \
  }

} // namespace torch_syncfree

#endif
