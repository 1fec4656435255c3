//===- analysis/DeviceGuards.cpp - Placements tests prove ------------------===//
#include "analysis/DeviceGuards.h"
#include "ApiFacts.h"
#include "utils/AstWalk.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/Builtins.h"

using namespace clang;

namespace torch_syncfree {

namespace {

/// What a condition's value says about the variable: on the CPU when it is
/// true, when it is false.
struct CpuWhen {
  bool IfTrue = false;
  bool IfFalse = false;
};

/// E without the wrappers a condition's value passes through: those of any
/// expression (ignoreWrappers), `static_cast<bool>` and C10_UNLIKELY's
/// `__builtin_expect(x, 0)`.
const Expr *strip(const Expr *E) {
  while (E) {
    E = ignoreWrappers(E);
    if (const auto *Cast = dyn_cast_or_null<ExplicitCastExpr>(E); Cast && Cast->getType()->isBooleanType())
      E = Cast->getSubExpr();
    else if (const auto *Call = dyn_cast_or_null<CallExpr>(E);
             Call && Call->getBuiltinCallee() == Builtin::BI__builtin_expect && Call->getNumArgs() == 2)
      E = Call->getArg(0);
    else
      return E;
  }
  return E;
}

/// The reference to Var that E denotes, directly or through `.device()` (of a
/// tensor) and `.type()` (of a device): `t`, `t.device()`, `d.type()`.
const DeclRefExpr *deviceOf(const Expr *E, const VarDecl *Var) {
  E = strip(E);
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(E); Construct && Construct->getNumArgs() == 1)
    E = strip(Construct->getArg(0)); // a copy of `t.device()`
  if (const auto *Call = dyn_cast<CXXMemberCallExpr>(E)) {
    const auto *Method = Call->getMethodDecl();
    if (!Method || !Method->getDeclName().isIdentifier() || Call->getNumArgs() != 0 ||
        !(Method->getName() == "device" || Method->getName() == "type"))
      return nullptr;
    return deviceOf(Call->getImplicitObjectArgument(), Var);
  }
  const auto *Ref = dyn_cast<DeclRefExpr>(E);
  return Ref && Ref->getDecl() == Var ? Ref : nullptr;
}

std::optional<bool> kindNamesCuda(DeviceKind Kind) {
  if (Kind == DeviceKind::Other)
    return std::nullopt;
  return Kind == DeviceKind::Cuda;
}

/// Whether E names the CUDA device type (true), the CPU (false) or neither:
/// `torch::kCUDA`, `c10::DeviceType::CPU`, `torch::Device("cuda:0")`.
std::optional<bool> namesCuda(const Stmt *S) {
  if (!S)
    return std::nullopt;
  if (const auto *Ref = dyn_cast<DeclRefExpr>(S)) {
    const NamedDecl *D = Ref->getDecl();
    if (!isa<EnumConstantDecl>(D) && !isa<VarDecl>(D))
      return std::nullopt;
    if (!D->getDeclName().isIdentifier())
      return std::nullopt;
    StringRef Name = D->getName();
    // An enumerator (`DeviceType::CUDA`) or LibTorch's constant (`kCUDA`), not
    // a variable that happens to be called `CUDA`.
    if (!isa<EnumConstantDecl>(D) && !Name.starts_with("k"))
      return std::nullopt;
    return kindNamesCuda(deviceKindOfSpelling(Name));
  }
  if (const auto *Text = dyn_cast<StringLiteral>(S)) {
    if (Text->getCharByteWidth() != 1)
      return std::nullopt;
    return kindNamesCuda(deviceKindOfSpelling(Text->getString()));
  }
  for (const Stmt *Child : S->children())
    if (std::optional<bool> Named = namesCuda(Child))
      return Named;
  return std::nullopt;
}

CpuWhen comparison(BinaryOperatorKind Op, const Expr *L, const Expr *R, const VarDecl *Var) {
  if (Op != BO_EQ && Op != BO_NE && Op != BO_LT && Op != BO_GE && Op != BO_GT)
    return {};
  if (!deviceOf(L, Var) && deviceOf(R, Var) && (Op == BO_EQ || Op == BO_NE))
    std::swap(L, R);
  if (deviceOf(L, Var) && (Op == BO_EQ || Op == BO_NE)) {
    std::optional<bool> Cuda = namesCuda(R);
    if (!Cuda)
      return {};
    // `== kCPU` true, `== kCUDA` false, `!= kCUDA` true, `!= kCPU` false.
    bool CpuIfEqual = !*Cuda;
    CpuWhen When;
    (Op == BO_EQ) == CpuIfEqual ? When.IfTrue = true : When.IfFalse = true;
    return When;
  }
  // `t.get_device()` is -1 on the CPU: `< 0`, `== -1` hold there; `>= 0`,
  // `> -1`, `!= -1` do not.
  const auto *Call = dyn_cast<CXXMemberCallExpr>(strip(L));
  const auto *Method = Call ? Call->getMethodDecl() : nullptr;
  if (!Method || !Method->getDeclName().isIdentifier() || Method->getName() != "get_device" ||
      !deviceOf(Call->getImplicitObjectArgument(), Var))
    return {};
  Expr::EvalResult Bound;
  const Expr *Constant = strip(R);
  if (!Constant || Constant->isValueDependent() || !Constant->EvaluateAsInt(Bound, Var->getASTContext()))
    return {};
  int64_t Value = Bound.Val.getInt().getExtValue();
  CpuWhen When;
  if ((Op == BO_LT && Value == 0) || (Op == BO_EQ && Value == -1))
    When.IfTrue = true;
  else if ((Op == BO_GE && Value == 0) || (Op == BO_GT && Value == -1) || (Op == BO_NE && Value == -1))
    When.IfFalse = true;
  return When;
}

CpuWhen cpuWhen(const Expr *Cond, const VarDecl *Var) {
  Cond = strip(Cond);
  if (!Cond)
    return {};
  if (const auto *Not = dyn_cast<UnaryOperator>(Cond); Not && Not->getOpcode() == UO_LNot) {
    CpuWhen Inner = cpuWhen(Not->getSubExpr(), Var);
    return {Inner.IfFalse, Inner.IfTrue};
  }
  if (const auto *Binary = dyn_cast<BinaryOperator>(Cond)) {
    if (Binary->getOpcode() == BO_LAnd || Binary->getOpcode() == BO_LOr) {
      CpuWhen L = cpuWhen(Binary->getLHS(), Var), R = cpuWhen(Binary->getRHS(), Var);
      if (Binary->getOpcode() == BO_LAnd)
        return {L.IfTrue || R.IfTrue, L.IfFalse && R.IfFalse};
      return {L.IfTrue && R.IfTrue, L.IfFalse || R.IfFalse};
    }
    return comparison(Binary->getOpcode(), Binary->getLHS(), Binary->getRHS(), Var);
  }
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Cond); Op && Op->getNumArgs() == 2) {
    if (Op->getOperator() == OO_EqualEqual)
      return comparison(BO_EQ, Op->getArg(0), Op->getArg(1), Var);
    if (Op->getOperator() == OO_ExclaimEqual)
      return comparison(BO_NE, Op->getArg(0), Op->getArg(1), Var);
    return {};
  }
  if (const auto *Call = dyn_cast<CXXMemberCallExpr>(Cond)) {
    const auto *Method = Call->getMethodDecl();
    if (!Method || !Method->getDeclName().isIdentifier() || Call->getNumArgs() != 0 ||
        !deviceOf(Call->getImplicitObjectArgument(), Var))
      return {};
    if (Method->getName() == "is_cpu")
      return {true, false};
    if (Method->getName() == "is_cuda")
      return {false, true};
  }
  return {};
}

/// Whether control never goes past S: it returns, throws, calls a noreturn
/// function (TORCH_CHECK's failure path), or (\p LoopJumps) breaks or
/// continues.
bool leaves(const Stmt *S, bool LoopJumps) {
  if (!S)
    return false;
  if (isa<ReturnStmt>(S) || ((isa<BreakStmt>(S) || isa<ContinueStmt>(S)) && LoopJumps))
    return true;
  if (const auto *Block = dyn_cast<CompoundStmt>(S))
    return llvm::any_of(Block->body(), [&](const Stmt *Child) { return leaves(Child, LoopJumps); });
  if (const auto *If = dyn_cast<IfStmt>(S))
    return If->getElse() && leaves(If->getThen(), LoopJumps) && leaves(If->getElse(), LoopJumps);
  if (const auto *E = dyn_cast<Expr>(S)) {
    E = strip(E);
    if (isa<CXXThrowExpr>(E))
      return true;
    if (const auto *Call = dyn_cast<CallExpr>(E)) {
      if (const FunctionDecl *Callee = Call->getDirectCallee(); Callee && Callee->isNoReturn())
        return true;
    }
  }
  return false;
}

/// The condition after which S lets control pass only when it is false
/// (`if (C) return;`, TORCH_CHECK's `if (!(C)) fail(..)`, the same in a
/// `do { .. } while (0)` of a macro), or nullptr.
const Expr *exitCondition(const Stmt *S, bool LoopJumps) {
  if (const auto *If = dyn_cast_or_null<IfStmt>(S))
    return !If->getElse() && !If->hasInitStorage() && !If->hasVarStorage() && leaves(If->getThen(), LoopJumps)
               ? If->getCond()
               : nullptr;
  return nullptr;
}

/// The statements of the `do { .. } while (0)` a macro wraps, or none.
llvm::ArrayRef<Stmt *> wrappedStatements(const Stmt *S, ASTContext &Ctx) {
  const auto *Do = dyn_cast_or_null<DoStmt>(S);
  const auto *Body = Do ? dyn_cast_or_null<CompoundStmt>(Do->getBody()) : nullptr;
  Expr::EvalResult Value;
  if (!Body || !Do->getCond() || Do->getCond()->isValueDependent() ||
      !Do->getCond()->EvaluateAsInt(Value, Ctx) || Value.Val.getInt() != 0)
    return {};
  return llvm::ArrayRef(Body->body_begin(), Body->body_end());
}

/// A test that holds at the use: its condition, and whether the use runs when
/// it is true (else when it is false).
bool isLoop(const Stmt *S) {
  return isa<ForStmt>(S) || isa<WhileStmt>(S) || isa<DoStmt>(S) || isa<CXXForRangeStmt>(S);
}

} // namespace

llvm::ArrayRef<DeviceGuards::ExitTest> DeviceGuards::exitTests(const CompoundStmt *Block) {
  auto [Entry, Inserted] = ExitTestsOf.try_emplace(Block);
  if (!Inserted)
    return Entry->second;
  bool InLoopBody = false;
  if (DynTypedNodeList Up = Ctx.getParents(*Block); Up.size() == 1)
    if (const Stmt *Owner = Up[0].get<Stmt>())
      InLoopBody = isLoop(Owner);
  llvm::SmallVector<ExitTest, 2> Tests;
  for (const Stmt *Statement : Block->body()) {
    if (const Expr *Condition = exitCondition(Statement, InLoopBody))
      Tests.push_back({Statement, Condition});
    for (const Stmt *Wrapped : wrappedStatements(Statement, Ctx))
      if (const Expr *Condition = exitCondition(Wrapped, /*LoopJumps=*/false))
        Tests.push_back({Statement, Condition});
  }
  // The map may have grown meanwhile: look the entry up again.
  return ExitTestsOf[Block] = std::move(Tests);
}

namespace {
/// The reference to Var in a test's condition (the point the test sees).
const DeclRefExpr *referenceIn(const Stmt *S, const VarDecl *Var) {
  if (!S)
    return nullptr;
  if (const auto *Ref = dyn_cast<DeclRefExpr>(S); Ref && Ref->getDecl() == Var)
    return Ref;
  for (const Stmt *Child : S->children())
    if (const DeclRefExpr *Found = referenceIn(Child, Var))
      return Found;
  return nullptr;
}

} // namespace

bool DeviceGuards::onCpu(const FunctionValueFlow &Flow, const VarDecl *Var, const DeclRefExpr *Use) {
  if (!Var || !Use)
    return false;
  const SourceManager &SM = Ctx.getSourceManager();
  auto Before = [&](SourceLocation A, SourceLocation B) {
    return SM.isBeforeInTranslationUnit(SM.getExpansionLoc(A), SM.getExpansionLoc(B));
  };
  // Holds at Use when no definition of Var comes between the test and the use:
  // none after the test and before the use (or, with a loop around the use
  // that the test is outside of, before the loop's end), and no alias that may
  // write it.
  auto Holds = [&](const Expr *Condition, bool WhenTrue, const Stmt *LoopAfterTest) {
    CpuWhen When = cpuWhen(Condition, Var);
    if (!(WhenTrue ? When.IfTrue : When.IfFalse))
      return false;
    const DeclRefExpr *Tested = referenceIn(Condition, Var);
    if (!Tested)
      return false;
    SourceLocation Until = LoopAfterTest ? LoopAfterTest->getEndLoc() : Use->getBeginLoc();
    return llvm::none_of(Flow.definitions(), [&](const ValueDefinition &Definition) {
      if (Definition.Variable != Var)
        return false;
      if (Definition.How == ValueDefinition::Kind::Aliased)
        return true;
      if (!Definition.Site)
        return false;
      SourceLocation At = Definition.Site->getBeginLoc();
      return !Before(At, Tested->getBeginLoc()) && (Before(At, Until) || !Before(Until, At));
    });
  };
  // From the use out to the function (or lambda) body: the branch each
  // statement selects, and the tests before it in each block.
  DynTypedNode Child = DynTypedNode::create(*Use);
  // The outermost loop statement below the current parent: around the use,
  // and not around a test found at the parent (unless it is that loop's own).
  const Stmt *LoopBelow = nullptr;
  while (true) {
    DynTypedNodeList Parents = Ctx.getParents(Child);
    if (Parents.size() != 1)
      break;
    // Through a local variable's declaration to its DeclStmt (the use in an
    // initialiser).
    if (const auto *Declared = Parents[0].get<VarDecl>(); Declared && !isa<ParmVarDecl>(Declared)) {
      Child = Parents[0];
      continue;
    }
    const Stmt *ChildStmt = Child.get<Stmt>();
    const Stmt *Parent = Parents[0].get<Stmt>();
    if (!ChildStmt && Child.get<VarDecl>() && Parent) {
      Child = Parents[0];
      continue;
    }
    if (!Parent || !ChildStmt || isa<LambdaExpr>(Parent))
      break; // a declaration (the function's, a field's) or a lambda's body
    bool Proved = false;
    if (const auto *If = dyn_cast<IfStmt>(Parent)) {
      if (ChildStmt == If->getThen() || ChildStmt == If->getElse())
        Proved = Holds(If->getCond(), ChildStmt == If->getThen(), LoopBelow);
    } else if (const auto *Conditional = dyn_cast<ConditionalOperator>(Parent)) {
      if (ChildStmt == Conditional->getTrueExpr() || ChildStmt == Conditional->getFalseExpr())
        Proved = Holds(Conditional->getCond(), ChildStmt == Conditional->getTrueExpr(), LoopBelow);
    } else if (const auto *Binary = dyn_cast<BinaryOperator>(Parent); Binary && Binary->isLogicalOp()) {
      if (ChildStmt == Binary->getRHS())
        Proved = Holds(Binary->getLHS(), Binary->getOpcode() == BO_LAnd, LoopBelow);
    } else if (const auto *While = dyn_cast<WhileStmt>(Parent); While && ChildStmt == While->getBody()) {
      Proved = Holds(While->getCond(), true, LoopBelow);
    } else if (const auto *For = dyn_cast<ForStmt>(Parent);
               For && ChildStmt == For->getBody() && For->getCond()) {
      Proved = Holds(For->getCond(), true, LoopBelow);
    } else if (const auto *Block = dyn_cast<CompoundStmt>(Parent)) {
      for (const ExitTest &Test : exitTests(Block)) {
        if (!Before(Test.Statement->getBeginLoc(), ChildStmt->getBeginLoc()) || Test.Statement == ChildStmt)
          break; // the tests are in source order: the rest come after the use's statement
        Proved = Holds(Test.Condition, false, LoopBelow);
        if (Proved)
          break;
      }
    }
    if (Proved)
      return true;
    if (isLoop(Parent))
      LoopBelow = Parent;
    Child = Parents[0];
  }
  return false;
}

} // namespace torch_syncfree
