#include "ItemCheck.h"
#include "CatalogChecks.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

void ItemCheck::registerMatchers(MatchFinder *Finder) {
  using namespace matchers;
  Finder->addMatcher(tensorMethodCall(hub(), "item").bind("call"), this);
  Finder->addMatcher(
      callExpr(callee(functionDecl(hasName("_local_scalar_dense"))),
               hasArgument(0, expr().bind("object")), userCode(hub()))
          .bind("call"),
      this);
}

void ItemCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CallExpr>("call");
  const auto *Object = Result.Nodes.getNodeAs<Expr>("object");
  if (!Call || !Object || !isInTorchNamespace(Call->getDirectCallee()))
    return;
  ASTContext &Ctx = *Result.Context;
  if (isMarkedInsertedSync(Call, Ctx))
    return; // a read a fix put at a log point on purpose
  // item<bool>() is torch-sync-host-bool's: one finding per site.
  if (const TemplateArgumentList *Args = Call->getDirectCallee()->getTemplateSpecializationArgs())
    if (Args->size() == 1 && Args->get(0).getKind() == TemplateArgument::Type &&
        Args->get(0).getAsType()->isBooleanType())
      return;
  Placement Where = oracle(Ctx).tensorPlacement(Object);
  if (!mayBeOnGpu(Where))
    return;

  // Sites a more specific check reports, with a better remedy, are left to it
  // (Checks.def's precedence; _local_scalar_dense is this check's alone).
  if (syncSiteKindOf(Call) && !ownsSite(Ctx, Call))
    return;
  UseVerdict Use = classifier(Ctx).classify(Call);

  Finding F;
  std::string Callee = isa<CXXMemberCallExpr>(Call) ? "`item()`" : "`_local_scalar_dense`";
  F.What = Callee + " on " + tensorPhrase(Where) +
           " copies the value to the host and waits for all queued GPU work";
  F.Use = Use;
  F.Remedy = F.Use.Kind == Dependency::False
                 ? "keep the value on the device as a 0-dim tensor and read it after the "
                   "step or at a log interval"
                 : "if the host must decide, decide on the device instead (`torch::where`, "
                   "masks) or read the value less often";
  report(Call->getExprLoc(), F);
}

TORCH_SYNC_CHECK_FACTORY(ItemCheck)

} // namespace torch_syncfree
