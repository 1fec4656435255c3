//===- SiteOwnership.cpp - Which check reports a sync site ----------------===//
#include "SiteOwnership.h"
#include "TensorFacts.h"
#include "TorchApi.h"

#include "clang/AST/ParentMapContext.h"

using namespace clang;

namespace torch_syncfree {

bool isDeferredLogSite(TranslationUnitAnalysis &TU, const Expr *Read, const UseVerdict &Use) {
  const Stmt *Loop = TU.enclosingLoop(Read);
  // Read every iteration (not already under a log interval) only to be logged.
  return Loop && Use.OnlyLogged && !logIntervalAround(TU.context(), Read, Loop);
}

bool isDeferredAccumulateSite(TranslationUnitAnalysis &TU, const Expr *Read) {
  ASTContext &Ctx = TU.context();
  // The same conditions as torch-sync-deferred-accumulate's matcher and the
  // first tests of its check(), seen from the read: the summand of a discarded
  // `local += ...` inside a loop, with the local declared before the loop.
  const Stmt *Current = Read;
  while (true) {
    DynTypedNodeList Parents = Ctx.getParents(*Current);
    const auto *Parent = Parents.empty() ? nullptr : Parents[0].get<Expr>();
    if (!Parent)
      return false;
    if (const auto *Accumulate = dyn_cast<BinaryOperator>(Parent);
        Accumulate && (Accumulate->getOpcode() == BO_AddAssign || Accumulate->getOpcode() == BO_SubAssign)) {
      if (Accumulate->getRHS() != Current)
        return false;
      const auto *Lhs = dyn_cast<DeclRefExpr>(Accumulate->getLHS()->IgnoreParenImpCasts());
      const auto *Var = Lhs ? dyn_cast<VarDecl>(Lhs->getDecl()) : nullptr;
      if (!Var || !Var->hasLocalStorage() ||
          !(Var->getType()->isIntegerType() || Var->getType()->isRealFloatingType()) ||
          !isValueDiscarded(Ctx, Accumulate))
        return false;
      const Stmt *Loop = TU.enclosingLoop(Accumulate);
      return Loop && Ctx.getSourceManager().isBeforeInTranslationUnit(Var->getEndLoc(), Loop->getBeginLoc());
    }
    Current = Parent;
  }
}

std::optional<llvm::StringRef> specificOwnerOfRead(TranslationUnitAnalysis &TU, const CallExpr *Read,
                                                   const UseVerdict &Use,
                                                   llvm::function_ref<bool(llvm::StringRef)> IsEnabled) {
  if (!isa<CXXMemberCallExpr>(Read)) // _local_scalar_dense: torch-sync-item's alone
    return std::nullopt;
  // The precedence, most specific first: an enabled check that owns the site
  // reports it, with its better remedy; torch-sync-item reports the rest.
  if (IsEnabled("torch-sync-deferred-log") && isDeferredLogSite(TU, Read, Use))
    return llvm::StringRef("torch-sync-deferred-log");
  if (IsEnabled("torch-sync-deferred-accumulate") && isDeferredAccumulateSite(TU, Read))
    return llvm::StringRef("torch-sync-deferred-accumulate");
  return std::nullopt;
}

} // namespace torch_syncfree
