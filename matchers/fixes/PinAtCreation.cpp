#include "fixes/PinAtCreation.h"
#include "ApiFacts.h"
#include "PinnedMemory.h"
#include "TensorStorage.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"

#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Lex/Lexer.h"
#include <functional>

using namespace clang;

namespace torch_syncfree {

/// `X.pin_memory()`, guarded by `torch::cuda::is_available()` unless the copy
/// goes to a GPU (pin_memory() needs a CUDA runtime).
static std::string pinnedText(const std::string &Text, bool Postfix, bool TargetIsGpu) {
  std::string Object = Postfix ? Text : "(" + Text + ")";
  return TargetIsGpu ? Object + ".pin_memory()"
                     : "(torch::cuda::is_available() ? " + Object + ".pin_memory() : " + Text + ")";
}

/// The edit that pins a stored value where it is stored: a fresh pageable
/// LibTorch result, or a view of a local tensor that is only read (the pinned
/// copy would not see later writes); nullopt otherwise.
static std::optional<PinEdit> pinStoredValue(TranslationUnitAnalysis &TU, const Expr *Stored,
                                             bool TargetIsGpu) {
  ASTContext &Ctx = TU.context();
  const SourceManager &SM = Ctx.getSourceManager();
  const Expr *Value = ignoreWrappers(Stored);
  if (!Value || hostPinning(TU, Value) != Pinning::Pageable || Value->getBeginLoc().isMacroID() ||
      Value->getEndLoc().isMacroID())
    return std::nullopt;
  const Expr *Base = Value;
  while (const Expr *Next = viewBase(Base))
    Base = ignoreWrappers(Next);
  if (const auto *Ref = dyn_cast<DeclRefExpr>(Base)) {
    const auto *VD = dyn_cast<VarDecl>(Ref->getDecl());
    if (!VD || isa<ParmVarDecl>(VD) || !VD->hasLocalStorage() || !onlyRead(TU, VD))
      return std::nullopt;
  } else if (const auto *Call = dyn_cast<CallExpr>(Base);
             !Call || !isInTorchNamespace(Call->getDirectCallee()) || calleeName(Call) == "from_blob") {
    return std::nullopt; // pinning from_blob's memory would copy it: a new tensor
  }
  CharSourceRange Range = CharSourceRange::getTokenRange(Value->getSourceRange());
  std::string Text = Lexer::getSourceText(Range, SM, Ctx.getLangOpts()).str();
  if (Text.empty())
    return std::nullopt;
  bool Postfix =
      isa<DeclRefExpr, CallExpr, MemberExpr, ParenExpr>(Value) &&
      !(isa<CXXOperatorCallExpr>(Value) && cast<CXXOperatorCallExpr>(Value)->getOperator() != OO_Subscript &&
        cast<CXXOperatorCallExpr>(Value)->getOperator() != OO_Call);
  return PinEdit{Range, pinnedText(Text, Postfix, TargetIsGpu)};
}

/// Whether the stores of a field happen once per object, before the copy
/// \p Copy can run: all in constructors of its class, the copy in none of them,
/// and no object of the class built inside a loop (a pinned allocation and a
/// host copy per object would then be paid every step).
static bool storedOnceBefore(TranslationUnitAnalysis &TU, const FieldDecl *Field,
                             llvm::ArrayRef<TensorStore> Stores, const Stmt *Copy) {
  ASTContext &Ctx = TU.context();
  if (!llvm::all_of(Stores, [](const TensorStore &Store) { return Store.InConstructor; }))
    return false;
  const auto *CopyIn = dyn_cast_or_null<CXXConstructorDecl>(outermostFunction(Ctx, Copy));
  if (CopyIn && CopyIn->getParent()->getCanonicalDecl() == Field->getParent()->getCanonicalDecl())
    return false;
  const SourceManager &SM = Ctx.getSourceManager();
  using namespace clang::ast_matchers;
  const auto *Record = cast<CXXRecordDecl>(Field->getParent());
  for (const Decl *D : Ctx.getTranslationUnitDecl()->decls()) {
    if (!SM.isInMainFile(SM.getExpansionLoc(D->getLocation())))
      continue;
    for (const auto &Found :
         match(decl(forEachDescendant(
                   cxxConstructExpr(hasDeclaration(cxxConstructorDecl(ofClass(equalsNode(Record)))))
                       .bind("build"))),
               *D, Ctx))
      if (TU.enclosingLoop(Found.getNodeAs<CXXConstructExpr>("build")))
        return false;
  }
  return true;
}

/// The container path of pinAtCreation(): pin each element where it is stored.
static std::optional<PinAtCreation> pinContainerElements(TranslationUnitAnalysis &TU,
                                                         const ValueDecl *Container, const Stmt *Copy,
                                                         bool TargetIsGpu) {
  ASTContext &Ctx = TU.context();
  const SourceManager &SM = Ctx.getSourceManager();
  const Stmt *Loop = TU.enclosingLoop(Copy);
  std::optional<std::vector<TensorStore>> Stores = containerStores(TU, Container);
  if (!Loop || !Stores || Stores->empty())
    return std::nullopt;
  PinAtCreation Pin;
  Pin.Variable = Container->getNameAsString();
  Pin.Container = true;
  if (const auto *Field = dyn_cast<FieldDecl>(Container)) {
    if (!storedOnceBefore(TU, Field, *Stores, Copy))
      return std::nullopt;
    Pin.Where = "in the constructor";
  }
  for (const TensorStore &Store : *Stores) {
    // A local is stored once, before the loop that copies (pinning costs a
    // page-locked allocation and a host copy).
    if (isa<VarDecl>(Container) &&
        !SM.isBeforeInTranslationUnit(Store.Statement->getEndLoc(), Loop->getBeginLoc()))
      return std::nullopt;
    std::optional<PinEdit> Edit = pinStoredValue(TU, Store.Value, TargetIsGpu);
    if (!Edit)
      return std::nullopt;
    Pin.Edits.push_back(*Edit);
  }
  return Pin;
}

/// The first copy to a device (`to`, `cuda`, `copy_(src)`), in source order,
/// whose source reads \p Storage (an element of it, or the tensor itself,
/// through views): the one whose fix carries the pinning edits, so that the
/// fixes of the others do not conflict with it.
static const Stmt *firstCopyFrom(TranslationUnitAnalysis &TU, const ValueDecl *Storage) {
  ASTContext &Ctx = TU.context();
  const SourceManager &SM = Ctx.getSourceManager();
  std::vector<const Stmt *> Roots;
  if (const auto *VD = dyn_cast<VarDecl>(Storage)) {
    const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
    if (FD && FD->getBody())
      Roots.push_back(FD->getBody());
  } else if (std::optional<std::vector<const Expr *>> Uses = storageUses(TU, Storage)) {
    for (const Expr *Use : *Uses)
      if (const FunctionDecl *FD = outermostFunction(Ctx, Use); FD && FD->getBody())
        if (!llvm::is_contained(Roots, FD->getBody()))
          Roots.push_back(FD->getBody());
  }
  const Stmt *First = nullptr;
  std::function<void(const Stmt *)> Find = [&](const Stmt *S) {
    if (!S)
      return;
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(S)) {
      StringRef Name = calleeName(MC);
      const Expr *From = Name == "copy_" && MC->getNumArgs() > 0 ? MC->getArg(0)
                         : hasApiTrait(Name, CopyToDevice)       ? MC->getImplicitObjectArgument()
                                                                 : nullptr;
      for (From = ignoreWrappers(From); From && !containerOfElement(Ctx, From) && viewBase(From);)
        From = ignoreWrappers(viewBase(From));
      if (From && (containerOfElement(Ctx, From) == Storage || storageOf(Ctx, From) == Storage)) {
        if (!First || SM.isBeforeInTranslationUnit(MC->getBeginLoc(), First->getBeginLoc()))
          First = MC;
        return;
      }
    }
    for (const Stmt *Child : S->children())
      Find(Child);
  };
  for (const Stmt *Root : Roots)
    Find(Root);
  return First;
}

/// The tensor-field path of pinAtCreation(): pin each value the field is given.
static std::optional<PinAtCreation> pinTensorField(TranslationUnitAnalysis &TU, const FieldDecl *Field,
                                                   const Stmt *Copy, bool TargetIsGpu) {
  std::optional<FieldStores> Stores = tensorFieldStores(TU, Field);
  if (!TU.enclosingLoop(Copy) || !Stores || !Stores->OnlyRead || Stores->Stores.empty() ||
      !storedOnceBefore(TU, Field, Stores->Stores, Copy) || firstCopyFrom(TU, Field) != Copy)
    return std::nullopt;
  PinAtCreation Pin;
  Pin.Variable = Field->getNameAsString();
  Pin.Where = "in the constructor";
  for (const TensorStore &Store : Stores->Stores) {
    std::optional<PinEdit> Edit = pinStoredValue(TU, Store.Value, TargetIsGpu);
    if (!Edit)
      return std::nullopt;
    Pin.Edits.push_back(*Edit);
  }
  return Pin;
}

std::optional<PinAtCreation> pinAtCreation(TranslationUnitAnalysis &TU, const Expr *Source, const Stmt *Copy,
                                           bool TargetIsGpu) {
  ASTContext &Ctx = TU.context();
  const Expr *Base = ignoreWrappers(Source);
  while (!containerOfElement(Ctx, Base) && viewBase(Base))
    Base = ignoreWrappers(viewBase(Base));
  if (const ValueDecl *Container = containerOfElement(Ctx, Base)) {
    if (firstCopyFrom(TU, Container) != Copy)
      return std::nullopt;
    return pinContainerElements(TU, Container, Copy, TargetIsGpu);
  }
  if (const auto *Field = dyn_cast_or_null<FieldDecl>(storageOf(Ctx, Base));
      Field && isTensorType(Field->getType()))
    return pinTensorField(TU, Field, Copy, TargetIsGpu);
  const auto *Ref = dyn_cast_or_null<DeclRefExpr>(Base);
  const auto *VD = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  const Stmt *Loop = TU.enclosingLoop(Copy);
  if (!VD || !Loop || isa<ParmVarDecl>(VD) || !VD->hasLocalStorage() || VD->getType()->isReferenceType() ||
      !VD->getInit())
    return std::nullopt;
  const SourceManager &SM = Ctx.getSourceManager();
  // Made once, before the loop; pinning costs a page-locking allocation.
  if (!SM.isBeforeInTranslationUnit(VD->getEndLoc(), Loop->getBeginLoc()))
    return std::nullopt;
  const auto *Init = dyn_cast<CallExpr>(ignoreWrappers(VD->getInit()));
  if (!Init || !isInTorchNamespace(Init->getDirectCallee()) || hostPinning(TU, Init) != Pinning::Pageable ||
      calleeName(Init) == "from_blob") // pinning from_blob's memory would copy it: a new tensor
    return std::nullopt;
  const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  if (!FD || !FD->getBody() || !onlyRead(TU, VD))
    return std::nullopt;
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
    if (!Copy || !hasApiTrait(calleeName(Copy), CopyToDevice))
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
  Pin.Variable = VD->getNameAsString();
  // pin_memory() needs a CUDA runtime; the copy's device may be the CPU on a
  // machine without one.
  Pin.Edits.push_back({Range, pinnedText(Text, /*Postfix=*/true, TargetIsGpu)});
  return Pin;
}

} // namespace torch_syncfree
