#include "CatalogChecks.h"
#include "TensorFacts.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/Lex/Lexer.h"
#include "clang/Tooling/Transformer/RangeSelector.h"
#include "clang/Tooling/Transformer/Stencil.h"

using namespace clang;
using namespace clang::ast_matchers;
using namespace clang::transformer;

namespace torch_syncfree {

void ScalarIndexCheck::registerMatchers(MatchFinder *Finder) {
  using namespace matchers;
  Finder->addMatcher(tensorMethodCall(hub(), "index").bind("call"), this);
}

void ScalarIndexCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CXXMemberCallExpr>("call");
  const auto *Object = Result.Nodes.getNodeAs<Expr>("object");
  ASTContext &Ctx = *Result.Context;
  if (Call->getNumArgs() != 1)
    return;
  // The single element of `{...}`: a tensor converted to TensorIndex.
  auto Elements = indexListElements(Call);
  if (!Elements || Elements->size() != 1)
    return;
  const Expr *Index = Elements->front();
  if (!isTensorType(Index->getType()) || elementKind(analysis(Ctx), Index) != ElementKind::Integer ||
      !isZeroDim(Index))
    return;
  Placement IndexAt = oracle(Ctx).tensorPlacement(Index);
  if (!mayBeOnGpu(IndexAt) || !mayBeOnGpu(oracle(Ctx).tensorPlacement(Object)))
    return;

  Finding F;
  F.What = "indexing with a 0-dim integer tensor " +
           std::string(IndexAt == Placement::Gpu ? "on the GPU" : "that may be on the GPU") +
           " reads the index on the host (the host waits)";
  F.Use.Kind = Dependency::False;
  F.Use.Reason = "a one-element index tensor selects the same row on the device";
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Call);
  F.Remedy = "index with `t.unsqueeze(0)` and `squeeze(0)` the result";
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation AfterCall = Lexer::getLocForEndOfToken(Call->getRParenLoc(), 0, SM, Ctx.getLangOpts());
  auto Fixes = fixItsFor({changeTo(selectTokens(Index), cat(asPostfix(Ctx, Index) + ".unsqueeze(0)")),
                          insertBefore(selectPoint(AfterCall), cat(".squeeze(0)"))},
                         Result);
  report(Call->getExprLoc(), F, Fixes ? *Fixes : std::vector<FixItHint>{});
}

TORCH_SYNC_CHECK_FACTORY(ScalarIndexCheck)

} // namespace torch_syncfree
