// The catalog checks beyond the first three: one small class each, implemented in
// the .cpp of the same name. Each page under docs/checks/ describes one.
#ifndef TORCH_SYNCFREE_CHECKS_CATALOGCHECKS_H
#define TORCH_SYNCFREE_CHECKS_CATALOGCHECKS_H

#include "SyncCheck.h"

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
/// torch-sync-index-put: index_put_ with an integer index and a host scalar; host indices.
TORCH_SYNCFREE_DECLARE_CHECK(IndexPutCheck)
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
/// torch-sync-host-bool: is_nonzero, equal, allclose, item<bool>(). With
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
  /// The device-side clipping that replaces the call: a call of one named
  /// helper per file (LibTorch's 2-norm clipping without the final host read;
  /// it returns the total norm as a 0-dim tensor on the gradients' device).
  /// With \p FusedNorm the per-parameter norms are one `_foreach_norm` (fewer
  /// launches, not bit-identical on CUDA). nullopt when the call uses a norm
  /// type or flag the rewrite does not reproduce, or the helper has no place.
  static std::optional<std::string> deviceClipping(clang::ASTContext &Ctx, const clang::CallExpr *Call,
                                                   bool FusedNorm);
  /// The helper's definition, inserted after the file's includes, for the fix
  /// of \p Call: added by the first fix of the TU that asks (one definition per
  /// file, whichever fixes clang-tidy applies), or by every fix when
  /// \p EveryFix (the language server applies one quick fix at a time; the
  /// copies are guarded). None when the TU already defines it (a file fixed
  /// before). false when the fix must not be offered: no place for the helper,
  /// or the carrier's line looks suppressed (NOLINT), so its fix may not apply.
  static bool clippingHelper(TranslationUnitAnalysis &TU, const clang::CallExpr *Call, bool FusedNorm,
                             bool EveryFix, std::vector<clang::transformer::ASTEdit> &Edits);

private:
  static const clang::DeclRefExpr *normReadAtLogPoint(TranslationUnitAnalysis &TU, const clang::CallExpr *Call);
  bool FusedNorm;
  bool HelperInEveryFix; ///< set by the language server
};
/// torch-sync-explicit: synchronize calls and blocking cudaMemcpy; the option
/// SynchronizeFunctions adds the project's own barriers.
class ExplicitSyncCheck : public SyncCheck {
public:
  ExplicitSyncCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context);
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &Opts) override;

private:
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
  /// Whether this check reports the accumulation \p Item is the summand of
  /// (torch-sync-item then leaves the site to it).
  static bool reportsItem(TranslationUnitAnalysis &TU, const clang::Expr *Item);

private:
  bool FusedNorm; ///< the composed clipping's norms: see GradNormCheck
  bool HelperInEveryFix; ///< see GradNormCheck::clippingHelper
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
TORCH_SYNCFREE_DECLARE_CHECK(CallInLoopCheck)
/// torch-sync-coalesce: several `item<T>()` of GPU tensors in a row become one
/// `torch::stack({...}).cpu()` and host reads of its elements. The fix is opt-in
/// (`Fix: true`): measured slower on an H200 (see docs/checks/torch-sync-coalesce.md).
class CoalesceCheck : public SyncCheck {
public:
  CoalesceCheck(llvm::StringRef Name, clang::tidy::ClangTidyContext *Context)
      : SyncCheck(Name, Context, /*FixByDefault=*/false) {}
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
  struct Read; ///< one `item<T>()` that may join a coalesced transfer

private:
  void reportRun(const std::vector<std::pair<const clang::Stmt *, Read>> &Run,
                 const clang::ast_matchers::MatchFinder::MatchResult &Result);
};
/// torch-sync-deferred-log: an `item()` read every iteration of a loop whose value
/// is only logged; points to the loop's log interval when it has one.
class DeferredLogCheck : public SyncCheck {
public:
  using SyncCheck::SyncCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
  /// Whether this check reports \p Item, whose use was classified as \p Use
  /// (torch-sync-item then leaves the site to it).
  static bool reportsItem(TranslationUnitAnalysis &TU, const clang::Expr *Item, const UseVerdict &Use);
};
/// torch-sync-graph-capture: a sync inside CUDA graph capture (error level).
TORCH_SYNCFREE_DECLARE_CHECK(GraphCaptureCheck)

#undef TORCH_SYNCFREE_DECLARE_CHECK

} // namespace torch_syncfree

#endif
