// Shared knowledge of LibTorch's copy calls (`to`, `cpu`, `cuda`, `copy_`):
// which argument names the target device and whether the copy is already
// asynchronous. Used by the host-to-device and device-to-host checks.
#ifndef TORCH_SYNCFREE_COPYCALLS_H
#define TORCH_SYNCFREE_COPYCALLS_H

#include "DeviceInference.h"
#include "clang/AST/ExprCXX.h"

namespace torch_syncfree {

/// The first written argument of a `to(...)` call that names a device (a
/// Device, DeviceType, device string, TensorOptions with a device, or another
/// tensor), or nullptr for dtype-only conversions.
const clang::Expr *targetDeviceArgument(const clang::CallExpr *ToCall, DeviceOracle &Oracle);

/// True when the call passes `non_blocking` explicitly with anything but a
/// constant false (a variable flag is the author's decision: not reported).
bool passesNonBlocking(const clang::CallExpr *Call, const clang::ASTContext &Ctx);

/// `t.to(<CPU>)` without a non_blocking flag: a device-to-host copy the host
/// waits for when `t` is on the GPU (torch-sync-device-to-host; call-in-loop
/// follows it into callees).
bool isBlockingCopyToHost(const clang::CXXMemberCallExpr *Call, DeviceOracle &Oracle,
                          const clang::ASTContext &Ctx);

/// For `to(X)`: X itself when it is a Device/DeviceType (seen through the
/// implicit TensorOptions conversion), otherwise nullptr.
const clang::Expr *plainDeviceArgument(const clang::Expr *Arg);

} // namespace torch_syncfree

#endif
