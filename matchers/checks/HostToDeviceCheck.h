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

private:
  void checkCreateThenCopy(const clang::CXXMemberCallExpr *Call, const clang::CallExpr *Factory,
                           const clang::Expr *DeviceArg,
                           const clang::ast_matchers::MatchFinder::MatchResult &Result);
};

} // namespace torch_syncfree

#endif
