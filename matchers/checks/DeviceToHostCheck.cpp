#include "DeviceToHostCheck.h"
#include "CopyCalls.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

void DeviceToHostCheck::registerMatchers(MatchFinder *Finder) {
  using namespace matchers;
  Finder->addMatcher(tensorMethodCall(hub(), "cpu", "to").bind("call"), this);
}

void DeviceToHostCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CXXMemberCallExpr>("call");
  const auto *Object = Result.Nodes.getNodeAs<Expr>("object");
  ASTContext &Ctx = *Result.Context;
  DeviceOracle &Oracle = oracle(Ctx);
  StringRef Method = calleeName(Call);
  std::string Spelled = "`cpu()`";
  if (Method == "to") {
    if (!isBlockingCopyToHost(Call, Oracle, Ctx))
      return;
    Spelled = "`to(<CPU>)`";
  }
  Placement Where = Oracle.tensorPlacement(Object);
  if (!mayBeOnGpu(Where))
    return;

  Finding F;
  F.What = Spelled + " on " + tensorPhrase(Where) +
           " copies it to the host and waits for all queued GPU work";
  F.Use = classifier(Ctx).classify(Call);
  F.Remedy = F.Use.Kind == Dependency::False
                 ? "do the work on the device, or copy after the step or at a log interval"
                 : "copy once, later: into pinned memory with `non_blocking=true` and one "
                   "synchronization before the host reads it";
  report(Call->getExprLoc(), F);
}

TORCH_SYNC_CHECK_FACTORY(DeviceToHostCheck)

} // namespace torch_syncfree
