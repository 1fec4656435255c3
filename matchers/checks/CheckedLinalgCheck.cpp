#include "CatalogChecks.h"
#include "TensorFacts.h"
#include "TorchApi.h"

#include "llvm/ADT/StringSwitch.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

void CheckedLinalgCheck::registerMatchers(MatchFinder *Finder) {
  Finder->addMatcher(
      callExpr(callee(functionDecl(hasAnyName("linalg_inv", "linalg_cholesky", "linalg_solve",
                                              "inverse", "cholesky", "linalg_ldl_factor",
                                              "linalg_lu_factor", "linalg_inv_ex_checked"))),
               matchers::userCode())
          .bind("call"),
      this);
}

void CheckedLinalgCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CallExpr>("call");
  ASTContext &Ctx = *Result.Context;
  if (!isInTorchNamespace(Call->getDirectCallee()))
    return;
  const Expr *Subject = calleeObject(Call);
  if (!Subject && Call->getNumArgs() > 0)
    Subject = Call->getArg(0);
  if (!Subject || !isTensorType(Subject->getType()))
    return;
  Placement Where = oracle(Ctx).tensorPlacement(Subject);
  if (!mayBeOnGpu(Where))
    return;
  StringRef Name = calleeName(Call);
  std::string Ex = llvm::StringSwitch<std::string>(Name)
                       .Cases({"linalg_inv", "inverse"}, "linalg_inv_ex")
                       .Cases({"linalg_cholesky", "cholesky"}, "linalg_cholesky_ex")
                       .Case("linalg_solve", "linalg_solve_ex")
                       .Case("linalg_ldl_factor", "linalg_ldl_factor_ex")
                       .Case("linalg_lu_factor", "linalg_lu_factor_ex")
                       .Default("");
  Finding F;
  F.What = "`" + Name.str() + "` on " + tensorPhrase(Where) +
           " checks the factorisation on the host, so it waits for the GPU";
  F.Use.Kind = Dependency::False;
  F.Use.Reason = "the result itself does not need the host";
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Call);
  bool Declared = !Ex.empty() && torchDeclares(Ctx, "at", Ex);
  F.Remedy = Declared ? "use `" + Ex + "`, which returns an `info` tensor instead of raising, "
                        "and check `info` later (errors are then no longer raised here)"
                      : "compute without the check (an `_ex` variant) and validate later";
  report(Call->getExprLoc(), F);
}

} // namespace torch_syncfree
