#ifndef TORCH_SYNCFREE_CHECKS_HOSTTODEVICECHECK_H
#define TORCH_SYNCFREE_CHECKS_HOSTTODEVICECHECK_H

#include "SyncCheck.h"
#include "clang/Tooling/Transformer/RewriteRule.h"

namespace torch_syncfree {

/// torch-sync-host-to-device: `cuda()`, `to(kCUDA)`, `to(device)`,
/// `to(gpu_tensor)` and `dst.copy_(src)` from the host without non_blocking.
/// Fixes: add `/*non_blocking=*/true`, or create fill factories directly on the
/// device instead of creating on the CPU and copying.
class HostToDeviceCheck : public SyncCheck {
public:
  using SyncCheck::SyncCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
  /// The edits that make a blocking copy call asynchronous (`cuda()` becomes
  /// `to(<cuda>, /*non_blocking=*/true)`; `to`/`copy_` get the flag); empty when
  /// the call's form has no place for it.
  static std::vector<clang::transformer::ASTEdit>
  nonBlockingEdits(const clang::CXXMemberCallExpr *Call, clang::ASTContext &Ctx,
                   const std::string &CudaSpelling);
  /// The fill factory of `torch::ones(...).cuda()`-style code that this check
  /// rewrites to create on the device (no copy at all), or nullptr.
  static const clang::CallExpr *createThenCopyFactory(const clang::CXXMemberCallExpr *Call,
                                                      const clang::Expr *DeviceArg, Placement SourceAt);
  void onStartOfTranslationUnit() override {
    SyncCheck::onStartOfTranslationUnit();
    WritesOf.clear();
  }

private:
  /// The uses of a variable that may write it, in source order (per TU).
  llvm::DenseMap<const clang::VarDecl *, std::vector<const clang::DeclRefExpr *>> WritesOf;
  bool sourceWrittenAfter(const clang::Expr *Source, const clang::Stmt *Copy,
                          clang::ASTContext &Ctx, unsigned LoopLine);
  void checkCreateThenCopy(const clang::CXXMemberCallExpr *Call, const clang::CallExpr *Factory,
                           const clang::Expr *DeviceArg,
                           const clang::ast_matchers::MatchFinder::MatchResult &Result);
};

} // namespace torch_syncfree

#endif
