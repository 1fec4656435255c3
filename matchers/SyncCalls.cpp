#include "SyncCalls.h"
#include "ApiFacts.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/ExprCXX.h"

using namespace clang;

namespace torch_syncfree {

std::optional<SyncCall> asSyncCall(const CallExpr *Call) {
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
  // CUDA runtime functions are global (the host table); LibTorch's live in at/c10/torch.
  unsigned Traits = apiTraits(Name);
  if (((Traits & Barrier) && InTorch) || hasHostApiTrait(Name, RuntimeWait))
    return SyncCall{Name, nullptr, false};
  if (!InTorch)
    return std::nullopt;
  const Expr *Tensor = calleeObject(Call);
  if (!Tensor || !isTensorType(Tensor->getType()))
    Tensor = Call->getNumArgs() > 0 && isTensorType(Call->getArg(0)->getType()) ? Call->getArg(0)
                                                                                : nullptr;
  if (!Tensor)
    return std::nullopt;
  if (Traits & ValueRead)
    return SyncCall{Name, Tensor, true};
  if (Traits & WaitingOp)
    return SyncCall{Name, Tensor, false};
  return std::nullopt;
}

} // namespace torch_syncfree
