#include "PinnedMemory.h"
#include "TorchApi.h"

#include "clang/AST/ExprCXX.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringSet.h"

using namespace clang;

namespace torch_syncfree {

/// Views: the result shares its base's memory (and so its pinning).
static bool isViewName(llvm::StringRef Name) {
  static const llvm::StringSet<> Views = {"narrow", "slice", "select", "view", "reshape",
                                          "detach", "squeeze", "unsqueeze", "flatten",
                                          "index", "operator[]", "contiguous", "t", "transpose",
                                          "permute", "expand", "expand_as", "view_as",
                                          "reshape_as", "as_strided", "unfold"};
  return Views.contains(Name);
}

/// The tensor a view is taken of, or nullptr when \p E is no view.
static const Expr *viewBase(const Expr *E) {
  E = ignoreWrappers(E);
  if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(E))
    return Op->getOperator() == OO_Subscript && Op->getNumArgs() == 2 ? Op->getArg(0) : nullptr;
  const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(E);
  if (!MC || !isInTorchNamespace(MC->getDirectCallee()) || !isViewName(calleeName(MC)))
    return nullptr;
  return MC->getImplicitObjectArgument();
}

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

static Pinning pinningOf(TranslationUnitAnalysis &TU, const Expr *E, unsigned Depth);

static Pinning variablePinning(TranslationUnitAnalysis &TU, const VarDecl *VD, unsigned Depth) {
  ASTContext &Ctx = TU.context();
  if (isa<ParmVarDecl>(VD) || !VD->hasLocalStorage() || VD->getType()->isReferenceType())
    return Pinning::Unknown;
  const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  if (!FD || !FD->getBody())
    return Pinning::Unknown;
  std::optional<Pinning> Result;
  if (const Expr *Init = VD->getInit())
    Result = pinningOf(TU, Init, Depth + 1);
  for (const DeclRefExpr *Use : TU.referencesTo(*FD->getBody(), VD)) {
    const Stmt *Parent = consumerOf(Ctx, Use);
    if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(Parent);
        Op && Op->getOperator() == OO_Equal && ignoreWrappers(Op->getArg(0))->IgnoreImplicit() == Use) {
      Pinning Stored = pinningOf(TU, Op->getArg(1), Depth + 1);
      Result = Result ? join(*Result, Stored) : Stored;
    } else if (const auto *Call = dyn_cast_or_null<CallExpr>(Parent);
               Call && !isa<CXXMemberCallExpr>(Call) && !isa<CXXOperatorCallExpr>(Call) &&
               !isInTorchNamespace(Call->getDirectCallee())) {
      // Passed to code that may assign it (std::swap, a loader of the program's own).
      for (unsigned I = 0; I < Call->getNumArgs(); ++I)
        if (ignoreWrappers(Call->getArg(I))->IgnoreImplicit() == Use) {
          const FunctionDecl *Callee = Call->getDirectCallee();
          if (!Callee || I >= Callee->getNumParams() ||
              (Callee->getParamDecl(I)->getType()->isReferenceType() &&
               !Callee->getParamDecl(I)->getType().getNonReferenceType().isConstQualified()))
            return Pinning::Unknown;
        }
    }
  }
  return Result.value_or(Pinning::Unknown);
}

static Pinning pinningOf(TranslationUnitAnalysis &TU, const Expr *E, unsigned Depth) {
  ASTContext &Ctx = TU.context();
  E = ignoreWrappers(E);
  if (!E || Depth > 16)
    return Pinning::Unknown;
  if (const Expr *Base = viewBase(E))
    return pinningOf(TU, Base, Depth + 1);
  if (const auto *Ref = dyn_cast<DeclRefExpr>(E)) {
    if (const auto *VD = dyn_cast<VarDecl>(Ref->getDecl()))
      return variablePinning(TU, VD, Depth);
    return Pinning::Unknown;
  }
  if (const auto *ME = dyn_cast<MemberExpr>(E)) {
    // torch::data::Example's `data` / `target`: what LibTorch's loaders yield,
    // made by the dataset and collation on the CPU (the C++ loaders do not pin).
    QualType Base = ME->getBase()->getType().getNonReferenceType();
    if (const auto *RD = Base->getAsCXXRecordDecl())
      if (RD->getName() == "Example" && isInTorchNamespace(RD))
        return Pinning::Pageable;
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
  if (isTensorFactoryName(Name) || Name == "randn" || Name == "rand" || Name == "randint" ||
      Name == "empty_like" || Name == "zeros_like" || Name == "ones_like") {
    for (const Expr *Arg : Call->arguments())
      if (!isa<CXXDefaultArgExpr>(Arg) && spellsPinnedOption(Ctx, Arg))
        return Pinning::Pinned;
    return Pinning::Pageable;
  }
  // Any other LibTorch op that returns a new host tensor allocates it pageable
  // (`cpu()`, `to(kCPU)`, `clone()`, arithmetic, `cat`, `index_select`).
  return isTensorType(Call->getType()) ? Pinning::Pageable : Pinning::Unknown;
}

Pinning hostPinning(TranslationUnitAnalysis &TU, const Expr *E) { return pinningOf(TU, E, 0); }

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

std::optional<PinAtCreation> pinAtCreation(TranslationUnitAnalysis &TU, const Expr *Source, const Stmt *Copy,
                                           bool TargetIsGpu) {
  ASTContext &Ctx = TU.context();
  const Expr *Base = ignoreWrappers(Source);
  while (const Expr *Next = viewBase(Base))
    Base = ignoreWrappers(Next);
  const auto *Ref = dyn_cast_or_null<DeclRefExpr>(Base);
  const auto *VD = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  const Stmt *Loop = TU.enclosingLoop(Copy);
  if (!VD || !Loop || isa<ParmVarDecl>(VD) || !VD->hasLocalStorage() ||
      VD->getType()->isReferenceType() || !VD->getInit())
    return std::nullopt;
  const SourceManager &SM = Ctx.getSourceManager();
  // Made once, before the loop; pinning costs a page-locking allocation.
  if (!SM.isBeforeInTranslationUnit(VD->getEndLoc(), Loop->getBeginLoc()))
    return std::nullopt;
  const auto *Init = dyn_cast<CallExpr>(ignoreWrappers(VD->getInit()));
  if (!Init || !isInTorchNamespace(Init->getDirectCallee()) || hostPinning(TU, Init) != Pinning::Pageable ||
      calleeName(Init) == "from_blob") // pinning from_blob's memory would copy it: a new tensor
    return std::nullopt;
  // Only read afterwards: every use is the object of a LibTorch method that does
  // not write (no `_` suffix, no data_ptr/accessor) or an argument of a LibTorch call.
  const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  if (!FD || !FD->getBody())
    return std::nullopt;
  for (const DeclRefExpr *Use : TU.referencesTo(*FD->getBody(), VD)) {
    const Stmt *Parent = consumerOf(Ctx, Use);
    if (isa_and_nonnull<LambdaExpr>(Parent))
      continue; // a capture: the lambda body's uses are among these uses
    if (const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(Parent);
        MC && MC->getImplicitObjectArgument() &&
        ignoreWrappers(MC->getImplicitObjectArgument())->IgnoreImplicit() == Use) {
      llvm::StringRef Name = calleeName(MC);
      if (!isInTorchNamespace(MC->getDirectCallee()) || Name.ends_with("_") || Name.contains("data_ptr") ||
          Name.contains("accessor"))
        return std::nullopt;
      continue;
    }
    if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(Parent);
        Op && (Op->isAssignmentOp() || Op->getOperator() == OO_Subscript) &&
        ignoreWrappers(Op->getArg(0))->IgnoreImplicit() == Use) {
      if (Op->isAssignmentOp())
        return std::nullopt;
      continue; // `data[i]`: a view, read where it is used
    }
    const auto *Call = dyn_cast_or_null<CallExpr>(Parent);
    if (!Call || !isInTorchNamespace(Call->getDirectCallee()))
      return std::nullopt;
  }
  // Several copies of one source: the first one (in source order) carries the
  // edit, so the fixes of the others do not conflict with it.
  for (const DeclRefExpr *Use : TU.referencesTo(*FD->getBody(), VD)) {
    const Expr *Viewed = Use;
    for (const Stmt *Parent = consumerOf(Ctx, Viewed); Parent; Parent = consumerOf(Ctx, Viewed)) {
      const auto *PE = dyn_cast<Expr>(Parent);
      if (!PE || viewBase(PE) == nullptr || ignoreWrappers(viewBase(PE))->IgnoreImplicit() != Viewed)
        break;
      Viewed = PE;
    }
    const auto *Copy = dyn_cast_or_null<CXXMemberCallExpr>(consumerOf(Ctx, Viewed));
    if (!Copy || !(calleeName(Copy) == "to" || calleeName(Copy) == "cuda"))
      continue;
    if (Use != Ref)
      return std::nullopt;
    break;
  }
  const LangOptions &LO = Ctx.getLangOpts();
  CharSourceRange Range = CharSourceRange::getTokenRange(Init->getSourceRange());
  if (Init->getBeginLoc().isMacroID() || Init->getEndLoc().isMacroID())
    return std::nullopt;
  std::string Text = Lexer::getSourceText(Range, SM, LO).str();
  if (Text.empty())
    return std::nullopt;
  PinAtCreation Pin;
  Pin.InitRange = Range;
  Pin.Variable = VD->getNameAsString();
  // pin_memory() needs a CUDA runtime; the copy's device may be the CPU on a
  // machine without one.
  Pin.NewInit = TargetIsGpu ? Text + ".pin_memory()"
                            : "(torch::cuda::is_available() ? " + Text + ".pin_memory() : " + Text + ")";
  return Pin;
}

} // namespace torch_syncfree
