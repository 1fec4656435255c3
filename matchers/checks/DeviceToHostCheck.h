#ifndef TORCH_SYNCFREE_CHECKS_DEVICETOHOSTCHECK_H
#define TORCH_SYNCFREE_CHECKS_DEVICETOHOSTCHECK_H

#include "SyncCheck.h"

namespace torch_syncfree {

/// torch-sync-device-to-host: `cpu()`, `to(kCPU)`, `to(Device("cpu"))`,
/// `to(<CPU options>)` on a tensor that may be on the GPU, and `torch::save` of
/// tensors or a module that may be on the GPU. The one fix moves a copy of a
/// tensor the loop does not change before the loop (fixes/HoistInvariantCopy);
/// otherwise flag only: the non_blocking form is unsafe unless nothing reads the
/// result before a later synchronization.
class DeviceToHostCheck : public SyncCheck {
public:
  using SyncCheck::SyncCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;

private:
  void checkSave(const clang::CallExpr *Save, const clang::Expr *Saved, clang::ASTContext &Ctx);
};

} // namespace torch_syncfree

#endif
