#include "PinnedMemory.h"
#include "ApiFacts.h"
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

/// Views: the result shares its base's memory (and so its pinning).
static bool isViewName(llvm::StringRef Name) {
  return hasApiTrait(Name, View);
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

/// A local sequence container of tensors (std::vector, std::deque, std::array).
static bool isTensorSequence(QualType T) {
  QualType Element;
  return isStdContainer(T, /*Maps=*/false, &Element) && !Element.isNull() && isTensorType(Element);
}

/// Where tensors are kept that the analysis can follow: a local variable (not a
/// parameter, not a reference) or a field of the program's own class whose
/// every store the TU shows (isClosedProgramField).
static const ValueDecl *storageOf(ASTContext &Ctx, const Expr *E) {
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
static std::optional<std::vector<const Expr *>> storageUses(TranslationUnitAnalysis &TU,
                                                           const ValueDecl *Storage) {
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
static bool inConstructorOf(ASTContext &Ctx, const Stmt *S, const FieldDecl *Field) {
  const auto *Ctor = dyn_cast_or_null<CXXConstructorDecl>(enclosingFunction(Ctx, S));
  return Ctor && Ctor->getParent()->getCanonicalDecl() == Field->getParent()->getCanonicalDecl();
}

/// The container (a storage holding a sequence of tensors) whose element \p E
/// reads: `c[i]`, `c.at(i)`, `c.front()`, `c.back()`, or the variable of a
/// range-for over `c`.
static const ValueDecl *containerOfElement(ASTContext &Ctx, const Expr *E) {
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
  return Storage && isTensorSequence(Storage->getType()) ? Storage : nullptr;
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

struct ContainerStore {
  const Expr *Value;
  const Stmt *Statement;
  bool InConstructor = false; ///< a field's store in a constructor of its class
};

/// What a field is initialised with when an object is built: its default
/// member initialiser (it runs in every constructor that does not name the
/// field) and the written initialisers of the constructors defined here.
static std::vector<const Expr *> fieldInitialisers(const FieldDecl *Field) {
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
                          std::vector<ContainerStore> &Stores) {
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
  // An empty container; `vector<Tensor> v(n, t)`, copies and results of other calls are not followed.
  const auto *Construct = dyn_cast<CXXConstructExpr>(Init);
  return Construct && (Construct->getNumArgs() == 0 || isa<CXXDefaultArgExpr>(Construct->getArg(0)));
}

/// What a tensor container (a local or a field) holds: every value stored with
/// push_back / emplace_back (one argument) or `c[i] = v`, and the views its
/// initialisers split off, with the statements that store them; nullopt when it
/// may change in other ways (insert, swap, passed to code that may write it, an
/// element written in place: `c[i].add_(..)`).
static std::optional<std::vector<ContainerStore>> containerStores(TranslationUnitAnalysis &TU,
                                                                  const ValueDecl *Container) {
  ASTContext &Ctx = TU.context();
  std::optional<std::vector<const Expr *>> Uses = storageUses(TU, Container);
  if (!Uses)
    return std::nullopt;
  std::vector<ContainerStore> Stores;
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

/// One hostPinning() question: the fixpoint over the definitions of the
/// variables it reads (analysis/ValueFlow.h).
struct PinningQuery {
  TranslationUnitAnalysis &TU;
  DefinitionFixpoint<Pinning> Definitions;
};
static Pinning pinningOf(PinningQuery &Q, const Expr *E, unsigned Depth);
/// What a tensor field of the program's own class is given: its default member
/// initialiser, the constructors' initialisers and assignments `f = v`.
/// OnlyRead: every other use only reads it.
struct FieldStores {
  std::vector<ContainerStore> Stores;
  bool OnlyRead = true;
};
static std::optional<FieldStores> tensorFieldStores(TranslationUnitAnalysis &TU, const FieldDecl *Field);

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

static Pinning pinningOf(PinningQuery &Q, const Expr *E, unsigned Depth) {
  TranslationUnitAnalysis &TU = Q.TU;
  ASTContext &Ctx = TU.context();
  E = ignoreWrappers(E);
  if (!E || Depth > 16)
    return Pinning::Unknown;
  // An element of a local container: the join of what is stored into it.
  if (const ValueDecl *Container = containerOfElement(Ctx, E)) {
    std::optional<std::vector<ContainerStore>> Stores = containerStores(TU, Container);
    if (!Stores || Stores->empty())
      return Pinning::Unknown;
    Pinning Result = pinningOf(Q, Stores->front().Value, Depth + 1);
    for (const ContainerStore &Store : *Stores)
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
    // A tensor field of the program's own class: the join of what it is given.
    if (const auto *Field = dyn_cast_or_null<FieldDecl>(storageOf(Ctx, ME)); Field && isTensorType(Field->getType())) {
      std::optional<FieldStores> Stores = tensorFieldStores(TU, Field);
      if (!Stores || Stores->Stores.empty())
        return Pinning::Unknown;
      Pinning Result = pinningOf(Q, Stores->Stores.front().Value, Depth + 1);
      for (const ContainerStore &Store : Stores->Stores)
        Result = join(Result, pinningOf(Q, Store.Value, Depth + 1));
      return Result;
    }
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
  PinningQuery Q{TU, {}};
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

/// Whether one use of a tensor storage only reads it: the object of a LibTorch
/// method that does not write (no `_` suffix, no data_ptr/accessor), a
/// subscript read, an argument of a LibTorch call, or a lambda capture (the
/// lambda body's uses are among the uses).
static bool isReadOnlyUse(ASTContext &Ctx, const Expr *Use) {
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
static bool onlyRead(TranslationUnitAnalysis &TU, const VarDecl *VD) {
  std::optional<std::vector<const Expr *>> Uses = storageUses(TU, VD);
  return Uses && llvm::all_of(*Uses, [&](const Expr *Use) { return isReadOnlyUse(TU.context(), Use); });
}

static std::optional<FieldStores> tensorFieldStores(TranslationUnitAnalysis &TU, const FieldDecl *Field) {
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
    if (!isReadOnlyUse(Ctx, Use))
      Result.OnlyRead = false;
  }
  return Result;
}

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
static std::optional<PinEdit> pinStoredValue(TranslationUnitAnalysis &TU, const Expr *Stored, bool TargetIsGpu) {
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
  bool Postfix = isa<DeclRefExpr, CallExpr, MemberExpr, ParenExpr>(Value) &&
                 !(isa<CXXOperatorCallExpr>(Value) &&
                   cast<CXXOperatorCallExpr>(Value)->getOperator() != OO_Subscript &&
                   cast<CXXOperatorCallExpr>(Value)->getOperator() != OO_Call);
  return PinEdit{Range, pinnedText(Text, Postfix, TargetIsGpu)};
}

/// Whether the stores of a field happen once per object, before the copy
/// \p Copy can run: all in constructors of its class, the copy in none of them,
/// and no object of the class built inside a loop (a pinned allocation and a
/// host copy per object would then be paid every step).
static bool storedOnceBefore(TranslationUnitAnalysis &TU, const FieldDecl *Field,
                             llvm::ArrayRef<ContainerStore> Stores, const Stmt *Copy) {
  ASTContext &Ctx = TU.context();
  if (!llvm::all_of(Stores, [](const ContainerStore &Store) { return Store.InConstructor; }))
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
    for (const auto &Found : match(decl(forEachDescendant(
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
                                                         const ValueDecl *Container,
                                                         const Stmt *Copy, bool TargetIsGpu) {
  ASTContext &Ctx = TU.context();
  const SourceManager &SM = Ctx.getSourceManager();
  const Stmt *Loop = TU.enclosingLoop(Copy);
  std::optional<std::vector<ContainerStore>> Stores = containerStores(TU, Container);
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
  for (const ContainerStore &Store : *Stores) {
    // A local is stored once, before the loop that copies (pinning costs a
    // page-locked allocation and a host copy).
    if (isa<VarDecl>(Container) && !SM.isBeforeInTranslationUnit(Store.Statement->getEndLoc(), Loop->getBeginLoc()))
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
                         : hasApiTrait(Name, CopyToDevice)         ? MC->getImplicitObjectArgument()
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
  for (const ContainerStore &Store : Stores->Stores) {
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
