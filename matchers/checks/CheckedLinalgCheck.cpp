#include "ApiFacts.h"
#include "CatalogChecks.h"
#include "TensorFacts.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/Lex/Lexer.h"
#include "clang/Tooling/Transformer/RangeSelector.h"
#include "clang/Tooling/Transformer/Stencil.h"
#include "llvm/ADT/StringSwitch.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

void CheckedLinalgCheck::registerMatchers(MatchFinder *Finder) {
  Finder->addMatcher(
      callExpr(callee(functionDecl(hasAnyName(namesWithTrait(CheckedLinalg)))), matchers::userCode(hub()))
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
  F.Subject = Where == Placement::Unknown ? Subject : nullptr;
  F.What = "`" + Name.str() + "` on " + tensorPhrase(Where) +
           " checks the factorisation on the host, so it waits for the GPU";
  F.Use.Kind = Dependency::False;
  F.Use.Reason = "the result itself does not need the host";
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Call);
  bool Declared = !Ex.empty() && torchDeclares(Ctx, "at", Ex);
  F.Remedy = Declared ? "use `" + Ex + "`, which returns an `info` tensor instead of raising, "
                        "and check `info` later (errors are then no longer raised here)"
                      : "compute without the check (an `_ex` variant) and validate later";
  // With UseExVariants: `auto x = torch::linalg_inv(a);` ->
  //   `auto x_ex = torch::linalg_inv_ex(a);` + `auto x = std::get<0>(x_ex);`
  // keeping `std::get<1>(x_ex)` (info) for a later check. Only free calls whose _ex
  // form returns (result, info), declared alone in their statement.
  std::vector<FixItHint> Fixes;
  bool ResultInfoPair = Name == "linalg_inv" || Name == "linalg_cholesky" || Name == "linalg_solve";
  const VarDecl *Var = nullptr;
  const DeclStmt *Declaration = nullptr;
  if (UseExVariants && Declared && ResultInfoPair && !isa<CXXMemberCallExpr>(Call)) {
    Var = initialisedVariable(Ctx, Call);
    if (Var) {
      DynTypedNodeList Above = Ctx.getParents(*Var);
      Declaration = Above.empty() ? nullptr : Above[0].get<DeclStmt>();
    }
  }
  if (Declaration && Declaration->isSingleDecl() && Var->getName().size()) {
    const SourceManager &SM = Ctx.getSourceManager();
    std::string Holder = Var->getNameAsString() + "_ex";
    unsigned Column = SM.getExpansionColumnNumber(Declaration->getBeginLoc());
    std::string Indent(Column > 0 ? Column - 1 : 0, ' ');
    std::string CallText = sourceText(Ctx, Call);
    size_t NameAt = CallText.find(Name.str() + "(");
    if (NameAt != std::string::npos) {
      CallText.insert(NameAt + Name.size(), "_ex");
      std::string Replacement = "auto " + Holder + " = " + CallText + ";\n" + Indent + "auto " +
                                Var->getNameAsString() + " = std::get<0>(" + Holder + ");";
      if (auto Edits = fixItsFor({transformer::changeTo(selectTokens(Declaration),
                                                        transformer::cat(Replacement))},
                                 Result))
        Fixes = *Edits;
      F.Remedy += "; the fix keeps `std::get<1>(" + Holder + ")` (info) to check later";
    }
  }
  report(Call->getExprLoc(), F, Fixes);
}

TORCH_SYNC_CHECK_FACTORY(CheckedLinalgCheck)

} // namespace torch_syncfree
