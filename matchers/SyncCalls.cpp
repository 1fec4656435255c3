#include "SyncCalls.h"
#include "TorchApi.h"

#include "clang/AST/ExprCXX.h"
#include "llvm/ADT/StringSet.h"

using namespace clang;

namespace torch_syncfree {

llvm::ArrayRef<llvm::StringRef> dataDependentShapeOps() {
  static const llvm::StringRef Ops[] = {"nonzero", "argwhere", "unique", "_unique",
                                        "_unique2", "unique_consecutive", "unique_dim",
                                        "repeat_interleave", "bincount", "histc"};
  return Ops;
}

std::optional<SyncCall> asSyncCall(const CallExpr *Call) {
  // Measured on an H200 with LibTorch 2.11 (docs/catalog.md): these wait.
  static const llvm::StringSet<> ValueReads = {"item", "_local_scalar_dense", "cpu", "print",
                                               "toString"};
  static const llvm::StringSet<> TensorOps = [] {
    llvm::StringSet<> Ops = {"is_nonzero", "equal", "allclose", "masked_select", "linalg_inv",
                             "linalg_cholesky", "linalg_solve", "inverse", "cholesky"};
    for (llvm::StringRef Op : dataDependentShapeOps())
      Ops.insert(Op);
    return Ops;
  }();
  static const llvm::StringSet<> Barriers = {
      "synchronize", "device_synchronize", "cudaDeviceSynchronize", "cudaStreamSynchronize",
      "cudaEventSynchronize", "cudaMemcpy", "clip_grad_norm_"};
  const FunctionDecl *FD = Call->getDirectCallee();
  if (!FD)
    return std::nullopt;
  StringRef Name = calleeName(Call);
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Call)) {
    if (Op->getOperator() == OO_LessLess && Op->getNumArgs() == 2 &&
        isTensorType(Op->getArg(1)->getType()))
      return SyncCall{"operator<<", Op->getArg(1), true};
    return std::nullopt;
  }
  bool InTorch = isInTorchNamespace(FD);
  // CUDA runtime functions are global; LibTorch's live in at/c10/torch.
  if (Barriers.contains(Name) && (InTorch || Name.starts_with("cuda")))
    return SyncCall{Name, nullptr, false};
  if (!InTorch)
    return std::nullopt;
  const Expr *Tensor = calleeObject(Call);
  if (!Tensor || !isTensorType(Tensor->getType()))
    Tensor = Call->getNumArgs() > 0 && isTensorType(Call->getArg(0)->getType()) ? Call->getArg(0)
                                                                                : nullptr;
  if (!Tensor)
    return std::nullopt;
  if (ValueReads.contains(Name))
    return SyncCall{Name, Tensor, true};
  if (TensorOps.contains(Name))
    return SyncCall{Name, Tensor, false};
  return std::nullopt;
}

} // namespace torch_syncfree
