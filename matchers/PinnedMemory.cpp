#include "PinnedMemory.h"
#include "TorchApi.h"

#include "clang/AST/ExprCXX.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringSet.h"
#include <functional>

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

/// A local sequence container of tensors (std::vector, std::deque, std::array).
static bool isTensorSequence(QualType T) {
  const auto *Spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(
      T.getNonReferenceType()->getAsCXXRecordDecl());
  if (!Spec || !Spec->isInStdNamespace() || Spec->getTemplateArgs().size() < 1 ||
      !llvm::is_contained({"vector", "deque", "array"}, Spec->getName()))
    return false;
  const TemplateArgument &Element = Spec->getTemplateArgs()[0];
  return Element.getKind() == TemplateArgument::Type && isTensorType(Element.getAsType());
}

/// The local container whose element \p E reads: `c[i]`, `c.at(i)`, `c.front()`,
/// `c.back()`, or the variable of a range-for over `c`.
static const VarDecl *containerOfElement(ASTContext &Ctx, const Expr *E) {
  E = ignoreWrappers(E);
  const Expr *Container = nullptr;
  if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(E)) {
    if (Op->getOperator() == OO_Subscript && Op->getNumArgs() == 2)
      Container = Op->getArg(0);
  } else if (const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(E)) {
    if (llvm::is_contained({"at", "front", "back"}, calleeName(MC)))
      Container = MC->getImplicitObjectArgument();
  } else if (const auto *Ref = dyn_cast_or_null<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(Ref->getDecl());
    DynTypedNodeList Parents = VD ? Ctx.getParents(*VD) : DynTypedNodeList(DynTypedNode());
    const auto *DS = VD && !Parents.empty() ? Parents[0].get<DeclStmt>() : nullptr;
    DynTypedNodeList Up = DS ? Ctx.getParents(*DS) : DynTypedNodeList(DynTypedNode());
    if (const auto *Range = DS && !Up.empty() ? Up[0].get<CXXForRangeStmt>() : nullptr;
        Range && Range->getLoopVariable() == VD)
      Container = Range->getRangeInit();
  }
  const auto *Ref = Container ? dyn_cast<DeclRefExpr>(ignoreWrappers(Container)) : nullptr;
  const auto *VD = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  if (!VD || isa<ParmVarDecl>(VD) || !VD->hasLocalStorage() || VD->getType()->isReferenceType() ||
      !isTensorSequence(VD->getType()))
    return nullptr;
  return VD;
}

/// What a local tensor container holds: every value stored with push_back /
/// emplace_back (one argument) or `c[i] = v`, with the statements that store
/// them; nullopt when it may change in other ways (insert, swap, passed to code
/// that may write it, an element written in place: `c[i].add_(..)`).
/// Whether the expression that uses an element read (`v[i]`, `v.at(i)`) may
/// write the element: an in-place method (`add_`), `data_ptr`, an assignment.
static bool writesElement(const Stmt *ElementUser) {
  if (const auto *Method = dyn_cast_or_null<CXXMemberCallExpr>(ElementUser);
      Method && (calleeName(Method).ends_with("_") || calleeName(Method).contains("data_ptr")))
    return true;
  const auto *Assign = dyn_cast_or_null<CXXOperatorCallExpr>(ElementUser);
  return Assign && Assign->isAssignmentOp();
}

struct ContainerStore {
  const Expr *Value;
  const Stmt *Statement;
};
static std::optional<std::vector<ContainerStore>> containerStores(TranslationUnitAnalysis &TU,
                                                                  const VarDecl *Container) {
  static const llvm::StringSet<> Readers = {"size", "empty", "begin", "end", "cbegin", "cend",
                                            "at", "front", "back", "operator[]", "reserve",
                                            "capacity"};
  ASTContext &Ctx = TU.context();
  const auto *FD = dyn_cast_or_null<FunctionDecl>(Container->getParentFunctionOrMethod());
  if (!FD || !FD->getBody())
    return std::nullopt;
  std::vector<ContainerStore> Stores;
  if (const Expr *Init = ignoreWrappers(Container->getInit())) {
    const auto *Construct = dyn_cast<CXXConstructExpr>(Init);
    const auto *Views = dyn_cast<CXXMemberCallExpr>(Init);
    if (Views && isInTorchNamespace(Views->getDirectCallee()) &&
        isTensorType(Views->getImplicitObjectArgument()->getType()) &&
        llvm::is_contained({"split", "chunk", "unbind", "tensor_split", "split_with_sizes"},
                           calleeName(Views))) {
      // `auto batches = data.split(n)`: views of one tensor, pinned as it is.
      DynTypedNodeList Parents = Ctx.getParents(*Container);
      const auto *Declaration = Parents.empty() ? nullptr : Parents[0].get<DeclStmt>();
      if (!Declaration)
        return std::nullopt;
      Stores.push_back({Views->getImplicitObjectArgument(), Declaration});
    } else if (!Construct || (Construct->getNumArgs() > 0 && !isa<CXXDefaultArgExpr>(Construct->getArg(0)))) {
      return std::nullopt; // `vector<Tensor> v(n, t)`, copies, results of other calls: not followed
    }
  }
  for (const DeclRefExpr *Use : TU.referencesTo(*FD->getBody(), Container)) {
    const Stmt *Parent = consumerOf(Ctx, Use);
    if (isa_and_nonnull<LambdaExpr>(Parent))
      continue; // a capture: the lambda body's uses are among these uses
    if (const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(Parent)) {
      StringRef Name = calleeName(MC);
      if ((Name == "push_back" || Name == "emplace_back") && MC->getNumArgs() == 1 &&
          isTensorType(MC->getArg(0)->getType())) {
        Stores.push_back({MC->getArg(0), MC});
        continue;
      }
      if (!Readers.contains(Name))
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
        Stores.push_back({Assign->getArg(1), Assign});
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
      DynTypedNodeList Up = Ctx.getParents(*RangeVar);
      const auto *DS = Up.empty() ? nullptr : Up[0].get<DeclStmt>();
      Up = DS ? Ctx.getParents(*DS) : Up;
      Range = DS && !Up.empty() ? Up[0].get<CXXForRangeStmt>() : nullptr;
      if (Range && Range->getRangeStmt() != DS)
        Range = nullptr;
    }
    if (Range) {
      const VarDecl *Element = Range->getLoopVariable();
      if (Element->getType()->isReferenceType() &&
          !Element->getType().getNonReferenceType().isConstQualified())
        for (const DeclRefExpr *ElementUse : TU.referencesTo(*Range->getBody(), Element)) {
          const Stmt *User = consumerOf(Ctx, ElementUse);
          if (const auto *Method = dyn_cast_or_null<CXXMemberCallExpr>(User);
              Method && ignoreWrappers(Method->getImplicitObjectArgument()) == ElementUse &&
              (calleeName(Method).ends_with("_") || calleeName(Method).contains("data_ptr")))
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
  // An element of a local container: the join of what is stored into it.
  if (const VarDecl *Container = containerOfElement(Ctx, E)) {
    std::optional<std::vector<ContainerStore>> Stores = containerStores(TU, Container);
    if (!Stores || Stores->empty())
      return Pinning::Unknown;
    Pinning Result = pinningOf(TU, Stores->front().Value, Depth + 1);
    for (const ContainerStore &Store : *Stores)
      Result = join(Result, pinningOf(TU, Store.Value, Depth + 1));
    return Result;
  }
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

/// Whether a local tensor variable is only read in its function: every use is
/// the object of a LibTorch method that does not write (no `_` suffix, no
/// data_ptr/accessor), a subscript read, or an argument of a LibTorch call.
static bool onlyRead(TranslationUnitAnalysis &TU, const VarDecl *VD) {
  ASTContext &Ctx = TU.context();
  const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  if (!FD || !FD->getBody())
    return false;
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
        return false;
      continue;
    }
    if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(Parent);
        Op && (Op->isAssignmentOp() || Op->getOperator() == OO_Subscript) &&
        ignoreWrappers(Op->getArg(0))->IgnoreImplicit() == Use) {
      if (Op->isAssignmentOp())
        return false;
      continue; // `data[i]`: a view, read where it is used
    }
    const auto *Call = dyn_cast_or_null<CallExpr>(Parent);
    if (!Call || !isInTorchNamespace(Call->getDirectCallee()))
      return false;
  }
  return true;
}

/// `X.pin_memory()`, guarded by `torch::cuda::is_available()` unless the copy
/// goes to a GPU (pin_memory() needs a CUDA runtime).
static std::string pinnedText(const std::string &Text, bool Postfix, bool TargetIsGpu) {
  std::string Object = Postfix ? Text : "(" + Text + ")";
  return TargetIsGpu ? Object + ".pin_memory()"
                     : "(torch::cuda::is_available() ? " + Object + ".pin_memory() : " + Text + ")";
}

/// The container path of pinAtCreation(): pin each element where it is stored.
static std::optional<PinAtCreation> pinContainerElements(TranslationUnitAnalysis &TU,
                                                         const VarDecl *Container,
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
  for (const ContainerStore &Store : *Stores) {
    // Stored once, before the loop that copies (pinning costs a page-locked
    // allocation and a host copy).
    if (!SM.isBeforeInTranslationUnit(Store.Statement->getEndLoc(), Loop->getBeginLoc()))
      return std::nullopt;
    const Expr *Value = ignoreWrappers(Store.Value);
    if (hostPinning(TU, Value) != Pinning::Pageable || Value->getBeginLoc().isMacroID() ||
        Value->getEndLoc().isMacroID())
      return std::nullopt;
    // The pinned element is a copy: what it was made from must not change later
    // (a view of a tensor written afterwards would see the write; the copy not).
    const Expr *Base = Value;
    while (const Expr *Next = viewBase(Base))
      Base = ignoreWrappers(Next);
    if (const auto *Ref = dyn_cast<DeclRefExpr>(Base)) {
      const auto *VD = dyn_cast<VarDecl>(Ref->getDecl());
      if (!VD || isa<ParmVarDecl>(VD) || !VD->hasLocalStorage() || !onlyRead(TU, VD))
        return std::nullopt;
    } else if (const auto *Call = dyn_cast<CallExpr>(Base);
               !Call || !isInTorchNamespace(Call->getDirectCallee()) || calleeName(Call) == "from_blob") {
      return std::nullopt;
    }
    CharSourceRange Range = CharSourceRange::getTokenRange(Value->getSourceRange());
    std::string Text = Lexer::getSourceText(Range, SM, Ctx.getLangOpts()).str();
    if (Text.empty())
      return std::nullopt;
    bool Postfix = isa<DeclRefExpr, CallExpr, MemberExpr, ParenExpr>(Value) &&
                   !(isa<CXXOperatorCallExpr>(Value) &&
                     cast<CXXOperatorCallExpr>(Value)->getOperator() != OO_Subscript &&
                     cast<CXXOperatorCallExpr>(Value)->getOperator() != OO_Call);
    Pin.Edits.push_back({Range, pinnedText(Text, Postfix, TargetIsGpu)});
  }
  return Pin;
}

std::optional<PinAtCreation> pinAtCreation(TranslationUnitAnalysis &TU, const Expr *Source, const Stmt *Copy,
                                           bool TargetIsGpu) {
  ASTContext &Ctx = TU.context();
  const Expr *Base = ignoreWrappers(Source);
  while (!containerOfElement(Ctx, Base) && viewBase(Base))
    Base = ignoreWrappers(viewBase(Base));
  if (const VarDecl *Container = containerOfElement(Ctx, Base)) {
    // Several copies from one container: the first (in source order) carries the
    // edits, so the fixes of the others do not conflict with it.
    const auto *FD = dyn_cast_or_null<FunctionDecl>(Container->getParentFunctionOrMethod());
    const Stmt *FirstCopy = nullptr;
    std::function<void(const Stmt *)> Find = [&](const Stmt *S) {
      if (!S || FirstCopy)
        return;
      if (const auto *MC = dyn_cast<CXXMemberCallExpr>(S)) {
        StringRef Name = calleeName(MC);
        const Expr *From = Name == "copy_" && MC->getNumArgs() > 0 ? MC->getArg(0)
                           : Name == "to" || Name == "cuda"          ? MC->getImplicitObjectArgument()
                                                                     : nullptr;
        for (From = ignoreWrappers(From); From && !containerOfElement(Ctx, From) && viewBase(From);)
          From = ignoreWrappers(viewBase(From));
        if (From && containerOfElement(Ctx, From) == Container) {
          FirstCopy = MC;
          return;
        }
      }
      for (const Stmt *Child : S->children())
        Find(Child);
    };
    Find(FD ? FD->getBody() : nullptr);
    if (FirstCopy != Copy)
      return std::nullopt;
    return pinContainerElements(TU, Container, Copy, TargetIsGpu);
  }
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
  Pin.Variable = VD->getNameAsString();
  // pin_memory() needs a CUDA runtime; the copy's device may be the CPU on a
  // machine without one.
  Pin.Edits.push_back({Range, pinnedText(Text, /*Postfix=*/true, TargetIsGpu)});
  return Pin;
}

} // namespace torch_syncfree
