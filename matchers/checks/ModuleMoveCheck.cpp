#include "CatalogChecks.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

// `Module::to(device[, dtype], non_blocking)`: LibTorch copies every parameter
// and buffer with Tensor::to, a blocking copy each (the H200 run of issue 26
// counted one sync per parameter). Called through the holder (`model->to(d)`)
// or on the module itself. The dtype-only overload moves nothing between
// devices and is not matched.
void ModuleMoveCheck::registerMatchers(MatchFinder *Finder) {
  using namespace matchers;
  // torch::jit::Module (a loaded TorchScript model: `module.to(torch::kCUDA)`
  // after torch::jit::load) moves its parameters the same way.
  // Off (the default): nothing to match. --profile sets the option.
  if (!ReportModuleMoves)
    return;
  auto Module = cxxRecordDecl(isSameOrDerivedFrom(cxxRecordDecl(hasAnyName("::torch::nn::Module", "::torch::jit::Module"))));
  Finder->addMatcher(
      cxxMemberCallExpr(callee(cxxMethodDecl(hasName("to"), ofClass(Module),
                                             hasParameter(0, hasType(hasUnqualifiedDesugaredType(
                                                                 recordType(hasDeclaration(namedDecl(
                                                                     hasName("::c10::Device"))))))))),
                        userCode(hub()))
          .bind("call"),
      this);
}

void ModuleMoveCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CXXMemberCallExpr>("call");
  ASTContext &Ctx = *Result.Context;
  if (Call->getNumArgs() < 1)
    return;
  Finding F;
  F.What = "`to(<device>)` on a module copies each of its parameters and buffers with a "
           "blocking copy (one sync per tensor)";
  F.Use.Kind = Dependency::False;
  F.Use.Reason = "the host does not need the copies; they run once, as set-up";
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Call);
  F.Remedy = F.Use.LoopLine ? "move the module once, before the loop (later calls copy nothing)"
                            : "nothing to change for a one-time move; build and move the module "
                              "before the timed part of the program";
  F.Facts.ModuleMove = true; // a one-time cost: --profile labels, never reports, it unless asked
  report(Call->getExprLoc(), F);
}

TORCH_SYNC_CHECK_FACTORY(ModuleMoveCheck)

} // namespace torch_syncfree
