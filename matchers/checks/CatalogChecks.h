// The catalog checks beyond the first three: one small class each, implemented in
// the .cpp of the same name. Each page under docs/checks/ describes one.
#ifndef TORCH_SYNCFREE_CHECKS_CATALOGCHECKS_H
#define TORCH_SYNCFREE_CHECKS_CATALOGCHECKS_H

#include "SyncCheck.h"
#include <map>

namespace torch_syncfree {

#define TORCH_SYNCFREE_DECLARE_CHECK(ClassName)                                              \
  class ClassName : public SyncCheck {                                                       \
  public:                                                                                    \
    using SyncCheck::SyncCheck;                                                              \
    void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;               \
    void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;       \
  };

/// torch-sync-tensor-factory: torch::tensor({list} or vector, <GPU options>).
TORCH_SYNCFREE_DECLARE_CHECK(TensorFactoryCheck)
/// torch-sync-mask-index: x.index({bool_mask}), masked_select.
TORCH_SYNCFREE_DECLARE_CHECK(MaskIndexCheck)
/// torch-sync-index-put: index_put_ with an integer index and a host scalar; host
/// indices; on LibTorch 1.x, index_put_ with accumulate (a range check with item()).
class IndexPutCheck : public SyncCheck {
public:
  using SyncCheck::SyncCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;

private:
  void checkAccumulate(const clang::CXXMemberCallExpr *Call, const clang::Expr *Object,
                       clang::ASTContext &Ctx);
};
/// torch-sync-scalar-index: a 0-dim integer GPU tensor used as an index.
TORCH_SYNCFREE_DECLARE_CHECK(ScalarIndexCheck)
/// torch-sync-dynamic-shape: nonzero, unique, repeat_interleave, bincount, histc, ...
TORCH_SYNCFREE_DECLARE_CHECK(DynamicShapeCheck)
/// torch-sync-module-move: `model->to(device)` copies each parameter with a
/// blocking copy; reported only with ReportModuleMoves (a one-time setup cost).
class ModuleMoveCheck : public SyncCheck {
public:
  ModuleMoveCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : SyncCheck(Name, Context), ReportModuleMoves(Options.getLocalOrGlobal("ReportModuleMoves", false)) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &Opts) override {
    SyncCheck::storeOptions(Opts);
    Options.store(Opts, "ReportModuleMoves", ReportModuleMoves);
  }

private:
  bool ReportModuleMoves;
};
/// torch-sync-host-bool: is_nonzero, equal, allclose, item<bool>(); multinomial
/// without replacement on LibTorch 1.x (validated with host bools). With
/// AssertAsyncFix, `TORCH_CHECK(t.item<bool>(), "msg")` becomes `at::_assert_async`.
class HostBoolCheck : public SyncCheck {
public:
  HostBoolCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : SyncCheck(Name, Context), AssertAsyncFix(Options.get("AssertAsyncFix", false)) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &Opts) override {
    SyncCheck::storeOptions(Opts);
    Options.store(Opts, "AssertAsyncFix", AssertAsyncFix);
  }

private:
  /// multinomial without replacement: validated with host bools on LibTorch 1.x.
  void checkSampling(const clang::CallExpr *Call, const clang::Expr *Probabilities, clang::ASTContext &Ctx);
  bool AssertAsyncFix;
};
/// torch-sync-checked-linalg: linalg ops that check their result on the host. With
/// UseExVariants, `auto x = torch::linalg_inv(a);` becomes the `_ex` call and its result.
class CheckedLinalgCheck : public SyncCheck {
public:
  CheckedLinalgCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : SyncCheck(Name, Context), UseExVariants(Options.get("UseExVariants", false)) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &Opts) override {
    SyncCheck::storeOptions(Opts);
    Options.store(Opts, "UseExVariants", UseExVariants);
  }

private:
  bool UseExVariants;
};
/// torch-sync-grad-norm: clip_grad_norm_ returns a host double.
class GradNormCheck : public SyncCheck {
public:
  GradNormCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : SyncCheck(Name, Context), FusedNorm(Options.getLocalOrGlobal("FusedNorm", false)),
        HelperInEveryFix(Options.getLocalOrGlobal("HelperInEveryFix", false)) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &Opts) override {
    SyncCheck::storeOptions(Opts);
    Options.store(Opts, "FusedNorm", FusedNorm);
    Options.store(Opts, "HelperInEveryFix", HelperInEveryFix);
  }
  /// A discarded `clip_grad_norm_` its fix clips on the device.
  bool removesSite(SyncSiteKind Kind, TranslationUnitAnalysis &TU, const clang::Expr *Site) override;
  bool removesAnySites() const override { return fixesEnabled(); }

private:
  static const clang::DeclRefExpr *normReadAtLogPoint(TranslationUnitAnalysis &TU, const clang::CallExpr *Call);
  bool FusedNorm;
  bool HelperInEveryFix; ///< set by the language server
};
/// torch-sync-explicit: synchronize calls, blocking cudaMemcpy and loops that
/// poll a completion query until it says done; the option SynchronizeFunctions
/// adds the project's own barriers.
class ExplicitSyncCheck : public SyncCheck {
public:
  ExplicitSyncCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context);
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &Opts) override;

private:
  /// A loop that polls a completion query until it says done: a host wait.
  void checkPoll(const clang::CallExpr *Query, clang::ASTContext &Ctx);
  const clang::Stmt *pollingLoop(const clang::CallExpr *Query, clang::ASTContext &Ctx);
  const clang::Stmt *loopPollingVariable(const clang::VarDecl *Var, const clang::Expr *Value,
                                         const clang::CallExpr *Query, bool RuntimeCode,
                                         clang::ASTContext &Ctx);
  std::string ExtraFunctionsOption;
  std::vector<std::string> ExtraFunctions;
};
/// torch-sync-print: streaming or printing tensor values.
TORCH_SYNCFREE_DECLARE_CHECK(PrintCheck)
/// torch-sync-deferred-accumulate: `metric += t.item<T>()` in a loop, read after it.
class DeferredAccumulateCheck : public SyncCheck {
public:
  DeferredAccumulateCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : SyncCheck(Name, Context), FusedNorm(Options.getLocalOrGlobal("FusedNorm", false)),
        HelperInEveryFix(Options.getLocalOrGlobal("HelperInEveryFix", false)) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &Opts) override {
    SyncCheck::storeOptions(Opts);
    Options.store(Opts, "FusedNorm", FusedNorm);
  }
  /// The read (item() or clip_grad_norm_) of an accumulation this check reports.
  bool claimsSite(SyncSiteKind Kind, TranslationUnitAnalysis &TU, const clang::Expr *Site) override;
  /// The read of an accumulation this check rewrites (its fix is on and
  /// nothing but another wait of the loop refuses it).
  bool removesSite(SyncSiteKind Kind, TranslationUnitAnalysis &TU, const clang::Expr *Site) override;
  bool removesAnySites() const override { return fixesEnabled(); }

private:
  /// What decides whether an accumulation is rewritten, and how.
  struct Accumulation {
    const clang::Expr *HostRead = nullptr; ///< nullptr: the match is not this check's finding
    const clang::Stmt *Loop = nullptr;
    const clang::FunctionDecl *FD = nullptr;
    const clang::DeclRefExpr *Lhs = nullptr;
    /// Reads of the running value at a log interval inside the loop.
    std::vector<const clang::DeclRefExpr *> IntervalReads;
    const clang::CompoundStmt *Body = nullptr;
    const clang::Expr *Factor = nullptr; ///< the summand's host factor (`* n`, `/ n`)
    bool Divides = false;
    clang::QualType Type;
    bool Floating = false;
    std::optional<std::string> Clipping; ///< the device clipping of a clip_grad_norm_ summand
    /// Why there is no rewrite, other waits of the loop aside (empty: none).
    std::string Refusal;
  };
  Accumulation examine(const clang::ast_matchers::BoundNodes &Nodes, clang::ASTContext &Ctx);
  /// The match of this check's matcher whose host read is \p Site, if any.
  std::optional<clang::ast_matchers::BoundNodes> matchOfRead(TranslationUnitAnalysis &TU,
                                                             const clang::Expr *Site);
  /// The host read a match of the check's matcher reports (with or without a
  /// fix), or nullptr when the match is not the check's finding.
  const clang::Expr *reportedRead(const clang::ast_matchers::BoundNodes &Nodes, TranslationUnitAnalysis &TU);
  bool FusedNorm; ///< the composed clipping's norms: see GradNormCheck
  bool HelperInEveryFix; ///< see addClipGradNormHelper (fixes/ClipGradNorm.h)
};
/// torch-sync-pageable-copy: a non_blocking copy between the GPU and pageable
/// host memory, which the driver makes synchronous.
class PageableCopyCheck : public SyncCheck {
public:
  using SyncCheck::SyncCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;

};
/// torch-sync-call-in-loop: a call in a loop to a function of this TU that syncs.
/// With `ProjectSummaries` (set by the batch front end, issue 42) it also says,
/// as remarks the batch joins across units, which calls in loops go to functions
/// defined elsewhere and, once per unit, the functions the main file defines
/// (what each waits for) and every call of and reference to a project function.
class CallInLoopCheck : public SyncCheck {
public:
  using SyncCheck::SyncCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
  void onStartOfTranslationUnit() override;
  void onEndOfTranslationUnit() override;

private:
  /// What the batch needs of a function defined in the main file.
  void summariseDefinition(const clang::FunctionDecl *Definition, clang::ASTContext &Ctx);
  /// The wait a function makes the host do (its body, callees of this unit),
  /// as a summary's `wait`; nullopt when it makes none.
  std::optional<llvm::json::Object> waitRecord(const clang::FunctionDecl *Definition, clang::ASTContext &Ctx);
  /// The project operators a function calls through the dispatcher.
  static llvm::json::Array dispatchedOperators(const clang::FunctionDecl *Definition);
  /// The kernels the unit's TORCH_LIBRARY blocks register, with their waits.
  llvm::json::Array registeredOperators(clang::ASTContext &Ctx);
  /// Says for the batch that a loop calls \p Callee (a linkage name, or
  /// "operator:ns::name"), which the call's unit cannot see wait.
  void emitLoopCallRecord(const clang::CallExpr *Call, const std::string &Callee, const std::string &Name,
                          clang::ASTContext &Ctx);
  /// A call of, or a reference to, a function of the project.
  void recordUse(const clang::Expr *Use, const clang::FunctionDecl *Target, bool IsCall,
                 clang::ASTContext &Ctx);
  /// Where the tensors a call passes to \p Target's tensor parameters would
  /// be were every origin in another unit on the CPU (issue 43).
  llvm::json::Array argumentConditions(const clang::CallExpr *Call, const clang::FunctionDecl *Target,
                                       clang::ASTContext &Ctx);
  /// The same for the values the unit's code stores into each field of a
  /// project class other units can store into too.
  llvm::json::Array fieldConditions();
  /// The classes the unit's project code names outside their own members
  /// (a constructor is reached when its class is named: issue 43).
  static llvm::json::Array namedClasses(clang::ASTContext &Ctx);
  // The unit's project summary, said once at its end (issue 42).
  clang::ASTContext *Unit = nullptr;
  llvm::json::Array Defines, Calls, Addresses;
  /// Fields of project classes the unit's code names, by origin key.
  std::map<std::string, const clang::FieldDecl *> ProjectFields;
};
/// torch-sync-coalesce: several `item<T>()` of GPU tensors in a row become one
/// `torch::stack({...}).cpu()` and host reads of its elements. The fix is opt-in
/// (`Fix: true`): measured slower on an H200 (see docs/checks/torch-sync-coalesce.md).
class CoalesceCheck : public SyncCheck {
public:
  CoalesceCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : SyncCheck(Name, Context, /*FixByDefault=*/false) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
  /// An item() read of a run this check rewrites.
  bool claimsSite(SyncSiteKind Kind, TranslationUnitAnalysis &TU, const clang::Expr *Site) override;
  /// The plans are per TU: a new ASTContext may reuse the last one's address.
  void onStartOfTranslationUnit() override {
    SyncCheck::onStartOfTranslationUnit();
    Plans.clear();
    PlannedContext = nullptr;
  }
  struct Read; ///< one `item<T>()` that may join a coalesced transfer

private:
  /// What the check says about one run of reads, decided once per TU: the
  /// claims of its reads and the report both read it.
  struct RunPlan {
    std::vector<const clang::Expr *> Reads;
    clang::SourceLocation Loc;
    Finding F;
    /// Set when the run is rewritten: its reads are then this check's.
    std::optional<std::vector<clang::FixItHint>> Fixes;
    bool Reported = false;
  };
  /// The plans of a block the check's matcher matched (BlockMatch binds it).
  const std::vector<RunPlan> &plansFor(const clang::ast_matchers::BoundNodes &BlockMatch,
                                       clang::ASTContext &Ctx);
  RunPlan planRun(const std::vector<std::pair<const clang::Stmt *, Read>> &Run,
                  const clang::ast_matchers::MatchFinder::MatchResult &Result);
  /// The plans of this TU's blocks (reset when the ASTContext changes).
  const clang::ASTContext *PlannedContext = nullptr;
  llvm::DenseMap<const clang::CompoundStmt *, std::vector<RunPlan>> Plans;
};
/// torch-sync-deferred-log: an `item()` read every iteration of a loop whose value
/// is only logged; points to the loop's log interval when it has one.
class DeferredLogCheck : public SyncCheck {
public:
  using SyncCheck::SyncCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
  /// An item() read in a loop, of a tensor that may be on the GPU, only logged,
  /// outside any log interval.
  bool claimsSite(SyncSiteKind Kind, TranslationUnitAnalysis &TU, const clang::Expr *Site) override;
};
/// torch-sync-graph-capture: a sync inside CUDA graph capture (error level).
TORCH_SYNCFREE_DECLARE_CHECK(GraphCaptureCheck)

#undef TORCH_SYNCFREE_DECLARE_CHECK

} // namespace torch_syncfree

#endif
