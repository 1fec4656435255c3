#ifndef TORCH_SYNCFREE_CHECKS_HOSTTODEVICECHECK_H
#define TORCH_SYNCFREE_CHECKS_HOSTTODEVICECHECK_H

#include "SyncCheck.h"

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
