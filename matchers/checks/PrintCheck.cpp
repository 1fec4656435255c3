#include "CatalogChecks.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

void PrintCheck::registerMatchers(MatchFinder *Finder) {
  using namespace matchers;
  Finder->addMatcher(tensorMethodCall(hub(), "print").bind("call"), this);
  Finder->addMatcher(cxxOperatorCallExpr(hasOverloadedOperatorName("<<"),
                                         hasArgument(1, tensorExpr().bind("object")), userCode(hub()))
                         .bind("call"),
                     this);
}

void PrintCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CallExpr>("call");
  const auto *Object = Result.Nodes.getNodeAs<Expr>("object");
  ASTContext &Ctx = *Result.Context;
  if (!isInTorchNamespace(Call->getDirectCallee()))
    return;
  Placement Where = oracle(Ctx).tensorPlacement(Object);
  if (!mayBeOnGpu(Where))
    return;
  Finding F;
  F.Subject = Where == Placement::Unknown ? Object : nullptr;
  F.What = "printing " + tensorPhrase(Where) + " copies its values to the host and waits for the GPU";
  F.Use.Kind = Dependency::False;
  F.Use.Reason = "the values are only logged";
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Call);
  classifier(Ctx).noteLogInterval(F.Use, Call);
  F.Remedy = "print after the step or at a log interval";
  report(isa<CXXOperatorCallExpr>(Call) ? Call->getExprLoc() : Call->getExprLoc(), F);
}

TORCH_SYNC_CHECK_FACTORY(PrintCheck)

} // namespace torch_syncfree
