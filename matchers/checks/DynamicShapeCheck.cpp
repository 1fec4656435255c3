#include "ApiFacts.h"
#include "CatalogChecks.h"
#include "SyncCalls.h"
#include "TensorFacts.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/Tooling/Transformer/RangeSelector.h"
#include "clang/Tooling/Transformer/Stencil.h"
#include "llvm/ADT/StringSwitch.h"

using namespace clang;
using namespace clang::ast_matchers;
using namespace clang::transformer;

namespace torch_syncfree {

/// `nonzero(x).numel() > 0`, `x.nonzero().size(0) == 0`, `if (x.nonzero().numel())`:
/// the index list is only tested for emptiness.
struct EmptinessTest {
  const Expr *Whole;   ///< the boolean expression to replace
  bool NonEmpty;       ///< true: "has a non-zero element"
  bool ViaNumel;       ///< numel() (0 for a 0-dim input) rather than size(0)
};

static std::optional<EmptinessTest> emptinessTest(ASTContext &Ctx, const CallExpr *Nonzero) {
  const auto *Size = dyn_cast_or_null<CXXMemberCallExpr>(consumerOf(Ctx, Nonzero));
  if (!Size || ignoreWrappers(Size->getImplicitObjectArgument()) != Nonzero)
    return std::nullopt;
  bool ViaNumel = calleeName(Size) == "numel" && Size->getNumArgs() == 0;
  std::optional<llvm::APSInt> Dim =
      Size->getNumArgs() == 1 ? Size->getArg(0)->getIntegerConstantExpr(Ctx) : std::nullopt;
  if (!ViaNumel && !(calleeName(Size) == "size" && Dim && *Dim == 0))
    return std::nullopt;
  const Stmt *Parent = ancestorSkipping<ParenExpr>(Ctx, Size).get<Stmt>();
  if (const auto *Cast = dyn_cast_or_null<ImplicitCastExpr>(Parent);
      Cast && Cast->getCastKind() == CK_IntegralToBoolean)
    return EmptinessTest{Size, true, ViaNumel};
  while (const auto *Cast = dyn_cast_or_null<ImplicitCastExpr>(Parent))
    Parent = ancestorSkipping<ParenExpr>(Ctx, Cast).get<Stmt>();
  const auto *Compare = dyn_cast_or_null<BinaryOperator>(Parent);
  if (!Compare || !Compare->isComparisonOp())
    return std::nullopt;
  bool SizeOnLeft = ignoreWrappers(Compare->getLHS()) == Size;
  const Expr *Other = SizeOnLeft ? Compare->getRHS() : Compare->getLHS();
  std::optional<llvm::APSInt> Bound = Other->IgnoreParenImpCasts()->getIntegerConstantExpr(Ctx);
  if (!Bound)
    return std::nullopt;
  BinaryOperatorKind Op = Compare->getOpcode();
  if (!SizeOnLeft) // `0 < n` reads as `n > 0`
    Op = BinaryOperator::reverseComparisonOp(Op);
  int64_t B = Bound->getExtValue();
  std::optional<bool> NonEmpty;
  if ((Op == BO_GT && B == 0) || (Op == BO_NE && B == 0) || (Op == BO_GE && B == 1))
    NonEmpty = true;
  else if ((Op == BO_EQ && B == 0) || (Op == BO_LT && B == 1) || (Op == BO_LE && B == 0))
    NonEmpty = false;
  if (!NonEmpty)
    return std::nullopt;
  return EmptinessTest{Compare, *NonEmpty, ViaNumel};
}

void DynamicShapeCheck::registerMatchers(MatchFinder *Finder) {
  llvm::ArrayRef<StringRef> Ops = namesWithTrait(DataDependentShape);
  std::vector<StringRef> Names(Ops.begin(), Ops.end());
  Names.push_back("where"); // the one-argument form, told apart in check()
  Finder->addMatcher(
      callExpr(callee(functionDecl(hasAnyName(Names))), matchers::userCode(hub())).bind("call"),
      this);
}

void DynamicShapeCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CallExpr>("call");
  ASTContext &Ctx = *Result.Context;
  const FunctionDecl *FD = Call->getDirectCallee();
  if (!isInTorchNamespace(FD))
    return;
  StringRef Name = calleeName(Call);
  const Expr *Subject = calleeObject(Call);
  unsigned Written = explicitArgCount(Call);
  if (!Subject && Call->getNumArgs() > 0)
    Subject = Call->getArg(0);
  if (!Subject || !isTensorType(Subject->getType()))
    return;
  unsigned OwnArgs = isa<CXXMemberCallExpr>(Call) ? Written : (Written ? Written - 1 : 0);
  // where(cond, a, b) keeps the shape; only the one-argument form is a nonzero.
  if (Name == "where" && OwnArgs != 0)
    return;
  // repeat_interleave with output_size, histc with an explicit range: no wait.
  if (Name == "repeat_interleave") {
    int Index = parameterIndex(Call, "output_size");
    if (Index >= 0 && static_cast<unsigned>(Index) < Call->getNumArgs() &&
        !isa<CXXDefaultArgExpr>(Call->getArg(Index)))
      return;
  }
  if (Name == "histc") {
    int MinIndex = parameterIndex(Call, "min"), MaxIndex = parameterIndex(Call, "max");
    auto Explicit = [&](int I) {
      return I >= 0 && static_cast<unsigned>(I) < Call->getNumArgs() &&
             !isa<CXXDefaultArgExpr>(Call->getArg(I));
    };
    if (Explicit(MinIndex) || Explicit(MaxIndex))
      return;
  }
  Placement Where = oracle(Ctx).tensorPlacement(Subject);
  if (!mayBeOnGpu(Where))
    return;
  Finding F;
  F.Subject = Where == Placement::Unknown ? Subject : nullptr;
  F.What = "`" + Name.str() + "` on " + tensorPhrase(Where) +
           " has an output size that depends on the data, so the host waits for the GPU";
  F.Use.Kind = Dependency::True;
  F.Use.Reason = "the output's size is computed from GPU values";
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Call);
  bool HasNonzeroStatic = torchDeclares(Ctx, "at", "nonzero_static");
  F.Remedy = llvm::StringSwitch<std::string>(Name)
                 .Cases({"nonzero", "argwhere", "where"},
                        HasNonzeroStatic
                            ? "with a known bound use `at::nonzero_static(x, size, fill)`; "
                              "as a guard use `.any()` kept on the device"
                            : "as a guard use `.any()` kept on the device; LibTorch 2.x has "
                              "`nonzero_static` for a known bound")
                 .Case("repeat_interleave", "pass `output_size` when the total is known")
                 .Case("histc", "pass an explicit range (`min`, `max`)")
                 .Case("bincount", "use `scatter_add_` into a tensor of the known number of bins")
                 .Default("keep shapes fixed (masks, `torch::where`) where the host does not "
                          "need the size");
  bool IndexList = Name == "nonzero" || Name == "argwhere";
  std::optional<EmptinessTest> Test = IndexList ? emptinessTest(Ctx, Call) : std::nullopt;
  // Only the number of non-zero elements is read, and the host does not need it
  // (`found += nonzero(m).size(0)` summed into a metric): count_nonzero() counts them
  // on the device, without an index list.
  if (IndexList && !Test)
    if (std::optional<CountReads> Counted = classifier(Ctx).classifyCountReads(Call);
        Counted && Counted->Verdict.Kind == Dependency::False) {
      unsigned LoopLine = F.Use.LoopLine;
      F.Use = Counted->Verdict;
      F.Use.LoopLine = LoopLine;
      F.Use.Reason = countedReason(*Counted, "the index list");
      std::string X = stableSpelling(Ctx, Subject, "mask");
      F.Remedy = Counted->Numel ? countRemedy(X + ".count_nonzero() * " + X + ".dim()",
                                              " (the index list's `numel()`)", F.Use)
                                : countRemedy(X + ".count_nonzero()", "", F.Use);
    }
  std::vector<FixItHint> Fixes;
  if (Test) {
    // numel() of nonzero(x) is 0 for a 0-dim x whatever its value, so that form
    // keeps a dim() test, which repeats x: only a plain name may be repeated.
    const Expr *Plain = ignoreWrappers(Subject);
    bool Repeatable = isa<DeclRefExpr>(Plain) || (isa<MemberExpr>(Plain) && isSideEffectFree(Plain));
    if (!Test->ViaNumel || Repeatable) {
      std::string X = asPostfix(Ctx, Subject);
      // The one bool stays a sync, on purpose: marked so that no check
      // reports the fix's own read (a second --fix run changes nothing).
      std::string Any = X + ".any().item<bool>()" + insertedSyncMarker("one bool, no index list");
      std::string Replacement;
      if (!Test->ViaNumel)
        Replacement = Test->NonEmpty ? Any : "!" + Any;
      else
        Replacement = Test->NonEmpty ? "(" + X + ".dim() > 0 && " + Any + ")"
                                     : "(" + X + ".dim() == 0 || !" + Any + ")";
      if (auto Edits = fixItsFor({changeTo(selectTokens(Test->Whole), cat(Replacement))}, Result))
        Fixes = *Edits;
      F.Remedy = "this only tests for emptiness: `" + X +
                 ".any()` answers on the device without building the index list (the host "
                 "still reads one bool unless the decision moves to the device)";
    }
  }
  report(Call->getExprLoc(), F, Fixes);
}

TORCH_SYNC_CHECK_FACTORY(DynamicShapeCheck)

} // namespace torch_syncfree
