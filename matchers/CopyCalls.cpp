#include "CopyCalls.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

using namespace clang;

namespace torch_syncfree {

const Expr *targetDeviceArgument(const CallExpr *ToCall, DeviceOracle &Oracle) {
  for (const Expr *Arg : ToCall->arguments()) {
    if (isa<CXXDefaultArgExpr>(Arg))
      break;
    if (Oracle.namesDevice(Arg))
      return Arg;
  }
  return nullptr;
}

bool isBlockingCopyToHost(const CXXMemberCallExpr *Call, DeviceOracle &Oracle, const ASTContext &Ctx) {
  const Expr *Object = Call->getImplicitObjectArgument();
  if (calleeName(Call) != "to" || !Object || !isTensorType(Object->getType()))
    return false;
  const Expr *Target = targetDeviceArgument(Call, Oracle);
  return Target && Oracle.devicePlacement(Target) == Placement::Cpu && !passesNonBlocking(Call, Ctx);
}

bool passesNonBlocking(const CallExpr *Call, const ASTContext &Ctx) {
  int Index = parameterIndex(Call, "non_blocking");
  if (Index < 0 || static_cast<unsigned>(Index) >= Call->getNumArgs())
    return false;
  const Expr *Arg = Call->getArg(Index);
  if (isa<CXXDefaultArgExpr>(Arg))
    return false;
  bool Value = true;
  if (Arg->EvaluateAsBooleanCondition(Value, Ctx))
    return Value;
  return true;
}

const Expr *plainDeviceArgument(const Expr *Arg) {
  const Expr *E = ignoreWrappers(Arg);
  if (const auto *Construct = dyn_cast_or_null<CXXConstructExpr>(E))
    if (isTensorOptionsType(Construct->getType()) && Construct->getNumArgs() == 1)
      E = ignoreWrappers(Construct->getArg(0));
  if (E && isDeviceType(E->getType()))
    return E;
  return nullptr;
}

} // namespace torch_syncfree
