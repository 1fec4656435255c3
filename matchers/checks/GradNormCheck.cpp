#include "CatalogChecks.h"
#include "TensorFacts.h"
#include "TorchApi.h"

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
  if (isCheckEnabled("torch-sync-deferred-accumulate") && DeferredAccumulateCheck::reportsItem(analysis(Ctx), Call))
    return;
  std::vector<FixItHint> Fixes;
  if (isDiscarded(Ctx, Call)) {
    if (std::optional<std::string> Clipping = deviceClipping(Ctx, Call, /*ReturnNorm=*/false, FusedNorm))
      if (auto Edits = fixItsFor({changeTo(node("call"), cat(*Clipping))}, Result))
        Fixes = *Edits;
  } else if (const DeclRefExpr *Use = F.Use.OnlyLogged ? normReadAtLogPoint(analysis(Ctx), Call) : nullptr) {
    // `double norm = clip_grad_norm_(...); ... if (step % N == 0) log(norm);`: the
    // variable holds the 0-dim device norm and the log point reads it.
    if (std::optional<std::string> Clipping = deviceClipping(Ctx, Call, /*ReturnNorm=*/true, FusedNorm)) {
      const auto *Var = cast<VarDecl>(Use->getDecl());
      std::string ReadType = Var->getType()->isSpecificBuiltinType(BuiltinType::Float) ? "float" : "double";
      std::vector<ASTEdit> Edits{
          changeTo(charRange(CharSourceRange::getCharRange(Var->getBeginLoc(), Var->getLocation())),
                   cat(torchNamespacePrefix(Ctx) + "Tensor ")),
          changeTo(node("call"), cat(*Clipping)),
          changeTo(selectTokens(Use), cat(Var->getNameAsString() + ".item<" + ReadType + ">()" +
                                          insertedSyncMarker("the norm, read where it is logged")))};
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

std::optional<std::string> GradNormCheck::deviceClipping(ASTContext &Ctx, const CallExpr *Call,
                                                         bool ReturnNorm, bool FusedNorm) {
  // The rewrite mirrors LibTorch's own implementation (2-norm, no finiteness check)
  // without the final `.item<double>()`.
  for (unsigned I = 2; I < Call->getNumArgs(); ++I) {
    const Expr *Arg = Call->getArg(I);
    if (isa<CXXDefaultArgExpr>(Arg))
      continue;
    Expr::EvalResult Value;
    if (I == 2 && Arg->EvaluateAsRValue(Value, Ctx) && Value.Val.isFloat() &&
        Value.Val.getFloat().convertToDouble() == 2.0)
      continue;
    bool Flag = true;
    if (I == 3 && Arg->EvaluateAsBooleanCondition(Flag, Ctx) && !Flag)
      continue;
    return std::nullopt;
  }
  std::string T = "torch::Tensor";
  // The scaling uses the multi-tensor kernel where the headers declare it (2.1+): one
  // launch instead of one per parameter, and elementwise, so the same numbers. The
  // norms stay per parameter unless FusedNorm: on CUDA `_foreach_norm` sums in another
  // order than `norm`, and training amplifies the last-bit difference (measured on an
  // H200: 6.5e-4 relative in an MLP's loss after a few hundred epochs).
  bool ForeachNorm = FusedNorm && torchDeclares(Ctx, "at", "_foreach_norm");
  bool ForeachMulByTensor = torchDeclares(Ctx, "at", "_foreach_mul_", 2, 1, "at::Tensor");
  std::string Norms =
      ForeachNorm ? "auto norms_ = at::_foreach_norm(grads_, 2); "
                  : "std::vector<" + T + "> norms_; for (const auto &g : grads_) "
                    "norms_.push_back(g.norm(2)); ";
  std::string Scale = ForeachMulByTensor ? "at::_foreach_mul_(grads_, coef_); "
                                         : "for (const auto &g : grads_) g.mul_(coef_); ";
  // Without gradients LibTorch returns 0.0: a 0-dim zero on the parameters' device.
  std::string Empty = ReturnNorm ? "return params_.empty() ? torch::zeros({}, torch::kDouble) : "
                                   "torch::zeros({}, params_[0].options().dtype(torch::kDouble)); "
                                 : "return; ";
  return "[](const std::vector<" + T + "> &params_, double max_norm_)" +
         (ReturnNorm ? " -> " + T : std::string()) + " { std::vector<" + T +
         "> grads_; for (const auto &p : params_) if (p.grad().defined()) "
         "grads_.push_back(p.grad()); if (grads_.empty()) " + Empty + Norms +
         "auto total_ = norms_.size() == 1 ? norms_[0] : torch::stack(norms_).norm(2); "
         "auto coef_ = (max_norm_ / (total_ + 1e-6)).clamp_max(1.0); " + Scale +
         (ReturnNorm ? "return total_; " : "") + "}(" + sourceText(Ctx, Call->getArg(0)) + ", " +
         sourceText(Ctx, Call->getArg(1)) + ")";
}

} // namespace torch_syncfree
