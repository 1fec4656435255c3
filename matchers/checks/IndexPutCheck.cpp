#include "ApiFacts.h"
#include "CatalogChecks.h"
#include "TensorFacts.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/Tooling/Transformer/RangeSelector.h"
#include "clang/Tooling/Transformer/Stencil.h"

using namespace clang;
using namespace clang::ast_matchers;
using namespace clang::transformer;

namespace torch_syncfree {

void IndexPutCheck::registerMatchers(MatchFinder *Finder) {
  using namespace matchers;
  Finder->addMatcher(tensorMethodCall(hub(), "index_put_", "index_put", "index", "masked_fill_").bind("call"),
                     this);
}

/// The tensors inside the `{...}` index list of index()/index_put_().
static std::vector<const Expr *> indexTensors(const CallExpr *Call) {
  std::vector<const Expr *> Tensors;
  if (auto Elements = indexListElements(Call))
    for (const Expr *E : *Elements)
      if (isTensorType(E->getType()))
        Tensors.push_back(E);
  return Tensors;
}

void IndexPutCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CXXMemberCallExpr>("call");
  const auto *Object = Result.Nodes.getNodeAs<Expr>("object");
  ASTContext &Ctx = *Result.Context;
  DeviceOracle &Oracle = oracle(Ctx);
  Placement Target = Oracle.tensorPlacement(Object);
  if (Target != Placement::Gpu && !(Target == Placement::Unknown && mayBeOnGpu(Target)))
    return;
  StringRef Method = calleeName(Call);
  UseClassifier &Classifier = classifier(Ctx);
  Finding F;
  F.Use.Kind = Dependency::False;
  F.Use.LoopLine = Classifier.enclosingLoopLine(Call);

  if (Method == "masked_fill_") {
    // masked_fill_(mask, device 0-dim tensor) waits; a host scalar does not.
    if (Call->getNumArgs() != 2 || !isTensorType(Call->getArg(1)->getType()) ||
        Oracle.tensorPlacement(Call->getArg(1)) == Placement::Cpu)
      return;
    F.What = "`masked_fill_` with a device tensor as the value copies the value to the host "
             "(the host waits)";
    F.Use.Reason = "the value can stay on the device";
    F.Remedy = "`x.copy_(torch::where(mask, value, x))` keeps it there";
    report(Call->getExprLoc(), F);
    return;
  }

  // Index or mask tensors on the CPU used on a GPU tensor: copied with a wait.
  for (const Expr *Index : indexTensors(Call)) {
    if (Oracle.tensorPlacement(Index) != Placement::Cpu || !mayBeOnGpu(Target))
      continue;
    F.What = "a CPU index tensor used on a GPU tensor is copied to the GPU with a blocking copy";
    F.Use.Reason = "the host does not need to wait for the index copy";
    F.Remedy = "move it first with `.to(x.device(), /*non_blocking=*/true)`";
    std::string Replacement = asPostfix(Ctx, Index) + ".to(" + asPostfix(Ctx, Object) +
                              ".device(), /*non_blocking=*/true)";
    auto Fixes = isSideEffectFree(Object) ? fixItsFor({changeTo(selectTokens(Index), cat(Replacement))}, Result)
                                          : std::nullopt;
    report(Index->getBeginLoc(), F, Fixes ? *Fixes : std::vector<FixItHint>{});
    return;
  }
  if (Call->getNumArgs() == 3) {
    checkAccumulate(Call, Object, Ctx);
    return;
  }
  if (Method != "index_put_" || Call->getNumArgs() != 2)
    return;
  const Expr *Value = Call->getArg(1)->IgnoreImplicit();
  bool ScalarValue = isScalarType(Call->getArg(1)->getType()) && !isTensorType(Value->getType());
  std::vector<const Expr *> Indices = indexTensors(Call);
  if (!ScalarValue || Indices.empty())
    return;
  bool AllInteger = true, AnyBool = false;
  for (const Expr *Index : Indices) {
    ElementKind Kind = elementKind(analysis(Ctx), Index);
    AllInteger &= Kind == ElementKind::Integer;
    AnyBool |= Kind == ElementKind::Bool;
  }
  if (AnyBool || !AllInteger)
    return; // a boolean mask with a scalar becomes masked_fill_: no wait
  F.What = "`index_put_` with integer indices and a host scalar copies the scalar with a wait";
  F.Use.Reason = "the value can be a 0-dim tensor on the target's device";
  F.Remedy = "pass `torch::scalar_tensor(value, x.options())`";
  std::string Replacement = torchNamespacePrefix(Ctx) + "scalar_tensor(" + sourceText(Ctx, Value) +
                            ", " + asPostfix(Ctx, Object) + ".options())";
  auto Fixes = isSideEffectFree(Object) ? fixItsFor({changeTo(selectTokens(Value), cat(Replacement))}, Result)
                                        : std::nullopt;
  report(Call->getExprLoc(), F, Fixes ? *Fixes : std::vector<FixItHint>{});
}

/// `x.index_put_({idx}, values, /*accumulate=*/true)` on a GPU tensor: LibTorch
/// 1.x range-checks the indices on the host (their max and min read with
/// `item()`) before its sort-based accumulation; 2.x checks them with
/// `_assert_async` (issue 43, item 3). Reported only for a unit compiled
/// against 1.x, and only when accumulate is a constant true.
void IndexPutCheck::checkAccumulate(const CXXMemberCallExpr *Call, const Expr *Object, ASTContext &Ctx) {
  if (!hasApiTrait("index_put_", ValidatedOnHostBeforeV2))
    return;
  const Expr *Accumulate = Call->getArg(2);
  bool On = false;
  if (isa<CXXDefaultArgExpr>(Accumulate) || Accumulate->isValueDependent() ||
      !Accumulate->EvaluateAsBooleanCondition(On, Ctx) || !On)
    return;
  VersionInUse Version = libTorchVersion(Ctx);
  if (Version.Version.Major >= FirstMajorValidatingOnDevice)
    return;
  // A boolean mask is expanded with nonzero() (a wait of its own); CPU indices
  // are reported above as a blocking copy.
  std::vector<const Expr *> Indices = indexTensors(Call);
  if (Indices.empty())
    return;
  for (const Expr *Index : Indices)
    if (elementKind(analysis(Ctx), Index) == ElementKind::Bool ||
        oracle(Ctx).tensorPlacement(Index) == Placement::Cpu)
      return;
  Placement Target = oracle(Ctx).tensorPlacement(Object);
  Finding F;
  F.What = "`" + calleeName(Call).str() + "` with `accumulate=true` on " + tensorPhrase(Target) +
           " range-checks the indices on the host (their max and min read with `item()`) in " +
           Version.Phrase + ", so the host waits for the GPU";
  F.Use.Kind = Dependency::False;
  F.Use.Reason = "the result does not need the host: only LibTorch's range check reads the indices";
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Call);
  F.Remedy = "with one 1-D index tensor on dimension 0 and values of the indexed shape, "
             "`x.index_add_(0, idx, values)` accumulates without the host check (its atomic adds are "
             "not deterministic); LibTorch 2.x checks the range on the device";
  report(Call->getExprLoc(), F);
}

TORCH_SYNC_CHECK_FACTORY(IndexPutCheck)

} // namespace torch_syncfree
