#include "PinnedMemory.h"
#include "ApiFacts.h"
#include "TensorStorage.h"
#include "TorchApi.h"
#include "analysis/Containers.h"
#include "analysis/ValueFlow.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Lex/Lexer.h"
#include <functional>

using namespace clang;

namespace torch_syncfree {

static bool spellsPinnedOption(ASTContext &Ctx, const Expr *Arg) {
  // `pinned_memory(true)` in the options expression (a call chain or a variable
  // initialised with one).
  std::function<bool(const Stmt *)> Visit = [&](const Stmt *S) -> bool {
    if (!S)
      return false;
    if (const auto *Call = dyn_cast<CallExpr>(S))
      if (calleeName(Call) == "pinned_memory" && Call->getNumArgs() >= 1) {
        // The flag as written, under its conversion to optional<bool>.
        const Expr *Value = Call->getArg(Call->getNumArgs() - 1)->IgnoreImplicit();
        while (const auto *Construct = dyn_cast<CXXConstructExpr>(Value)) {
          if (Construct->getNumArgs() < 1)
            break;
          Value = Construct->getArg(0)->IgnoreImplicit();
        }
        bool Flag = false;
        if (!Value->isValueDependent() && Value->getType()->isBooleanType() &&
            Value->EvaluateAsBooleanCondition(Flag, Ctx) && Flag)
          return true;
      }
    if (const auto *Ref = dyn_cast<DeclRefExpr>(S))
      if (const auto *VD = dyn_cast<VarDecl>(Ref->getDecl()))
        if (!isa<ParmVarDecl>(VD) && VD->getInit() && VD->getType().isConstQualified() &&
            Visit(VD->getInit()))
          return true;
    for (const Stmt *Child : S->children())
      if (Visit(Child))
        return true;
    return false;
  };
  return Visit(Arg);
}

static Pinning join(Pinning A, Pinning B) { return A == B ? A : Pinning::Unknown; }

/// One hostPinning() question: the fixpoint over the definitions of the
/// variables it reads (analysis/ValueFlow.h).
struct PinningQuery {
  TranslationUnitAnalysis &TU;
  DefinitionFixpoint<Pinning> Definitions;
  /// Fields whose program-wide stores are being joined (a store that reads
  /// the field again adds nothing: `f_ = f_.narrow(..)`).
  llvm::SmallPtrSet<const FieldDecl *, 4> FieldsInProgress;
};
static Pinning pinningOf(PinningQuery &Q, const Expr *E, unsigned Depth);

/// A local variable's pinning at a read: the join over the definitions that
/// reach it (the value-flow core), solved to a fixpoint across loop-carried
/// ones; a read the core cannot place (inside a lambda) or a value from
/// outside the function is unknown.
static Pinning variablePinning(PinningQuery &Q, const DeclRefExpr *Read, unsigned Depth) {
  const auto *VD = dyn_cast<VarDecl>(Read->getDecl());
  if (!VD || isa<ParmVarDecl>(VD) || !VD->hasLocalStorage() || VD->getType()->isReferenceType())
    return Pinning::Unknown;
  const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  const FunctionValueFlow *Flow = FD ? Q.TU.valueFlow(FD) : nullptr;
  std::optional<ReachingDefinitions> Reaching = Flow ? Flow->reachingAt(VD, Read) : std::nullopt;
  if (!Reaching || Reaching->FromEntry)
    return Pinning::Unknown;
  std::optional<Pinning> Result;
  for (unsigned Index : Reaching->Definitions) {
    const ValueDefinition &Definition = Flow->definitions()[Index];
    // Passed to code that may assign it (std::swap, a loader of the program's own).
    if (Definition.isOpaque() || Definition.Element)
      return Pinning::Unknown;
    if (!Definition.Value)
      continue;
    std::optional<Pinning> Stored = Q.Definitions.factOf(
        Definition,
        [&](const ValueDefinition &Def) { return std::optional(pinningOf(Q, Def.Value, Depth + 1)); },
        [](Pinning A, Pinning B) { return join(A, B); }, Pinning::Unknown, /*MaySettle=*/true);
    if (Stored)
      Result = Result ? join(*Result, *Stored) : *Stored;
  }
  return Result.value_or(Pinning::Unknown);
}

static Pinning fieldPinning(PinningQuery &Q, const FieldDecl *Field, const MemberExpr *Read, unsigned Depth) {
  std::optional<StoredValues> Values = fieldValuesAt(Q.TU, Field, Read);
  if (!Values)
    return Pinning::Unknown;
  return joinFieldValues<Pinning>(
      Field, *Values, Q.Definitions, Q.FieldsInProgress,
      [&](const Expr *Value) { return pinningOf(Q, Value, Depth + 1); }, join, Pinning::Unknown);
}

static Pinning pinningOf(PinningQuery &Q, const Expr *E, unsigned Depth) {
  TranslationUnitAnalysis &TU = Q.TU;
  ASTContext &Ctx = TU.context();
  E = ignoreWrappers(E);
  if (!E || Depth > 16)
    return Pinning::Unknown;
  // An element of a local container: the join of what is stored into it
  // before this read.
  const Expr *ContainerRead = nullptr;
  if (const ValueDecl *Container = containerOfElement(Ctx, E, &ContainerRead)) {
    std::optional<std::vector<TensorStore>> Stores = containerStoresReaching(TU, Container, ContainerRead);
    if (!Stores || Stores->empty())
      return Pinning::Unknown;
    Pinning Result = pinningOf(Q, Stores->front().Value, Depth + 1);
    for (const TensorStore &Store : *Stores)
      Result = join(Result, pinningOf(Q, Store.Value, Depth + 1));
    return Result;
  }
  if (const Expr *Base = viewBase(E))
    return pinningOf(Q, Base, Depth + 1);
  if (const auto *Ref = dyn_cast<DeclRefExpr>(E)) {
    return variablePinning(Q, Ref, Depth);
  }
  if (const auto *ME = dyn_cast<MemberExpr>(E)) {
    // torch::data::Example's `data` / `target`: what LibTorch's loaders yield,
    // made by the dataset and collation on the CPU (the C++ loaders do not pin).
    QualType Base = ME->getBase()->getType().getNonReferenceType();
    if (const auto *RD = Base->getAsCXXRecordDecl())
      if (RD->getName() == "Example" && isInTorchNamespace(RD))
        return Pinning::Pageable;
    // A tensor field of the program's own class: the join of the values the
    // read may see (the method's stores that reach it, else the program's).
    if (const auto *Field = dyn_cast_or_null<FieldDecl>(storageOf(Ctx, ME));
        Field && isTensorType(Field->getType()))
      return fieldPinning(Q, Field, ME, Depth);
    return Pinning::Unknown;
  }
  const auto *Call = dyn_cast<CallExpr>(E);
  if (!Call)
    return Pinning::Unknown;
  const FunctionDecl *Callee = Call->getDirectCallee();
  if (!Callee || !isInTorchNamespace(Callee))
    return Pinning::Unknown;
  llvm::StringRef Name = calleeName(Call);
  if (Name == "pin_memory")
    return Pinning::Pinned;
  if (Name == "from_blob")
    return Pinning::Pageable; // the caller's memory: malloc'd or a std::vector
  if (hasApiTrait(Name, Factory) || Name == "empty_like" || Name == "zeros_like" || Name == "ones_like") {
    for (const Expr *Arg : Call->arguments())
      if (!isa<CXXDefaultArgExpr>(Arg) && spellsPinnedOption(Ctx, Arg))
        return Pinning::Pinned;
    return Pinning::Pageable;
  }
  // Any other LibTorch op that returns a new host tensor allocates it pageable
  // (`cpu()`, `to(kCPU)`, `clone()`, arithmetic, `cat`, `index_select`).
  return isTensorType(Call->getType()) ? Pinning::Pageable : Pinning::Unknown;
}

Pinning hostPinning(TranslationUnitAnalysis &TU, const Expr *E) {
  PinningQuery Q{TU, {}, {}};
  return pinningOf(Q, E, 0);
}

bool mayBeNonContiguousView(const Expr *E) {
  for (E = ignoreWrappers(E); E; E = ignoreWrappers(viewBase(E))) {
    const auto *MC = dyn_cast<CXXMemberCallExpr>(E);
    if (!MC)
      continue;
    llvm::StringRef Name = calleeName(MC);
    if (Name == "t" || Name == "transpose" || Name == "permute" || Name == "expand" ||
        Name == "expand_as" || Name == "as_strided" || Name == "unfold")
      return true;
    if ((Name == "narrow" || Name == "slice" || Name == "select") && MC->getNumArgs() >= 1) {
      Expr::EvalResult Dim;
      const Expr *Arg = MC->getArg(0);
      if (isa<CXXDefaultArgExpr>(Arg))
        continue; // slice() defaults to dimension 0
      if (!Arg->EvaluateAsInt(Dim, MC->getCalleeDecl()->getASTContext()) || Dim.Val.getInt() != 0)
        return true;
    }
    if (Name == "contiguous")
      return false;
  }
  return false;
}

} // namespace torch_syncfree
