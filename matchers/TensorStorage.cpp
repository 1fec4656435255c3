#include "TensorStorage.h"
#include "ApiFacts.h"
#include "TorchApi.h"
#include "analysis/Containers.h"
#include "utils/AstWalk.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"

using namespace clang;

namespace torch_syncfree {

/// Views: the result shares its base's memory (and so its pinning).
static bool isViewName(llvm::StringRef Name) { return hasApiTrait(Name, View); }

/// The tensor a view is taken of, or nullptr when \p E is no view.
const Expr *viewBase(const Expr *E) {
  E = ignoreWrappers(E);
  if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(E))
    return Op->getOperator() == OO_Subscript && Op->getNumArgs() == 2 ? Op->getArg(0) : nullptr;
  const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(E);
  if (!MC || !isInTorchNamespace(MC->getDirectCallee()) || !isViewName(calleeName(MC)))
    return nullptr;
  return MC->getImplicitObjectArgument();
}

/// A local sequence container of tensors (std::vector, std::deque, std::array).
static bool isTensorSequence(QualType T) {
  QualType Element;
  return isStdContainer(T, /*Maps=*/false, &Element) && !Element.isNull() && isTensorType(Element);
}

/// Where tensors are kept that the analysis can follow: a local variable (not a
/// parameter, not a reference) or a field of the program's own class whose
/// every store the TU shows (isClosedProgramField).
const ValueDecl *storageOf(ASTContext &Ctx, const Expr *E) {
  E = ignoreWrappers(E);
  if (const auto *Ref = dyn_cast_or_null<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(Ref->getDecl());
    if (!VD || isa<ParmVarDecl>(VD) || !VD->hasLocalStorage() || VD->getType()->isReferenceType())
      return nullptr;
    return VD;
  }
  if (const auto *Member = dyn_cast_or_null<MemberExpr>(E))
    if (const auto *Field = dyn_cast<FieldDecl>(Member->getMemberDecl());
        Field && isClosedProgramField(Ctx.getSourceManager(), Field))
      return Field;
  return nullptr;
}

/// The storage's uses: the references in its function (a local), or every
/// member access in the main file (a field); nullopt when not all can be seen.
std::optional<std::vector<const Expr *>> storageUses(TranslationUnitAnalysis &TU, const ValueDecl *Storage) {
  if (const auto *Field = dyn_cast<FieldDecl>(Storage)) {
    std::optional<llvm::ArrayRef<const MemberExpr *>> Uses = TU.memberReferencesTo(Field);
    if (!Uses)
      return std::nullopt;
    return std::vector<const Expr *>(Uses->begin(), Uses->end());
  }
  const auto *FD = dyn_cast_or_null<FunctionDecl>(cast<VarDecl>(Storage)->getParentFunctionOrMethod());
  if (!FD || !FD->getBody())
    return std::nullopt;
  llvm::ArrayRef<const DeclRefExpr *> Refs = TU.referencesTo(*FD->getBody(), Storage);
  return std::vector<const Expr *>(Refs.begin(), Refs.end());
}

/// Whether \p S is in a constructor of \p Field's class: a store there happens
/// before any method of the object runs.
bool inConstructorOf(ASTContext &Ctx, const Stmt *S, const FieldDecl *Field) {
  const auto *Ctor = dyn_cast_or_null<CXXConstructorDecl>(enclosingFunction(Ctx, S));
  return Ctor && Ctor->getParent()->getCanonicalDecl() == Field->getParent()->getCanonicalDecl();
}

/// The container (a storage holding a sequence of tensors) whose element \p E
/// reads: `c[i]`, `c.at(i)`, `c.front()`, `c.back()`, or the variable of a
/// range-for over `c`.
const ValueDecl *containerOfElement(ASTContext &Ctx, const Expr *E, const Expr **Reference) {
  E = ignoreWrappers(E);
  const Expr *Container = nullptr;
  if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(E)) {
    if (Op->getOperator() == OO_Subscript && Op->getNumArgs() == 2)
      Container = Op->getArg(0);
  } else if (const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(E)) {
    if (containerOp(calleeName(MC)) == ContainerOp::ElementAccess)
      Container = MC->getImplicitObjectArgument();
  } else if (const auto *Ref = dyn_cast_or_null<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(Ref->getDecl());
    if (const CXXForRangeStmt *Range = rangeForDeclaring(Ctx, VD); Range && Range->getLoopVariable() == VD)
      Container = Range->getRangeInit();
  }
  const ValueDecl *Storage = Container ? storageOf(Ctx, Container) : nullptr;
  if (!Storage || !isTensorSequence(Storage->getType()))
    return nullptr;
  if (Reference)
    *Reference = Container->IgnoreParenImpCasts();
  return Storage;
}

/// Whether the expression that uses an element read (`v[i]`, `v.at(i)`) may
/// write the element: an in-place method (`add_`), `data_ptr`, an assignment.
static bool writesElement(const Stmt *ElementUser) {
  if (const auto *Method = dyn_cast_or_null<CXXMemberCallExpr>(ElementUser);
      Method && mayWriteTensorMemory(calleeName(Method)))
    return true;
  const auto *Assign = dyn_cast_or_null<CXXOperatorCallExpr>(ElementUser);
  return Assign && Assign->isAssignmentOp();
}

/// What a field is initialised with when an object is built: its default
/// member initialiser (it runs in every constructor that does not name the
/// field) and the written initialisers of the constructors defined here.
std::vector<const Expr *> fieldInitialisers(const FieldDecl *Field) {
  std::vector<const Expr *> Inits;
  if (const Expr *Init = Field->getInClassInitializer())
    Inits.push_back(Init);
  for (const CXXConstructorDecl *Ctor : cast<CXXRecordDecl>(Field->getParent())->ctors()) {
    const FunctionDecl *Definition = nullptr;
    if (!Ctor->hasBody(Definition))
      continue;
    for (const CXXCtorInitializer *Init : cast<CXXConstructorDecl>(Definition)->inits())
      if (Init->getMember() == Field && Init->isWritten())
        Inits.push_back(Init->getInit());
  }
  return Inits;
}

/// The stores of `c = x.split(n)` (views of one tensor, pinned as it is) from a
/// container's initialiser; false when the initialiser makes other contents.
static bool initialStores(const Expr *Init, const Stmt *Statement, bool InConstructor,
                          std::vector<TensorStore> &Stores) {
  Init = ignoreWrappers(Init);
  if (!Init)
    return true;
  const auto *Views = dyn_cast<CXXMemberCallExpr>(Init);
  if (Views && isInTorchNamespace(Views->getDirectCallee()) &&
      isTensorType(Views->getImplicitObjectArgument()->getType()) &&
      hasApiTrait(calleeName(Views), SplitsIntoViews)) {
    Stores.push_back({Views->getImplicitObjectArgument(), Statement, InConstructor});
    return true;
  }
  // A braced list of tensors (`{a, b}`, `v = {a, b}`): each element is stored.
  if (const auto *List = dyn_cast<CXXStdInitializerListExpr>(Init))
    Init = ignoreWrappers(List->getSubExpr());
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(Init);
      Construct && Construct->getNumArgs() == 1 &&
      isa<CXXStdInitializerListExpr>(ignoreWrappers(Construct->getArg(0))))
    return initialStores(Construct->getArg(0), Statement, InConstructor, Stores);
  if (const auto *List = dyn_cast<InitListExpr>(Init)) {
    for (const Expr *Element : List->inits()) {
      if (!isTensorType(Element->getType()))
        return false;
      Stores.push_back({Element, Statement, InConstructor});
    }
    return true;
  }
  // An empty container; `vector<Tensor> v(n, t)`, copies and results of other calls are not followed.
  const auto *Construct = dyn_cast<CXXConstructExpr>(Init);
  return Construct && (Construct->getNumArgs() == 0 || isa<CXXDefaultArgExpr>(Construct->getArg(0)));
}

/// What a tensor container (a local or a field) holds: every value stored with
/// push_back / emplace_back (one argument) or `c[i] = v`, and the views its
/// initialisers split off, with the statements that store them; nullopt when it
/// may change in other ways (insert, swap, passed to code that may write it, an
/// element written in place: `c[i].add_(..)`).
std::optional<std::vector<TensorStore>> containerStores(TranslationUnitAnalysis &TU,
                                                        const ValueDecl *Container) {
  ASTContext &Ctx = TU.context();
  std::optional<std::vector<const Expr *>> Uses = storageUses(TU, Container);
  if (!Uses)
    return std::nullopt;
  std::vector<TensorStore> Stores;
  const auto *Field = dyn_cast<FieldDecl>(Container);
  if (const auto *VD = dyn_cast<VarDecl>(Container)) {
    DynTypedNodeList Parents = Ctx.getParents(*VD);
    const auto *Declaration = Parents.empty() ? nullptr : Parents[0].get<DeclStmt>();
    if (VD->getInit() && (!Declaration || !initialStores(VD->getInit(), Declaration, false, Stores)))
      return std::nullopt;
  } else {
    // A field: its default member initialiser and the constructors' initialisers.
    for (const Expr *Init : fieldInitialisers(Field))
      if (!initialStores(Init, Init, true, Stores))
        return std::nullopt;
  }
  auto InCtor = [&](const Stmt *S) { return Field && inConstructorOf(Ctx, S, Field); };
  for (const Expr *Use : *Uses) {
    const Stmt *Parent = consumerOf(Ctx, Use);
    if (isa_and_nonnull<LambdaExpr>(Parent))
      continue; // a capture: the lambda body's uses are among these uses
    if (const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(Parent)) {
      // One tensor added (push_back, emplace_back, push_front) is a store;
      // removing elements leaves the others as they were.
      ContainerOp Op = containerOp(calleeName(MC));
      if (Op == ContainerOp::Add && MC->getNumArgs() == 1 && isTensorType(MC->getArg(0)->getType())) {
        Stores.push_back({MC->getArg(0), MC, InCtor(MC)});
        continue;
      }
      if (Op == ContainerOp::Add || Op == ContainerOp::Unknown)
        return std::nullopt;
      if (writesElement(consumerOf(Ctx, MC)))
        return std::nullopt;
      continue;
    }
    // `c = {a, b}`: the container's contents replaced by the list's.
    if (const auto *Assign = dyn_cast_or_null<CXXOperatorCallExpr>(Parent);
        Assign && Assign->getOperator() == OO_Equal && Assign->getNumArgs() == 2 &&
        ignoreWrappers(Assign->getArg(0)) == ignoreWrappers(Use)) {
      if (!initialStores(Assign->getArg(1), Assign, InCtor(Assign), Stores))
        return std::nullopt;
      continue;
    }
    if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(Parent);
        Op && Op->getOperator() == OO_Subscript) {
      const Stmt *ElementUser = consumerOf(Ctx, Op);
      if (const auto *Assign = dyn_cast_or_null<CXXOperatorCallExpr>(ElementUser);
          Assign && Assign->getOperator() == OO_Equal && Assign->getNumArgs() == 2 &&
          ignoreWrappers(Assign->getArg(0)) == ignoreWrappers(Op)) {
        Stores.push_back({Assign->getArg(1), Assign, InCtor(Assign)});
        continue;
      }
      if (writesElement(ElementUser))
        return std::nullopt;
      continue;
    }
    // The range of a range-for (`auto &&__range = c;`): its elements are read
    // through the loop variable; a loop variable that is assigned or written in
    // place writes the container.
    const CXXForRangeStmt *Range = nullptr;
    if (const VarDecl *RangeVar = initialisedVariable(Ctx, Use); RangeVar && RangeVar->isImplicit()) {
      Range = rangeForDeclaring(Ctx, RangeVar);
      if (Range && Range->getLoopVariable() == RangeVar)
        Range = nullptr;
    }
    if (Range) {
      const VarDecl *Element = Range->getLoopVariable();
      if (isMutableReference(Element->getType()))
        for (const DeclRefExpr *ElementUse : TU.referencesTo(*Range->getBody(), Element)) {
          const Stmt *User = consumerOf(Ctx, ElementUse);
          if (const auto *Method = dyn_cast_or_null<CXXMemberCallExpr>(User);
              Method && ignoreWrappers(Method->getImplicitObjectArgument()) == ElementUse &&
              mayWriteTensorMemory(calleeName(Method)))
            return std::nullopt;
          if (const auto *Assign = dyn_cast_or_null<CXXOperatorCallExpr>(User);
              Assign && Assign->isAssignmentOp())
            return std::nullopt;
          if (const auto *Call = dyn_cast_or_null<CallExpr>(User);
              Call && !isa<CXXMemberCallExpr, CXXOperatorCallExpr>(Call) &&
              !isInTorchNamespace(Call->getDirectCallee()))
            return std::nullopt;
        }
      continue;
    }
    return std::nullopt; // passed on, captured, swapped
  }
  return Stores;
}

std::optional<std::vector<TensorStore>>
containerStoresReaching(TranslationUnitAnalysis &TU, const ValueDecl *Container, const Expr *Read) {
  std::optional<std::vector<TensorStore>> Stores = containerStores(TU, Container);
  const auto *Local = dyn_cast<VarDecl>(Container);
  const auto *FD = Local && Local->hasLocalStorage()
                       ? dyn_cast_or_null<FunctionDecl>(Local->getParentFunctionOrMethod())
                       : nullptr;
  const FunctionValueFlow *Flow = FD && Read ? TU.valueFlow(FD) : nullptr;
  if (!Stores || !Flow)
    return Stores;
  llvm::erase_if(*Stores, [&](const TensorStore &Store) {
    std::optional<bool> Reaches = Flow->reaches(Store.Statement, Container, Read);
    return Reaches && !*Reaches;
  });
  return Stores;
}

/// Whether one use of a tensor storage only reads it: the object of a LibTorch
/// method that does not write (no `_` suffix, no data_ptr/accessor), a
/// subscript read, an argument of a LibTorch call, or a lambda capture (the
/// lambda body's uses are among the uses).
bool isReadOnlyUse(ASTContext &Ctx, const Expr *Use) {
  const Stmt *Parent = consumerOf(Ctx, Use);
  if (isa_and_nonnull<LambdaExpr>(Parent))
    return true;
  if (const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(Parent);
      MC && MC->getImplicitObjectArgument() &&
      ignoreWrappers(MC->getImplicitObjectArgument())->IgnoreImplicit() == Use) {
    llvm::StringRef Name = calleeName(MC);
    return isInTorchNamespace(MC->getDirectCallee()) && !mayWriteTensorMemory(Name) &&
           !Name.contains("accessor");
  }
  if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(Parent);
      Op && (Op->isAssignmentOp() || Op->getOperator() == OO_Subscript) &&
      ignoreWrappers(Op->getArg(0))->IgnoreImplicit() == Use)
    return !Op->isAssignmentOp(); // `data[i]`: a view, read where it is used
  const auto *Call = dyn_cast_or_null<CallExpr>(Parent);
  return Call && isInTorchNamespace(Call->getDirectCallee());
}

/// Whether a local tensor variable is only read in its function.
bool onlyRead(TranslationUnitAnalysis &TU, const VarDecl *VD) {
  std::optional<std::vector<const Expr *>> Uses = storageUses(TU, VD);
  return Uses && llvm::all_of(*Uses, [&](const Expr *Use) { return isReadOnlyUse(TU.context(), Use); });
}

/// Whether a use of a tensor storage that does not only read it may put
/// another tensor object there: in-place LibTorch ops (`add_`, `copy_`,
/// `f[i] = v`, an `out=` argument) keep the object, its device, pinning and
/// dtype; `set_` swaps the storage; code that is not LibTorch's may assign
/// through a mutable reference or a pointer.
static bool mayReplaceObject(ASTContext &Ctx, const Expr *Use) {
  const Stmt *Parent = consumerOf(Ctx, Use);
  if (const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(Parent);
      MC && MC->getImplicitObjectArgument() &&
      ignoreWrappers(MC->getImplicitObjectArgument())->IgnoreImplicit() == Use)
    return !isInTorchNamespace(MC->getDirectCallee()) || calleeName(MC) == "set_";
  if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(Parent);
      Op && Op->getNumArgs() >= 1 && ignoreWrappers(Op->getArg(0))->IgnoreImplicit() == Use)
    return Op->getOperator() == OO_Equal; // compound assignments and `f[i] = v` write in place
  // Copied or converted into another object (a copy constructor copies the
  // fields; `x.index({f_})` copy-initialises a TensorIndex, and the parent map
  // sees the braced list's syntactic form): a read. A move leaves an undefined
  // tensor, which no fact reads.
  for (const Expr *Inner = Use;;) {
    const auto *Outer =
        dyn_cast_or_null<Expr>(ancestorSkipping<ParenExpr, MaterializeTemporaryExpr>(Ctx, Inner).get<Stmt>());
    if (isa_and_nonnull<CXXConstructExpr, InitListExpr>(Outer))
      return false;
    const auto *Cast = dyn_cast_or_null<ImplicitCastExpr>(Outer);
    if (!Cast)
      break;
    if (Cast->getCastKind() == CK_ConstructorConversion || Cast->getCastKind() == CK_UserDefinedConversion)
      return false;
    Inner = Cast;
  }
  const auto *Call = dyn_cast_or_null<CallExpr>(Parent);
  if (!Call)
    return true; // its address taken, bound to a reference, returned by reference
  if (isInTorchNamespace(Call->getDirectCallee()))
    return false;
  // A member operator's arguments start with its object, its parameters after it.
  unsigned Skipped =
      isa<CXXOperatorCallExpr>(Call) && isa_and_nonnull<CXXMethodDecl>(Call->getDirectCallee());
  for (unsigned I = Skipped; I < Call->getNumArgs(); ++I)
    if (ignoreWrappers(Call->getArg(I))->IgnoreImplicit() == Use)
      return argumentMayBeModified(Call->getDirectCallee(), I - Skipped);
  return true;
}

std::optional<FieldStores> tensorFieldStores(TranslationUnitAnalysis &TU, const FieldDecl *Field) {
  ASTContext &Ctx = TU.context();
  std::optional<std::vector<const Expr *>> Uses = storageUses(TU, Field);
  if (!Uses)
    return std::nullopt;
  FieldStores Result;
  for (const Expr *Init : fieldInitialisers(Field))
    Result.Stores.push_back({Init, Init, true});
  for (const Expr *Use : *Uses) {
    if (const auto *Assign = dyn_cast_or_null<CXXOperatorCallExpr>(consumerOf(Ctx, Use));
        Assign && Assign->getOperator() == OO_Equal && Assign->getNumArgs() == 2 &&
        ignoreWrappers(Assign->getArg(0))->IgnoreImplicit() == Use) {
      Result.Stores.push_back({Assign->getArg(1), Assign, inConstructorOf(Ctx, Assign, Field)});
      continue;
    }
    if (isReadOnlyUse(Ctx, Use))
      continue;
    Result.OnlyRead = false;
    Result.MayBeReplaced |= mayReplaceObject(Ctx, Use);
  }
  return Result;
}

std::optional<StoredValues> fieldValuesAt(TranslationUnitAnalysis &TU, const FieldDecl *Field,
                                          const Expr *Read) {
  ASTContext &Ctx = TU.context();
  if (!isClosedProgramField(Ctx.getSourceManager(), Field))
    return std::nullopt;
  StoredValues Values;
  const auto *Member = dyn_cast_or_null<MemberExpr>(ignoreWrappers(Read));
  if (Member && isa<CXXThisExpr>(Member->getBase()->IgnoreParenImpCasts())) {
    const FunctionDecl *FD = enclosingFunction(Ctx, Member);
    const FunctionValueFlow *Flow = FD && FD->getBody() ? TU.valueFlow(FD) : nullptr;
    if (auto Assignments = Flow ? Flow->assignmentsReaching(Field, Member) : std::nullopt) {
      Values.Assignments = std::move(*Assignments);
      return Values;
    }
  }
  std::optional<FieldStores> Stores = tensorFieldStores(TU, Field);
  if (!Stores || Stores->MayBeReplaced || Stores->Stores.empty())
    return std::nullopt;
  Values.ProgramStores = std::move(Stores->Stores);
  return Values;
}

} // namespace torch_syncfree
