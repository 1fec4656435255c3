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

void TensorFactoryCheck::registerMatchers(MatchFinder *Finder) {
  Finder->addMatcher(callExpr(callee(functionDecl(hasName("tensor"))), argumentCountIs(2),
                              matchers::userCode(hub()))
                         .bind("call"),
                     this);
}

/// The values argument is a list (braced list, vector, ArrayRef), not one scalar.
static bool isListOfValues(const Expr *Values) {
  const Expr *E = Values->IgnoreImplicit();
  while (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) {
    if (Construct->getNumArgs() != 1)
      break;
    E = Construct->getArg(0)->IgnoreImplicit();
  }
  if (isa<CXXStdInitializerListExpr, InitListExpr>(E))
    return true;
  return !E->getType()->isArithmeticType();
}

void TensorFactoryCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CallExpr>("call");
  ASTContext &Ctx = *Result.Context;
  if (!isInTorchNamespace(Call->getDirectCallee()) || isa<CXXMemberCallExpr>(Call))
    return;
  const Expr *Values = Call->getArg(0);
  const Expr *Options = Call->getArg(1);
  if (isa<CXXDefaultArgExpr>(Options) || !isListOfValues(Values))
    return;
  std::optional<Placement> Target = oracle(Ctx).devicePlacement(Options);
  if (!Target || !mayBeOnGpu(*Target))
    return;

  Finding F;
  F.What = "`torch::tensor(<list>, <GPU options>)` builds the values on the host and copies "
           "them to the GPU with a blocking copy";
  F.Use.Kind = Dependency::False;
  F.Use.Reason = "the host does not need to wait for the copy";
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Call);
  F.Remedy = "build it on the CPU with the same dtype, then `.to(device, /*non_blocking=*/true)`";

  // Spelled options, without their implicit TensorOptions conversion.
  const Expr *Spelled = Options->IgnoreImplicit();
  while (const auto *Converted = dyn_cast<CXXConstructExpr>(Spelled)) {
    if (isa<CXXTemporaryObjectExpr>(Converted) || Converted->getNumArgs() != 1)
      break;
    Spelled = Converted->getArg(0)->IgnoreImplicit();
  }
  std::vector<ASTEdit> Edits;
  const SourceManager &SM = Ctx.getSourceManager();
  const LangOptions &LO = Ctx.getLangOpts();
  SourceLocation AfterCall = Lexer::getLocForEndOfToken(Call->getRParenLoc(), 0, SM, LO);
  std::string OptionsText = sourceText(Ctx, Spelled);
  std::string Prefix = torchNamespacePrefix(Ctx);
  // `opts.device(D)` whose `opts` names no device, or `torch::device(D)`: keep the
  // rest of the options and move to D.
  const Expr *DeviceArg = nullptr, *OtherOptions = nullptr;
  if (const auto *Chain = dyn_cast<CXXMemberCallExpr>(Spelled)) {
    if (calleeName(Chain) == "device" && explicitArgCount(Chain) == 1 &&
        isTensorOptionsType(Chain->getImplicitObjectArgument()->getType()) &&
        !oracle(Ctx).devicePlacement(Chain->getImplicitObjectArgument())) {
      DeviceArg = Chain->getArg(0);
      OtherOptions = Chain->getImplicitObjectArgument();
    }
  } else if (const auto *Free = dyn_cast<CallExpr>(Spelled)) {
    if (calleeName(Free) == "device" && Free->getNumArgs() == 1)
      DeviceArg = Free->getArg(0);
  }
  // The rewrite: the options argument dropped or replaced, `.to(<device>, nb)` appended.
  std::optional<std::string> MoveTo, NewOptions;
  bool DropOptions = false;
  if (DeviceArg && isSideEffectFree(Spelled)) {
    MoveTo = sourceText(Ctx, ignoreWrappers(DeviceArg)->IgnoreImplicit());
    if (OtherOptions)
      NewOptions = sourceText(Ctx, OtherOptions->IgnoreImplicit());
    else
      DropOptions = true;
  } else if (isDeviceType(Spelled->getType())) {
    // torch::tensor(v, torch::kCUDA) -> torch::tensor(v).to(torch::kCUDA, true)
    MoveTo = OptionsText;
    DropOptions = true;
  } else if (isTensorOptionsType(Spelled->getType()) && isSideEffectFree(Spelled)) {
    // Same options with a CPU device, then an asynchronous move to their device.
    std::string Postfix = asPostfix(Ctx, Spelled);
    bool RequiresGrad = OptionsText.find("requires_grad") != std::string::npos ||
                        (isa<DeclRefExpr>(Spelled) && !cast<DeclRefExpr>(Spelled)
                                                           ->getDecl()
                                                           ->getType()
                                                           .isConstQualified());
    if (!RequiresGrad) {
      NewOptions = Postfix + ".device(" + Prefix + "kCPU)";
      MoveTo = Postfix + ".device()";
    }
  }
  if (MoveTo) {
    if (DropOptions) {
      SourceLocation AfterValues = Lexer::getLocForEndOfToken(Values->getEndLoc(), 0, SM, LO);
      Edits.push_back(changeTo(
          selectRange(CharSourceRange::getCharRange(
              AfterValues, Lexer::getLocForEndOfToken(Options->getEndLoc(), 0, SM, LO))),
          cat("")));
    } else if (NewOptions) {
      Edits.push_back(changeTo(selectTokens(Spelled), cat(*NewOptions)));
    }
    Edits.push_back(insertBefore(selectPoint(AfterCall),
                                 cat(".to(" + *MoveTo + ", /*non_blocking=*/true)")));
  }
  if (std::string NoGain = noGainReason(Ctx, {Call}); !NoGain.empty() && !Edits.empty()) {
    F.Remedy += " (no fix: " + NoGain + ")";
    Edits.clear();
  }
  std::optional<std::vector<FixItHint>> Fixes;
  if (!Edits.empty())
    Fixes = fixItsFor(Edits, Result);
  report(Call->getBeginLoc(), F, Fixes ? *Fixes : std::vector<FixItHint>{});
}

TORCH_SYNC_CHECK_FACTORY(TensorFactoryCheck)

} // namespace torch_syncfree
