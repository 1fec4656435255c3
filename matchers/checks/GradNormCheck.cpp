#include "CatalogChecks.h"
#include "TensorFacts.h"
#include "TorchApi.h"
#include "fixes/ClipGradNorm.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/Tooling/Transformer/RangeSelector.h"
#include "clang/Tooling/Transformer/Stencil.h"

using namespace clang;
using namespace clang::ast_matchers;
using namespace clang::transformer;

namespace torch_syncfree {

void GradNormCheck::registerMatchers(MatchFinder *Finder) {
  Finder->addMatcher(callExpr(callee(functionDecl(hasName("clip_grad_norm_"))),
                              matchers::userCode(hub()))
                         .bind("call"),
                     this);
}

void GradNormCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CallExpr>("call");
  ASTContext &Ctx = *Result.Context;
  const FunctionDecl *FD = Call->getDirectCallee();
  if (!isInTorchNamespace(FD) || Call->getNumArgs() < 2)
    return;
  // Parameters come from a module: their device is not known here.
  if (!mayBeOnGpu(Placement::Unknown))
    return;
  Finding F;
  F.What = "`clip_grad_norm_` returns the total norm as a host `double`, so it waits for the "
           "backward pass";
  F.Use = classifier(Ctx).classify(Call);
  F.Remedy = "compute the norm and scale on the device (a 0-dim norm, `clamp_max`, `mul_`); "
             "read the norm only when it is logged";

  // An accumulated norm (`sum += clip_grad_norm_(...)` in a loop) is
  // torch-sync-deferred-accumulate's: it composes this rewrite with a device sum.
  if (!ownsSite(Ctx, Call))
    return;
  std::vector<FixItHint> Fixes;
  if (isDiscarded(Ctx, Call)) {
    std::vector<ASTEdit> Edits;
    if (std::optional<std::string> Clipping = deviceClipGradNorm(Ctx, Call, FusedNorm)) {
      Edits.push_back(changeTo(node("call"), cat(*Clipping)));
      // The helper last: claimed only once the rest of the fix is known to apply.
      if (fixItsFor(Edits, Result) &&
          addClipGradNormHelper(analysis(Ctx), Call, FusedNorm, HelperInEveryFix, Edits))
        if (auto Bound = fixItsFor(Edits, Result))
          Fixes = *Bound;
    }
  } else if (const DeclRefExpr *Use = F.Use.OnlyLogged ? normReadAtLogPoint(analysis(Ctx), Call) : nullptr) {
    // `double norm = clip_grad_norm_(...); ... if (step % N == 0) log(norm);`: the
    // variable holds the 0-dim device norm and the log point reads it.
    std::vector<ASTEdit> Edits;
    if (std::optional<std::string> Clipping = deviceClipGradNorm(Ctx, Call, FusedNorm)) {
      const auto *Var = cast<VarDecl>(Use->getDecl());
      std::string ReadType = Var->getType()->isSpecificBuiltinType(BuiltinType::Float) ? "float" : "double";
      Edits.insert(Edits.end(), {
          changeTo(charRange(CharSourceRange::getCharRange(Var->getBeginLoc(), Var->getLocation())),
                   cat(torchNamespacePrefix(Ctx) + "Tensor ")),
          changeTo(node("call"), cat(*Clipping)),
          changeTo(selectTokens(Use), cat(Var->getNameAsString() + ".item<" + ReadType + ">()" +
                                          insertedSyncMarker("the norm, read where it is logged")))});
      if (fixItsFor(Edits, Result) &&
          addClipGradNormHelper(analysis(Ctx), Call, FusedNorm, HelperInEveryFix, Edits))
        if (auto Bound = fixItsFor(Edits, Result))
          Fixes = *Bound;
    }
  }
  report(Call->getBeginLoc(), F, Fixes);
}

/// The one read of the variable a clip_grad_norm_ call initialises, when the
/// variable can hold the device norm instead: a local `double`/`float`/`auto`
/// declared alone, never written or referenced through an address afterwards,
/// read once, under an `if` (a log interval) the declaration is not in; else
/// nullptr. Read every iteration, the rewrite would only move the wait.
const DeclRefExpr *GradNormCheck::normReadAtLogPoint(TranslationUnitAnalysis &TU, const CallExpr *Call) {
  ASTContext &Ctx = TU.context();
  const VarDecl *Var = initialisedVariable(Ctx, Call);
  const auto *Function = Var ? dyn_cast_or_null<FunctionDecl>(Var->getParentFunctionOrMethod()) : nullptr;
  if (!Var || !Function || !Function->getBody() || !Var->hasLocalStorage() || isa<ParmVarDecl>(Var) ||
      !Var->getType()->isFloatingType() || Var->getType().isVolatileQualified())
    return nullptr;
  DynTypedNodeList DeclParents = Ctx.getParents(*Var);
  const auto *Declaration = DeclParents.empty() ? nullptr : DeclParents[0].get<DeclStmt>();
  const SourceManager &SM = Ctx.getSourceManager();
  if (!Declaration || !Declaration->isSingleDecl() || Var->getBeginLoc().isMacroID() ||
      !SM.isWrittenInMainFile(Var->getBeginLoc()))
    return nullptr;
  auto Uses = TU.referencesTo(*Function->getBody(), Var);
  if (Uses.size() != 1)
    return nullptr;
  const DeclRefExpr *Use = Uses.front();
  // Read as a value (not assigned, incremented, bound to a reference or captured).
  DynTypedNodeList UseParents = Ctx.getParents(*Use);
  const auto *Read = UseParents.empty() ? nullptr : UseParents[0].get<ImplicitCastExpr>();
  if (!Read || Read->getCastKind() != CK_LValueToRValue || Use->refersToEnclosingVariableOrCapture())
    return nullptr;
  // Under an `if` that does not also hold the declaration.
  const Stmt *Guard = innermostAncestor(Ctx, Use, [](const Stmt *S) { return isa<IfStmt>(S); });
  if (!Guard || SM.isBeforeInTranslationUnit(Guard->getBeginLoc(), Var->getBeginLoc()))
    return nullptr;
  return Use;
}

bool GradNormCheck::removesSite(SyncSiteKind Kind, TranslationUnitAnalysis &TU, const Expr *Site) {
  const auto *Call = dyn_cast<CallExpr>(Site);
  return Kind == SyncSiteKind::GradNormCall && fixesEnabled() && Call && isDiscarded(TU.context(), Call) &&
         deviceClipGradNorm(TU.context(), Call, FusedNorm).has_value();
}

TORCH_SYNC_CHECK_FACTORY(GradNormCheck)

} // namespace torch_syncfree
