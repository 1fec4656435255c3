#include "ApiFacts.h"
#include "CatalogChecks.h"
#include "TensorFacts.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/Tooling/Transformer/RangeSelector.h"
#include "clang/Tooling/Transformer/Stencil.h"

using namespace clang;
using namespace clang::ast_matchers;
using namespace clang::transformer;

namespace torch_syncfree {

void MaskIndexCheck::registerMatchers(MatchFinder *Finder) {
  using namespace matchers;
  Finder->addMatcher(tensorMethodCall(hub(), "index", "masked_select").bind("call"), this);
  Finder->addMatcher(callExpr(callee(functionDecl(hasName("masked_select"))),
                              unless(cxxMemberCallExpr()), hasArgument(0, expr().bind("object")),
                              userCode(hub()))
                         .bind("call"),
                     this);
}

/// The one tensor inside `{...}` of `index({t})`, or the mask of masked_select.
static const Expr *maskArgument(const CallExpr *Call) {
  if (calleeName(Call) == "masked_select")
    return Call->getNumArgs() >= 1 ? Call->getArg(isa<CXXMemberCallExpr>(Call) ? 0 : 1) : nullptr;
  if (Call->getNumArgs() != 1)
    return nullptr;
  auto Elements = indexListElements(Call);
  if (!Elements || Elements->size() != 1)
    return nullptr;
  const Expr *Index = ignoreWrappers(Elements->front());
  return Index && isTensorType(Index->getType()) ? Index : nullptr;
}

/// The local variable \p Selection initialises when its every use is a full
/// `sum()` or `mean()` (nothing else reads the selection's shape); else nullptr.
/// Whether \p E, applied to every element of a tensor with host scalars only
/// (`x + 1`, `x.to(torch::kDouble)`, `x.reciprocal()`), keeps elements apart:
/// a sum of it over a selection is the sum over the whole tensor of it masked.
static bool isElementwiseOfOne(const Expr *Operand, const Stmt *E) {
  auto HostOnly = [](const Expr *Arg) { return !isTensorType(Arg->getType()); };
  if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(E)) {
    OverloadedOperatorKind K = Op->getOperator();
    return Op->getNumArgs() == 2 && isInTorchNamespace(Op->getDirectCallee()) &&
           ignoreWrappers(Op->getArg(0)) == ignoreWrappers(Operand) && HostOnly(Op->getArg(1)) &&
           (K == OO_Plus || K == OO_Minus || K == OO_Star || K == OO_Slash);
  }
  const auto *Call = dyn_cast_or_null<CXXMemberCallExpr>(E);
  return Call && isInTorchNamespace(Call->getDirectCallee()) &&
         ignoreWrappers(Call->getImplicitObjectArgument()) == ignoreWrappers(Operand) &&
         isElementwiseMethod(calleeName(Call)) && llvm::all_of(Call->arguments(), HostOnly);
}

/// The variable a selection is kept in, when every use of it is a full sum or
/// mean (`auto kept = x.index({m}); return kept.mean().item<double>();`), or a
/// full sum of elementwise functions of it with host scalars (`(kept + 1)
/// .reciprocal().sum()`: \p Elementwise set); nullptr otherwise.
static const VarDecl *onlyReducedVariable(TranslationUnitAnalysis &TU, const Expr *Selection,
                                          bool &Elementwise) {
  ASTContext &Ctx = TU.context();
  const VarDecl *Var = initialisedVariable(Ctx, Selection);
  const auto *FD = Var ? dyn_cast_or_null<FunctionDecl>(Var->getParentFunctionOrMethod()) : nullptr;
  if (!Var || !FD || !FD->getBody() || Var->getType()->isReferenceType())
    return nullptr;
  auto Refs = TU.referencesTo(*FD->getBody(), Var);
  if (Refs.empty())
    return nullptr;
  for (const DeclRefExpr *Ref : Refs) {
    const Expr *Operand = Ref;
    const Stmt *Use = consumerOf(Ctx, Operand);
    for (unsigned Depth = 0; Depth < 8 && isElementwiseOfOne(Operand, Use); ++Depth) {
      Operand = cast<Expr>(Use);
      Use = consumerOf(Ctx, Operand);
      Elementwise = true;
    }
    const auto *Reduce = dyn_cast_or_null<CXXMemberCallExpr>(Use);
    StringRef Name = Reduce ? calleeName(Reduce) : "";
    // A mean of an elementwise function would need the count: sums only then.
    if (!Reduce || ignoreWrappers(Reduce->getImplicitObjectArgument()) != ignoreWrappers(Operand) ||
        explicitArgCount(Reduce) != 0 || !(Name == "sum" || (Name == "mean" && Operand == Ref)))
      return nullptr;
  }
  return Var;
}

void MaskIndexCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CallExpr>("call");
  const auto *Object = Result.Nodes.getNodeAs<Expr>("object");
  ASTContext &Ctx = *Result.Context;
  if (!isInTorchNamespace(Call->getDirectCallee()))
    return;
  const Expr *Mask = maskArgument(Call);
  if (!Mask)
    return;
  ElementKind Kind =
      calleeName(Call) == "masked_select" ? ElementKind::Bool : elementKind(analysis(Ctx), Mask);
  if (Kind == ElementKind::Integer || Kind == ElementKind::Floating)
    return; // integer gathers keep their shape (host indices: torch-sync-index-put)
  Placement Where = oracle(Ctx).tensorPlacement(Object);
  if (!mayBeOnGpu(Where))
    return;

  Finding F;
  F.Subject = Where == Placement::Unknown ? Object : nullptr;
  bool Sure = Kind == ElementKind::Bool;
  F.What = std::string(Sure ? "selecting with a boolean mask" : "`index({t})` with a tensor that may be a boolean mask") +
           " on " + tensorPhrase(Where) +
           " makes the result's size depend on GPU data, so the host waits to learn it";
  // A full sum or mean of the selection has a fixed-shape equivalent.
  const auto *Reduction = dyn_cast_or_null<CXXMemberCallExpr>(consumerOf(Ctx, Call));
  StringRef ReductionName = Reduction ? calleeName(Reduction) : "";
  bool Reducible = Reduction && Reduction->getImplicitObjectArgument()->IgnoreImplicit() &&
                   explicitArgCount(Reduction) == 0 &&
                   (ReductionName == "sum" || ReductionName == "mean");
  // The same through a variable whose every use is such a reduction:
  // `auto kept = x.index({m}); return kept.mean().item<double>();`.
  std::string Through;
  bool Elementwise = false;
  if (!Reducible)
    if (const VarDecl *Var = onlyReducedVariable(analysis(Ctx), Call, Elementwise))
      Through = "through `" + Var->getNameAsString() + "`, ";
  bool ReducedLater = !Through.empty();
  // Only the selection's count is read, and the host does not need it (`hits +=
  // x.masked_select(m).numel()` summed into a metric): the mask counts it on the device.
  std::optional<CountReads> Counted;
  if (!Reducible && !ReducedLater)
    Counted = classifier(Ctx).classifyCountReads(Call);
  if (Counted && Counted->Verdict.Kind != Dependency::False)
    Counted.reset();
  F.Use.Kind = Reducible || ReducedLater ? Dependency::False : Dependency::True;
  F.Use.Reason =
      Reducible ? "only the selection's `" + ReductionName.str() + "()` is used"
      : ReducedLater
          ? Through + (Elementwise ? "only full sums of elementwise functions of the selection are used"
                                   : "only full sums or means of the selection are used")
          : "the selection's size shapes what follows";
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Call);
  F.Remedy = Elementwise
                 ? "apply those functions to the whole tensor and sum `torch::where(mask, f(x), 0)` instead: "
                   "same value, fixed shape"
             : Reducible || ReducedLater
                 ? "reduce with `torch::where(mask, x, 0)` instead: same value, fixed shape"
                 : "keep shapes fixed with `torch::where(mask, x, fill)` and reduce or "
                   "mask later";
  if (Counted) {
    unsigned LoopLine = F.Use.LoopLine;
    F.Use = Counted->Verdict;
    F.Use.LoopLine = LoopLine;
    F.Use.Reason = countedReason(*Counted, "the selection");
    // masked_select counts the mask broadcast to x's shape; index({mask}) selects
    // rows: numel() also counts the elements of each row.
    std::string Caveat;
    if (calleeName(Call) == "masked_select")
      Caveat = " (the same number when the mask has `" + stableSpelling(Ctx, Object->IgnoreImplicit(), "x") +
               "`'s shape)";
    else if (Counted->Numel)
      Caveat = " (times the elements of each selected row when the mask has fewer dimensions than `" +
               stableSpelling(Ctx, Object->IgnoreImplicit(), "x") + "`)";
    F.Remedy = countRemedy(stableSpelling(Ctx, Mask, "mask") + ".sum()", Caveat, F.Use);
  }
  if (!Sure)
    F.Remedy += " (if `" + sourceText(Ctx, Mask) + "` is a boolean mask)";

  std::vector<FixItHint> Fixes;
  std::string Prefix = torchNamespacePrefix(Ctx);
  bool HasScalarWhere = torchDeclares(Ctx, "at", "where", 3, 2, "c10::Scalar");
  if (Sure && Reducible && HasScalarWhere && isSideEffectFree(Object) && isSideEffectFree(Mask)) {
    std::string Where = Prefix + "where(" + sourceText(Ctx, Mask) + ", " +
                        sourceText(Ctx, Object->IgnoreImplicit()) + ", 0).sum()";
    std::string Replacement =
        ReductionName == "sum" ? Where
                               : "(" + Where + " / " + asPostfix(Ctx, Mask) + ".sum())";
    // The reduction node is not bound by the matcher: build the edit from its range.
    auto Bound = fixItsFor({changeTo(selectTokens(Reduction), cat(Replacement))}, Result);
    if (Bound)
      Fixes = *Bound;
  }
  report(Call->getExprLoc(), F, Fixes);
}

TORCH_SYNC_CHECK_FACTORY(MaskIndexCheck)

} // namespace torch_syncfree
