// torch-sync-deferred-log: an `item()` inside a loop whose value is only logged
// makes every iteration wait although the printout could come less often. When
// the loop already has a log interval (`if (step % N == 0)`), a note points to it;
// no fix-it is offered either way, since what is printed would change.
#include "CatalogChecks.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

void DeferredLogCheck::registerMatchers(MatchFinder *Finder) {
  Finder->addMatcher(matchers::tensorMethodCall(hub(), "item").bind("call"), this);
}

/// The first `if` with an interval condition anywhere in the loop body.
static const IfStmt *firstIntervalIn(const Stmt *S) {
  if (!S || isa<LambdaExpr>(S))
    return nullptr;
  if (const auto *If = dyn_cast<IfStmt>(S))
    if (isIntervalCondition(If->getCond()))
      return If;
  for (const Stmt *Child : S->children())
    if (const IfStmt *Found = firstIntervalIn(Child))
      return Found;
  return nullptr;
}

bool DeferredLogCheck::claimsSite(SyncSiteKind Kind, TranslationUnitAnalysis &TU, const Expr *Site) {
  const auto *Call = dyn_cast<CXXMemberCallExpr>(Site);
  ASTContext &Ctx = TU.context();
  const Stmt *Loop = Call ? TU.enclosingLoop(Call) : nullptr;
  if (Kind != SyncSiteKind::ItemRead || !Loop || isMarkedInsertedSync(Call, Ctx) ||
      !mayBeOnGpu(TU.oracle().tensorPlacement(Call->getImplicitObjectArgument()->IgnoreParenImpCasts())))
    return false;
  // Read every iteration (not already under a log interval) only to be logged.
  return classifier(Ctx).classify(Call).OnlyLogged && !logIntervalAround(Ctx, Call, Loop);
}

void DeferredLogCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CXXMemberCallExpr>("call");
  const auto *Object = Result.Nodes.getNodeAs<Expr>("object");
  ASTContext &Ctx = *Result.Context;
  const SourceManager &SM = Ctx.getSourceManager();
  if (!ownsSite(Ctx, Call))
    return;
  const Stmt *Loop = analysis(Ctx).enclosingLoop(Call);
  Placement Where = oracle(Ctx).tensorPlacement(Object);
  UseVerdict Use = classifier(Ctx).classify(Call);

  const IfStmt *LoggedUnder = Use.LoggedAt ? logIntervalAround(Ctx, Use.LoggedAt, Loop) : nullptr;
  const IfStmt *Interval = LoggedUnder ? LoggedUnder : firstIntervalIn(Loop);
  Finding F;
  F.Subject = Where == Placement::Unknown ? Object : nullptr;
  F.What = "`item()` on " + tensorPhrase(Where) +
           " waits for the GPU every iteration although its value is only logged";
  F.Use = Use;
  if (LoggedUnder)
    F.Remedy = "it is printed only under the log interval at line " +
               std::to_string(SM.getExpansionLineNumber(LoggedUnder->getBeginLoc())) +
               ": read it inside that `if`";
  else if (Interval)
    F.Remedy = "the loop already has a log interval at line " +
               std::to_string(SM.getExpansionLineNumber(Interval->getBeginLoc())) +
               ": log it there (no fix: what is printed would change)";
  else
    F.Remedy = "log every N iterations (`if (step % N == 0)`), or accumulate on the device "
               "and print after the loop (no fix: what is printed would change)";
  report(Call->getExprLoc(), F);
  if (Interval)
    diag(Interval->getBeginLoc(), "log interval here", DiagnosticIDs::Note);
}

TORCH_SYNC_CHECK_FACTORY(DeferredLogCheck)

} // namespace torch_syncfree
