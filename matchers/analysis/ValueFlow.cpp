#include "analysis/ValueFlow.h"

#include "analysis/Containers.h"

#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/Analysis/Analyses/PostOrderCFGView.h"
#include "clang/Analysis/FlowSensitive/DataflowWorklist.h"

using namespace clang;

namespace torch_syncfree {

/// The field of `*this` E names (`f_`, `this->f_`), if any.
static const FieldDecl *namedFieldOfThis(const Expr *E) {
  const auto *Member = dyn_cast_or_null<MemberExpr>(E ? E->IgnoreParenImpCasts() : nullptr);
  if (!Member || !isa<CXXThisExpr>(Member->getBase()->IgnoreParenImpCasts()))
    return nullptr;
  return dyn_cast<FieldDecl>(Member->getMemberDecl());
}

/// The variable, structured binding or field of `*this` E names, looking
/// through parentheses and implicit casts. A method's fields are states of its
/// flow as its locals are; what other methods store is their value at entry.
static const ValueDecl *namedVariable(const Expr *E) {
  if (const FieldDecl *Field = namedFieldOfThis(E))
    return Field;
  const auto *Ref = dyn_cast_or_null<DeclRefExpr>(E ? E->IgnoreParenImpCasts() : nullptr);
  if (!Ref || !isa<VarDecl, BindingDecl>(Ref->getDecl()))
    return nullptr;
  return Ref->getDecl();
}

/// The class whose fields a call may assign through `this`: a non-const
/// method called on `*this`, or `this`/`*this` passed to other code.
static const CXXRecordDecl *classWrittenThroughThis(const CallExpr *Call) {
  auto IsThis = [](const Expr *E) {
    const Expr *Inner = E->IgnoreParenImpCasts();
    if (const auto *Deref = dyn_cast<UnaryOperator>(Inner); Deref && Deref->getOpcode() == UO_Deref)
      Inner = Deref->getSubExpr()->IgnoreParenImpCasts();
    return isa<CXXThisExpr>(Inner);
  };
  auto ClassOf = [](const Expr *This) {
    QualType T = This->getType();
    if (T->isPointerType())
      T = T->getPointeeType();
    return T->getAsCXXRecordDecl();
  };
  if (const auto *Member = dyn_cast<CXXMemberCallExpr>(Call)) {
    const CXXMethodDecl *Method = Member->getMethodDecl();
    const Expr *Object = Member->getImplicitObjectArgument();
    if (Object && IsThis(Object) && Method && !Method->isConst() && !Method->isStatic())
      return ClassOf(Object->IgnoreParenImpCasts());
  }
  const FunctionDecl *FD = Call->getDirectCallee();
  if (FD && isInTorchNamespace(FD))
    return nullptr;
  for (unsigned I = 0; I < Call->getNumArgs(); ++I)
    if (IsThis(Call->getArg(I)))
      if (const CXXRecordDecl *Record = ClassOf(Call->getArg(I)->IgnoreParenImpCasts()))
        return Record;
  return nullptr;
}

/// The implicit `__range` variable of a range-for.
static bool isRangeOfRangeFor(ASTContext &Ctx, const VarDecl *VD) {
  const CXXForRangeStmt *Loop = VD->isImplicit() ? rangeForDeclaring(Ctx, VD) : nullptr;
  return Loop && Loop->getLoopVariable() != VD;
}

bool onlyGivesAccess(const CallExpr *Call) {
  const FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr;
  if (!FD || !FD->isInStdNamespace() || !FD->getDeclName().isIdentifier())
    return false;
  ContainerOp Op = containerOp(FD->getName());
  return FD->getName() == "get" || Op == ContainerOp::Iterate || Op == ContainerOp::Inspect;
}

bool isStdTie(const CallExpr *Call) {
  const FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr;
  return FD && FD->isInStdNamespace() && FD->getDeclName().isIdentifier() && FD->getName() == "tie";
}

unsigned bindingIndex(const BindingDecl *Binding) {
  unsigned Index = 0;
  if (const auto *Decomposed = dyn_cast_or_null<DecompositionDecl>(Binding->getDecomposedDecl()))
    for (const BindingDecl *Other : Decomposed->bindings()) {
      if (Other == Binding)
        break;
      ++Index;
    }
  return Index;
}

/// The named container (a variable or a field of `*this` of a std container
/// type) that E accesses an element of: `c[i]`, `c.at(i)`, `c.front()`.
static const Expr *elementAccessTarget(const Expr *E) {
  E = E ? E->IgnoreParenImpCasts() : nullptr;
  const Expr *Object = nullptr;
  if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(E);
      Op && Op->getOperator() == OO_Subscript && Op->getNumArgs() == 2)
    Object = Op->getArg(0);
  else if (const auto *Member = dyn_cast_or_null<CXXMemberCallExpr>(E);
           Member && containerOp(calleeName(Member)) == ContainerOp::ElementAccess)
    Object = Member->getImplicitObjectArgument();
  if (!Object || !namedVariable(Object) ||
      !isStdContainer(Object->getType().getNonReferenceType(), /*Maps=*/true))
    return nullptr;
  return Object->IgnoreParenImpCasts();
}

/// The definitions one CFG element makes: a declaration (with its structured
/// bindings), an assignment to a variable, `std::tie(a, b) = rhs`, an element
/// stored into a named std container (`c.push_back(v)`, `c[i] = v`; it keeps
/// the other elements), `c.clear()` (an empty container again), or a call
/// passing a variable to a non-const reference parameter of code that is not
/// LibTorch's (LibTorch's in-place functions change contents, not the object).
static void definitionsMadeBy(const Stmt *S, llvm::SmallVectorImpl<ValueDefinition> &Out) {
  using Kind = ValueDefinition::Kind;
  if (const auto *DS = dyn_cast<DeclStmt>(S)) {
    for (const Decl *Declared : DS->decls()) {
      const auto *VD = dyn_cast<VarDecl>(Declared);
      if (!VD)
        continue;
      Out.push_back({Kind::Assigned, VD, S, VD->getInit(), std::nullopt});
      if (const auto *Decomposed = dyn_cast<DecompositionDecl>(VD))
        for (const BindingDecl *Binding : Decomposed->bindings())
          Out.push_back({Kind::Assigned, Binding, S, VD->getInit(), bindingIndex(Binding)});
    }
    return;
  }
  // `c[i] = v`, `c.at(i) += v` on a container's element (a builtin or a class
  // assignment).
  auto ElementStore = [&](const Expr *Left, const Expr *Right) {
    if (const Expr *Target = elementAccessTarget(Left)) {
      Out.push_back({Kind::ElementStore, namedVariable(Target), S, Right, std::nullopt, Target});
      return true;
    }
    return false;
  };
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S)) {
    if (Op->isAssignmentOp() && Op->getNumArgs() == 2 && ElementStore(Op->getArg(0), Op->getArg(1)))
      return;
    if (Op->getOperator() != OO_Equal || Op->getNumArgs() != 2)
      return;
    if (const ValueDecl *Target = namedVariable(Op->getArg(0))) {
      Out.push_back(
          {Kind::Assigned, Target, S, Op->getArg(1), std::nullopt, Op->getArg(0)->IgnoreParenImpCasts()});
      return;
    }
    const auto *Tie = dyn_cast<CallExpr>(ignoreWrappers(Op->getArg(0)));
    if (isStdTie(Tie))
      for (unsigned I = 0; I < Tie->getNumArgs(); ++I)
        if (const ValueDecl *Target = namedVariable(Tie->getArg(I)))
          Out.push_back({Kind::Assigned, Target, S, Op->getArg(1), I, Tie->getArg(I)->IgnoreParenImpCasts()});
    return;
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(S)) {
    if (BO->isAssignmentOp() && ElementStore(BO->getLHS(), BO->getRHS()))
      return;
    if (BO->getOpcode() == BO_Assign)
      if (const ValueDecl *Target = namedVariable(BO->getLHS()))
        Out.push_back(
            {Kind::Assigned, Target, S, BO->getRHS(), std::nullopt, BO->getLHS()->IgnoreParenImpCasts()});
    return;
  }
  const auto *Call = dyn_cast<CallExpr>(S);
  if (!Call)
    return;
  // A method that may store into this object's fields: each may change.
  if (const CXXRecordDecl *Record = classWrittenThroughThis(Call))
    for (const FieldDecl *Field : Record->fields())
      Out.push_back({Kind::Escaped, Field, S, nullptr, std::nullopt});
  if (const auto *Member = dyn_cast<CXXMemberCallExpr>(Call)) {
    // What a std container's own method does to it (analysis/Containers.h).
    const Expr *Object = Member->getImplicitObjectArgument();
    const ValueDecl *Container = Object ? namedVariable(Object) : nullptr;
    if (!Container || !isStdContainer(Object->getType().getNonReferenceType(), /*Maps=*/true))
      return;
    llvm::StringRef Name = calleeName(Member);
    const Expr *Target = Object->IgnoreParenImpCasts();
    if (containerOp(Name) == ContainerOp::Add)
      Out.push_back({Kind::ElementStore, Container, S,
                     Call->getNumArgs() ? Call->getArg(Call->getNumArgs() - 1) : nullptr, std::nullopt,
                     Target});
    else if (Name == "clear")
      Out.push_back({Kind::Assigned, Container, S, nullptr, std::nullopt, Target});
    else if (Name == "swap")
      Out.push_back({Kind::Escaped, Container, S, nullptr, std::nullopt, Target});
    return;
  }
  const FunctionDecl *FD = Call->getDirectCallee();
  // The tie of `std::tie(a, b) = rhs` is evaluated before the assignment, which
  // defines a and b.
  if ((FD && isInTorchNamespace(FD)) || isStdTie(Call) || onlyGivesAccess(Call))
    return;
  // `std::make_pair(a, b)`, `std::make_tuple(a, b)` copy their lvalue
  // arguments (an `std::move(a)` argument is moved from).
  bool CopiesLvalues = FD && FD->isInStdNamespace() && FD->getDeclName().isIdentifier() &&
                       (FD->getName() == "make_pair" || FD->getName() == "make_tuple");
  for (unsigned I = 0; I < Call->getNumArgs(); ++I) {
    const ValueDecl *Target = namedVariable(Call->getArg(I));
    if (!Target || (CopiesLvalues && Call->getArg(I)->isLValue()))
      continue;
    if (argumentMayBeModified(FD, I) &&
        llvm::none_of(Out, [&](const ValueDefinition &D) { return D.Variable == Target; }))
      Out.push_back({Kind::Escaped, Target, S, nullptr, std::nullopt});
  }
}

std::unique_ptr<FunctionValueFlow> FunctionValueFlow::build(const FunctionDecl *FD, ASTContext &Ctx) {
  if (!FD || !FD->getBody())
    return nullptr;
  std::unique_ptr<FunctionValueFlow> Flow(new FunctionValueFlow(FD, Ctx));
  CFG::BuildOptions Options;
  Options.setAllAlwaysAdd();
  Flow->Graph = CFG::buildCFG(FD, FD->getBody(), &Ctx, Options);
  if (!Flow->Graph)
    return nullptr;
  for (const CFGBlock *Block : *Flow->Graph)
    for (unsigned I = 0; I < Block->size(); ++I)
      if (std::optional<CFGStmt> Element = (*Block)[I].getAs<CFGStmt>()) {
        const Stmt *S = Element->getStmt();
        Flow->Position.try_emplace(S, Block, I);
        llvm::SmallVector<ValueDefinition, 2> Made;
        definitionsMadeBy(S, Made);
        for (ValueDefinition &Definition : Made) {
          Flow->DefinitionAtSite.try_emplace({Definition.Site, Definition.Variable},
                                             Flow->Definitions.size());
          if (Definition.Target)
            Flow->DefinitionOfTarget.try_emplace(Definition.Target, Flow->Definitions.size());
          Flow->DefinitionsAt[{Block->getBlockID(), I}].push_back(Flow->Definitions.size());
          Flow->Definitions.push_back(Definition);
        }
      }
  Flow->findAliases();
  for (const ValueDefinition &Definition : Flow->Definitions)
    if (Flow->EntryBit.try_emplace(Definition.Variable, Flow->Definitions.size() + Flow->EntryVariable.size())
            .second)
      Flow->EntryVariable.push_back(Definition.Variable);
  Flow->solve();
  return Flow;
}

void FunctionValueFlow::findAliases() {
  using Kind = ValueDefinition::Kind;
  auto Alias = [&](const ValueDecl *Variable, const Stmt *Site) {
    if (AliasDefinition.try_emplace(Variable, Definitions.size()).second)
      Definitions.push_back({Kind::Aliased, Variable, Site, nullptr, std::nullopt});
  };
  // `T &r = x;` and `&x`: the reference or pointer may write x anywhere later.
  std::function<void(const Stmt *)> Visit = [&](const Stmt *S) {
    if (!S)
      return;
    const FieldDecl *Field = isa<MemberExpr>(S) ? namedFieldOfThis(cast<Expr>(S)) : nullptr;
    if (Field && !isa_and_nonnull<MemberExpr>(ancestorSkipping<ParenExpr>(Ctx, cast<Expr>(S)).get<Stmt>())) {
      DynTypedNode Parent = ancestorSkipping<ParenExpr>(Ctx, cast<Expr>(S));
      if (const auto *Bound = Parent.get<VarDecl>(); Bound && isMutableReference(Bound->getType()) &&
                                                     Bound->getInit() &&
                                                     Bound->getInit()->IgnoreParens() == S)
        Alias(Field, S);
      if (const auto *Address = Parent.get<UnaryOperator>(); Address && Address->getOpcode() == UO_AddrOf)
        Alias(Field, S);
    }
    if (const auto *Ref = dyn_cast<DeclRefExpr>(S); Ref && isa<VarDecl, BindingDecl>(Ref->getDecl())) {
      DynTypedNode Parent = ancestorSkipping<ParenExpr>(Ctx, Ref);
      // A range-for's own `auto &&__range = c;` reaches c's elements only
      // (through the loop variable), never replaces c.
      if (const auto *Bound = Parent.get<VarDecl>();
          Bound && isMutableReference(Bound->getType()) && Bound->getInit() &&
          Bound->getInit()->IgnoreParens() == Ref && !isRangeOfRangeFor(Ctx, Bound))
        Alias(Ref->getDecl(), Ref);
      if (const auto *Address = Parent.get<UnaryOperator>(); Address && Address->getOpcode() == UO_AddrOf)
        Alias(Ref->getDecl(), Ref);
      // A tie kept for later (`auto t = std::tie(a, b);`) writes a and b when
      // assigned; only `std::tie(a, b) = rhs` itself is a definition.
      if (const auto *Tie = Parent.get<CallExpr>(); Tie && isStdTie(Tie)) {
        const auto *Assign = dyn_cast_or_null<CXXOperatorCallExpr>(
            ancestorSkipping<ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr>(Ctx, Tie)
                .get<Stmt>());
        if (!Assign || Assign->getOperator() != OO_Equal || ignoreWrappers(Assign->getArg(0)) != Tie)
          Alias(Ref->getDecl(), Tie);
      }
    }
    // A lambda that captures x by reference and assigns it, whenever it runs.
    if (const auto *Lambda = dyn_cast<LambdaExpr>(S)) {
      llvm::SmallVector<ValueDefinition, 2> Made;
      std::function<void(const Stmt *)> Collect = [&](const Stmt *Inner) {
        if (!Inner)
          return;
        definitionsMadeBy(Inner, Made);
        for (const Stmt *Child : Inner->children())
          Collect(Child);
      };
      Collect(Lambda->getBody());
      for (const LambdaCapture &Capture : Lambda->captures()) {
        if (Capture.capturesVariable() && Capture.getCaptureKind() == LCK_ByRef)
          if (const ValueDecl *Captured = Capture.getCapturedVar();
              llvm::any_of(Made, [&](const ValueDefinition &D) { return D.Variable == Captured; }))
            Alias(Captured, Lambda);
        // `[this]` (or `[&]`): the fields it stores into.
        if (Capture.capturesThis())
          for (const ValueDefinition &D : Made)
            if (isa<FieldDecl>(D.Variable))
              Alias(D.Variable, Lambda);
      }
    }
    for (const Stmt *Child : S->children())
      Visit(Child);
  };
  Visit(Function->getBody());
}

void FunctionValueFlow::transfer(const CFGBlock &Block, unsigned End, DefinitionSet &State) const {
  for (unsigned I = 0; I < End; ++I) {
    auto Made = DefinitionsAt.find({Block.getBlockID(), I});
    if (Made == DefinitionsAt.end())
      continue;
    for (unsigned Index : Made->second) {
      if (Definitions[Index].How == ValueDefinition::Kind::ElementStore) {
        State.set(Index); // the container's other elements stay
        continue;
      }
      // Kill the variable's other definitions (and "not yet defined"): few
      // bits are set, so scanning them beats masking with all its definitions.
      const ValueDecl *Variable = Definitions[Index].Variable;
      llvm::SmallVector<unsigned, 4> Killed;
      for (unsigned Bit : State)
        if (variableOfBit(Bit) == Variable)
          Killed.push_back(Bit);
      for (unsigned Bit : Killed)
        State.reset(Bit);
      State.set(Index);
    }
  }
}

void FunctionValueFlow::solve() {
  const unsigned Blocks = Graph->getNumBlockIDs();
  BlockEntry.assign(Blocks, DefinitionSet());
  std::vector<DefinitionSet> BlockExit(Blocks);
  std::vector<bool> Visited(Blocks, false);
  PostOrderCFGView Order(Graph.get());
  ForwardDataflowWorklist Work(*Graph, &Order);
  const CFGBlock &Entry = Graph->getEntry();
  Work.enqueueBlock(&Entry);
  while (const CFGBlock *Block = Work.dequeue()) {
    DefinitionSet In;
    if (Block == &Entry) {
      for (unsigned K = 0; K < EntryVariable.size(); ++K)
        In.set(Definitions.size() + K);
    } else {
      for (const CFGBlock::AdjacentBlock &Pred : Block->preds())
        if (const CFGBlock *P = Pred.getReachableBlock(); P && Visited[P->getBlockID()])
          In |= BlockExit[P->getBlockID()];
    }
    unsigned Id = Block->getBlockID();
    bool First = !Visited[Id];
    if (!First && In == BlockEntry[Id])
      continue;
    Visited[Id] = true;
    BlockEntry[Id] = In;
    DefinitionSet Out = In;
    transfer(*Block, Block->size(), Out);
    if (First || Out != BlockExit[Id]) {
      BlockExit[Id] = std::move(Out);
      Work.enqueueSuccessors(Block);
    }
  }
}

std::optional<std::pair<const CFGBlock *, unsigned>> FunctionValueFlow::positionOf(const Stmt *S) const {
  const Stmt *Current = S;
  auto Found = Position.find(Current);
  while (Found == Position.end()) {
    DynTypedNodeList Parents = Ctx.getParents(*Current);
    if (Parents.empty() || !Parents[0].get<Stmt>())
      return std::nullopt;
    Current = Parents[0].get<Stmt>();
    if (isa<LambdaExpr>(Current))
      return std::nullopt; // a capture: when the lambda runs is not known here
    Found = Position.find(Current);
  }
  return Found->second;
}

std::optional<ReachingDefinitions> FunctionValueFlow::reachingAt(const ValueDecl *D, const Expr *Read) const {
  std::optional<std::pair<const CFGBlock *, unsigned>> At = positionOf(Read);
  if (!At)
    return std::nullopt;
  ReachingDefinitions Result;
  auto Entry = EntryBit.find(D);
  if (Entry == EntryBit.end()) {
    Result.FromEntry = true; // never defined in this function
    return Result;
  }
  const auto &[Block, Index] = *At;
  DefinitionSet State = BlockEntry[Block->getBlockID()];
  transfer(*Block, Index, State);
  for (unsigned Bit : State)
    if (variableOfBit(Bit) == D) {
      if (Bit == Entry->second)
        Result.FromEntry = true;
      else
        Result.Definitions.push_back(Bit);
    }
  if (auto Alias = AliasDefinition.find(D); Alias != AliasDefinition.end() && !State.test(Alias->second))
    Result.Definitions.insert(llvm::lower_bound(Result.Definitions, Alias->second), Alias->second);
  return Result;
}

std::optional<bool> FunctionValueFlow::reaches(const Stmt *Site, const ValueDecl *D, const Expr *Read) const {
  if (AliasDefinition.count(D))
    return true;
  auto Made = DefinitionAtSite.find({Site, D});
  std::optional<ReachingDefinitions> At = Made != DefinitionAtSite.end() ? reachingAt(D, Read) : std::nullopt;
  if (!At)
    return std::nullopt;
  return llvm::is_contained(At->Definitions, Made->second);
}

std::optional<llvm::SmallVector<const ValueDefinition *, 2>>
FunctionValueFlow::assignmentsReaching(const ValueDecl *D, const Expr *Read) const {
  std::optional<ReachingDefinitions> Reaching = reachingAt(D, Read);
  if (!Reaching || Reaching->FromEntry || Reaching->Definitions.empty())
    return std::nullopt;
  llvm::SmallVector<const ValueDefinition *, 2> Assignments;
  for (unsigned Index : Reaching->Definitions) {
    const ValueDefinition &Definition = Definitions[Index];
    if (Definition.isOpaque() || !Definition.Value)
      return std::nullopt;
    Assignments.push_back(&Definition);
  }
  return Assignments;
}

std::optional<bool> FunctionValueFlow::storeReaches(const Expr *Target, const Expr *Read) const {
  auto Made = Target ? DefinitionOfTarget.find(Target->IgnoreParenImpCasts()) : DefinitionOfTarget.end();
  if (Made == DefinitionOfTarget.end())
    return std::nullopt;
  std::optional<ReachingDefinitions> At = reachingAt(Definitions[Made->second].Variable, Read);
  if (!At)
    return std::nullopt;
  // An alias may store or clear anywhere: what it keeps is not known here.
  if (AliasDefinition.count(Definitions[Made->second].Variable))
    return true;
  return llvm::is_contained(At->Definitions, Made->second);
}

std::optional<bool> FunctionValueFlow::declarationReaches(const VarDecl *VD, const Expr *Read) const {
  DynTypedNodeList Parents = Ctx.getParents(*VD);
  const auto *Declaration = Parents.empty() ? nullptr : Parents[0].get<DeclStmt>();
  return Declaration ? reaches(Declaration, VD, Read) : std::nullopt;
}

bool FunctionValueFlow::sameDefinition(const DeclRefExpr *A, const DeclRefExpr *B) const {
  if (A->getDecl() != B->getDecl())
    return false;
  std::optional<ReachingDefinitions> AtA = reachingAt(A->getDecl(), A);
  std::optional<ReachingDefinitions> AtB = reachingAt(B->getDecl(), B);
  return AtA && AtB && !AtA->FromEntry && !AtB->FromEntry && AtA->Definitions.size() == 1 &&
         AtA->Definitions == AtB->Definitions &&
         Definitions[AtA->Definitions.front()].How == ValueDefinition::Kind::Assigned;
}

bool FunctionValueFlow::invariantIn(const DeclRefExpr *Read, const Stmt *Loop) const {
  std::optional<ReachingDefinitions> At = reachingAt(Read->getDecl(), Read);
  if (!At)
    return false;
  // Through declarations too: `auto y = (x = f());` defines x inside y's initialiser.
  auto Inside = [&](const Stmt *S) {
    for (DynTypedNode Node = DynTypedNode::create(*S); !Node.getNodeKind().isNone();
         Node = firstParent(Ctx, Node))
      if (Node.get<Stmt>() == Loop)
        return true;
    return false;
  };
  // An alias may write the variable anywhere, the loop included.
  return llvm::none_of(At->Definitions, [&](unsigned I) {
    return Definitions[I].How == ValueDefinition::Kind::Aliased || Inside(Definitions[I].Site);
  });
}

} // namespace torch_syncfree
