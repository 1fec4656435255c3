#include "CatalogChecks.h"
#include "TensorFacts.h"
#include "TorchApi.h"

#include "llvm/ADT/StringSwitch.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

void DynamicShapeCheck::registerMatchers(MatchFinder *Finder) {
  Finder->addMatcher(
      callExpr(callee(functionDecl(hasAnyName("nonzero", "argwhere", "where", "unique", "_unique",
                                              "_unique2", "unique_consecutive", "unique_dim",
                                              "repeat_interleave", "bincount", "histc"))),
               matchers::userCode())
          .bind("call"),
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
  report(Call->getExprLoc(), F);
}

} // namespace torch_syncfree
