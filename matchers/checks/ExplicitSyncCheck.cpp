#include "ApiFacts.h"
#include "Barriers.h"
#include "CatalogChecks.h"
#include "CopyCalls.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/ParentMapContext.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

ExplicitSyncCheck::ExplicitSyncCheck(StringRef Name, tidy::ClangTidyContext *Context)
    : SyncCheck(Name, Context),
      ExtraFunctionsOption(Options.get("SynchronizeFunctions", "")) {
  for (StringRef Item : llvm::split(ExtraFunctionsOption, ';'))
    if (!Item.trim().empty())
      ExtraFunctions.push_back(Item.trim().str());
}

void ExplicitSyncCheck::storeOptions(tidy::ClangTidyOptions::OptionMap &Opts) {
  SyncCheck::storeOptions(Opts);
  Options.store(Opts, "SynchronizeFunctions", ExtraFunctionsOption);
}

void ExplicitSyncCheck::registerMatchers(MatchFinder *Finder) {
  if (!ExtraFunctions.empty())
    Finder->addMatcher(callExpr(callee(functionDecl(hasAnyName(std::vector<StringRef>(
                                    ExtraFunctions.begin(), ExtraFunctions.end())))),
                                matchers::userCode(hub()))
                           .bind("call"),
                       this);
  // LibTorch's synchronize functions and methods, and the CUDA runtime's waits.
  llvm::ArrayRef<StringRef> Torch = qualifiedNamesWithTrait(Synchronize);
  llvm::ArrayRef<StringRef> Runtime = qualifiedHostNamesWithTrait(RuntimeWait);
  std::vector<StringRef> Synchronizers(Torch.begin(), Torch.end());
  Synchronizers.insert(Synchronizers.end(), Runtime.begin(), Runtime.end());
  Finder->addMatcher(
      callExpr(callee(functionDecl(hasAnyName(Synchronizers))), matchers::userCode(hub())).bind("call"),
      this);
  // Completion queries (issue 43, item 11): reported where a loop polls one
  // until it says done.
  llvm::ArrayRef<StringRef> TorchQueries = qualifiedNamesWithTrait(CompletionQuery);
  llvm::ArrayRef<StringRef> RuntimeQueries = qualifiedHostNamesWithTrait(RuntimeQuery);
  std::vector<StringRef> Queries(TorchQueries.begin(), TorchQueries.end());
  Queries.insert(Queries.end(), RuntimeQueries.begin(), RuntimeQueries.end());
  Finder->addMatcher(
      callExpr(callee(functionDecl(hasAnyName(Queries))), matchers::userCode(hub())).bind("query"), this);
}

/// The remedy of an intentional barrier, by its reason.
static std::string barrierRemedy(const std::string &Why, const std::string &HostWork) {
  if (!HostWork.empty())
    return "keep it unless that does not use the GPU's results; to wait for less, "
           "record a CUDA event after the work that is needed and wait on that event";
  if (Why.find("timer") != std::string::npos)
    return "for timing, CUDA events measure without stalling the host";
  if (Why.find("ends") != std::string::npos)
    return "keep it: it waits once, at the end";
  return "keep it; to overlap more, double-buffer (two staging buffers, each with its own event)";
}

/// The class of a wait (a call or a polling loop) from barrierReason(): a
/// deliberate barrier with its reason, else a false dependency with \p Removal.
static void classifyBarrier(Finding &F, const std::string &Why, const std::string &HostWork,
                            llvm::StringRef Removal) {
  if (!Why.empty()) {
    F.Use.Kind = Dependency::Intentional;
    F.Use.Reason = Why;
    F.Remedy = barrierRemedy(Why, HostWork);
    return;
  }
  F.Use.Kind = Dependency::False;
  F.Use.Reason = "nothing after it on the host reads or writes memory the GPU uses, and no "
                 "timer or host-buffer release next to it needs the GPU to be idle";
  F.Remedy = Removal.str();
}

void ExplicitSyncCheck::check(const MatchFinder::MatchResult &Result) {
  if (const auto *Query = Result.Nodes.getNodeAs<CallExpr>("query")) {
    checkPoll(Query, *Result.Context);
    return;
  }
  const auto *Call = Result.Nodes.getNodeAs<CallExpr>("call");
  ASTContext &Ctx = *Result.Context;
  StringRef Name = calleeName(Call);
  // A device-to-host cudaMemcpy (or cudaMemcpyDefault) fills host memory:
  // whether the host needs the wait depends on how it uses what arrived.
  std::optional<UseVerdict> Filled;
  if (Name == "cudaMemcpy" && Call->getNumArgs() == 4) {
    // cudaMemcpyDeviceToDevice does not block the host for long; the others do.
    Expr::EvalResult Kind;
    bool KnownKind = Call->getArg(3)->EvaluateAsInt(Kind, Ctx);
    if (KnownKind && Kind.Val.getInt() == 3)
      return;
    if (KnownKind && (Kind.Val.getInt() == 2 || Kind.Val.getInt() == 4)) {
      const Expr *Destination = Call->getArg(0)->IgnoreParenCasts();
      const auto *Address = dyn_cast<UnaryOperator>(Destination);
      const auto *Ref = Address && Address->getOpcode() == UO_AddrOf
                            ? dyn_cast<DeclRefExpr>(Address->getSubExpr()->IgnoreParenImpCasts())
                            : nullptr;
      const auto *Var = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
      if (Var && Var->getType()->isScalarType())
        Filled = classifier(Ctx).classifyFilledVariable(Var, Call);
      else {
        Filled = UseVerdict();
        Filled->Kind = Dependency::True;
        Filled->Reason = "the host reads the copied memory";
      }
    }
  }
  std::string HostWork;
  std::string Why = Filled ? "" : barrierReason(Call, analysis(Ctx), HostWork);
  Finding F;
  F.What = "`" + Name.str() + "` blocks the host until the GPU work it covers is done";
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Call);
  if (Filled) {
    unsigned LoopLine = F.Use.LoopLine;
    F.Use = *Filled;
    F.Use.LoopLine = LoopLine;
    F.Remedy = F.Use.Kind == Dependency::True
                   ? "if the host must decide (a size, a branch), keep the decision on the "
                     "device or read the value less often"
                   : "copy with `cudaMemcpyAsync` on the stream and read the value after the step";
  } else {
    classifyBarrier(F, Why, HostWork, "remove it, or wait on an event for just the work that is needed");
  }
  if (Name == "synchronize" || Name == "cudaDeviceSynchronize")
    F.What += " (PyTorch's sync debug mode does not see this one)";
  report(Call->getBeginLoc(), F);
}

namespace {

/// How a condition reads a completion query: true exactly when the query says
/// the work is done (Done), or exactly when it says it is not (NotDone).
enum class PollSense { Done, NotDone };

PollSense flip(PollSense S) { return S == PollSense::Done ? PollSense::NotDone : PollSense::Done; }

/// The query's result as a condition reads it. \p IsLeaf says which
/// expressions hold the result (the call, or a variable assigned from it);
/// \p RuntimeCode: the result is a cudaError_t (`cudaSuccess` = done,
/// `cudaErrorNotReady` = not yet), else a bool (true = done). Through `!`,
/// comparisons with constants, `&&` and `||` (the other operand is a further
/// condition: `!ev.query() && !stop` still polls); nullopt otherwise.
std::optional<PollSense> pollSense(const Expr *E, llvm::function_ref<bool(const Expr *)> IsLeaf,
                                   bool RuntimeCode, ASTContext &Ctx) {
  if (!E)
    return std::nullopt;
  E = E->IgnoreParens();
  if (const auto *Cast = dyn_cast<ImplicitCastExpr>(E))
    return pollSense(Cast->getSubExpr(), IsLeaf, RuntimeCode, Ctx);
  if (const auto *Cleanups = dyn_cast<ExprWithCleanups>(E))
    return pollSense(Cleanups->getSubExpr(), IsLeaf, RuntimeCode, Ctx);
  if (IsLeaf(E)) // as a truth value: a bool is done when true, a CUDA code when 0
    return RuntimeCode ? PollSense::NotDone : PollSense::Done;
  if (const auto *Not = dyn_cast<UnaryOperator>(E); Not && Not->getOpcode() == UO_LNot) {
    std::optional<PollSense> Inner = pollSense(Not->getSubExpr(), IsLeaf, RuntimeCode, Ctx);
    return Inner ? std::optional<PollSense>(flip(*Inner)) : std::nullopt;
  }
  const Expr *LHS = nullptr, *RHS = nullptr;
  BinaryOperatorKind Op = BO_Comma;
  if (const auto *Binary = dyn_cast<BinaryOperator>(E)) {
    LHS = Binary->getLHS();
    RHS = Binary->getRHS();
    Op = Binary->getOpcode();
  } else if (const auto *Call = dyn_cast<CXXOperatorCallExpr>(E); Call && Call->getNumArgs() == 2) {
    LHS = Call->getArg(0);
    RHS = Call->getArg(1);
    Op = BinaryOperator::getOverloadedOpcode(Call->getOperator());
  }
  if (!LHS)
    return std::nullopt;
  if (Op == BO_LAnd || Op == BO_LOr) {
    std::optional<PollSense> Left = pollSense(LHS, IsLeaf, RuntimeCode, Ctx);
    std::optional<PollSense> Right = pollSense(RHS, IsLeaf, RuntimeCode, Ctx);
    return Left && !Right ? Left : Right && !Left ? Right : std::nullopt;
  }
  if (Op != BO_EQ && Op != BO_NE)
    return std::nullopt;
  auto IsResult = [&](const Expr *X) { return IsLeaf(X->IgnoreParenImpCasts()); };
  const Expr *Constant = IsResult(LHS) ? RHS : IsResult(RHS) ? LHS : nullptr;
  Expr::EvalResult Value;
  if (!Constant || Constant->isValueDependent() || !Constant->EvaluateAsInt(Value, Ctx))
    return std::nullopt;
  llvm::APSInt K = Value.Val.getInt();
  std::optional<PollSense> Equal;
  if (!RuntimeCode)
    Equal = K != 0 ? PollSense::Done : PollSense::NotDone;
  else if (K == 0) // cudaSuccess
    Equal = PollSense::Done;
  else if (K == 600) // cudaErrorNotReady
    Equal = PollSense::NotDone;
  if (!Equal)
    return std::nullopt;
  return Op == BO_EQ ? *Equal : flip(*Equal);
}

/// The condition of a loop; null for `for (;;)` and range-for.
const Expr *loopCondition(const Stmt *Loop) {
  if (const auto *While = dyn_cast<WhileStmt>(Loop))
    return While->getCond();
  if (const auto *Do = dyn_cast<DoStmt>(Loop))
    return Do->getCond();
  if (const auto *For = dyn_cast<ForStmt>(Loop))
    return For->getCond();
  return nullptr;
}

/// A loop that ends only through a statement in its body: `for (;;)`,
/// `while (true)`, `do ... while (1)`.
bool runsUntilLeft(const Stmt *Loop, ASTContext &Ctx) {
  if (isa<CXXForRangeStmt>(Loop))
    return false;
  const Expr *Cond = loopCondition(Loop);
  bool Value = false;
  return !Cond || (!Cond->isValueDependent() && Cond->EvaluateAsBooleanCondition(Value, Ctx) && Value);
}

/// \p Branch leaves the loop it is in: a `break` or `return`, alone or among
/// the statements of a block (not inside a nested loop or switch).
bool leavesLoop(const Stmt *Branch) {
  if (!Branch)
    return false;
  if (isa<BreakStmt, ReturnStmt>(Branch))
    return true;
  if (const auto *Block = dyn_cast<CompoundStmt>(Branch))
    return llvm::any_of(Block->body(), [](const Stmt *S) { return isa<BreakStmt, ReturnStmt>(S); });
  return false;
}

/// How a message names the query: `CUDAEvent::query`, `cudaEventQuery`.
std::string queryName(const CallExpr *Query) {
  const FunctionDecl *FD = Query->getDirectCallee();
  if (const auto *Method = dyn_cast_or_null<CXXMethodDecl>(FD))
    return Method->getParent()->getNameAsString() + "::" + Method->getNameAsString();
  return FD ? FD->getNameAsString() : "query";
}

} // namespace

/// The loop that waits for \p Query to say done, or nullptr: a loop whose
/// condition holds while the query says not done (`while (!ev.query())`,
/// `while (cudaEventQuery(e) == cudaErrorNotReady)`, `do ... while
/// (cudaStreamQuery(s) != cudaSuccess)`, also through a variable the loop
/// assigns the result to), or a loop that only a statement in its body ends,
/// left by an `if` when the query says done (`for (;;) { if (ev.query())
/// break; ... }`). A single query (`if (ev.query()) work();`), or one in a
/// loop that ends anyway (over batches, a counter), waits for nothing.
const Stmt *ExplicitSyncCheck::pollingLoop(const CallExpr *Query, ASTContext &Ctx) {
  bool RuntimeCode = hasHostApiTrait(calleeName(Query), RuntimeQuery);
  // The full expression around the query and the statement that holds it.
  DynTypedNode Below = DynTypedNode::create(*Query);
  DynTypedNode Holder;
  auto IsQuery = [&](const Expr *E) { return E == Query; };
  for (DynTypedNode Node = firstParent(Ctx, Below); !Node.getNodeKind().isNone();
       Below = Node, Node = firstParent(Ctx, Node)) {
    const auto *E = Node.get<Expr>();
    if (!E) {
      Holder = Node;
      break;
    }
    // `done = ev.query()`: the loop polls through the variable.
    if (const auto *Assign = dyn_cast<BinaryOperator>(E); Assign && Assign->isAssignmentOp()) {
      const auto *Ref = dyn_cast<DeclRefExpr>(Assign->getLHS()->IgnoreParenImpCasts());
      const auto *Var = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
      if (!Var || Assign->getOpcode() != BO_Assign)
        return nullptr;
      return loopPollingVariable(Var, Assign->getRHS(), Query, RuntimeCode, Ctx);
    }
  }
  const auto *Full = Below.get<Expr>();
  if (!Full)
    return nullptr;
  if (const auto *Var = Holder.get<VarDecl>()) // `bool done = ev.query();`
    return Var->getInit() ? loopPollingVariable(Var, Var->getInit(), Query, RuntimeCode, Ctx) : nullptr;
  const auto *S = Holder.get<Stmt>();
  if (!S)
    return nullptr;
  if (isa<WhileStmt, DoStmt, ForStmt>(S) && loopCondition(S) == Full) {
    std::optional<PollSense> Sense = pollSense(Full, IsQuery, RuntimeCode, Ctx);
    return Sense == PollSense::NotDone ? S : nullptr;
  }
  if (const auto *If = dyn_cast<IfStmt>(S); If && If->getCond() == Full) {
    std::optional<PollSense> Sense = pollSense(Full, IsQuery, RuntimeCode, Ctx);
    const Stmt *Loop = analysis(Ctx).enclosingLoop(If);
    if (!Sense || !Loop || !runsUntilLeft(Loop, Ctx))
      return nullptr;
    // A `break` inside a switch between the if and the loop leaves the switch.
    for (DynTypedNode Node = firstParent(Ctx, DynTypedNode::create(*If)); !Node.getNodeKind().isNone();
         Node = firstParent(Ctx, Node)) {
      if (Node.get<Stmt>() == Loop)
        break;
      if (Node.get<SwitchStmt>())
        return nullptr;
    }
    const Stmt *Exit = *Sense == PollSense::Done ? If->getThen() : If->getElse();
    return leavesLoop(Exit) ? Loop : nullptr;
  }
  return nullptr;
}

/// The loop around \p Query whose condition holds while \p Var, assigned
/// \p Value (the query's result, or a condition on it) there, says not done
/// (`while (!done) { done = ev.query(); }`, `done = cudaEventQuery(e) == cudaSuccess`).
const Stmt *ExplicitSyncCheck::loopPollingVariable(const VarDecl *Var, const Expr *Value,
                                                   const CallExpr *Query, bool RuntimeCode, ASTContext &Ctx) {
  if (!Var->hasLocalStorage())
    return nullptr;
  const Stmt *Loop = analysis(Ctx).enclosingLoop(Query);
  if (!Loop)
    return nullptr;
  auto IsVar = [&](const Expr *E) {
    const auto *Ref = dyn_cast<DeclRefExpr>(E);
    return Ref && Ref->getDecl() == Var;
  };
  // The variable holds the result itself, or a truth value with a sense of its own.
  std::optional<PollSense> Sense;
  if (ignoreWrappers(Value) == Query || Value->IgnoreParenImpCasts() == Query) {
    Sense = pollSense(loopCondition(Loop), IsVar, RuntimeCode, Ctx);
  } else if (Var->getType()->isBooleanType()) {
    std::optional<PollSense> Held =
        pollSense(Value, [&](const Expr *E) { return E == Query; }, RuntimeCode, Ctx);
    Sense = Held ? pollSense(loopCondition(Loop), IsVar, /*RuntimeCode=*/false, Ctx) : std::nullopt;
    if (Sense && Held == PollSense::NotDone)
      Sense = flip(*Sense);
  }
  return Sense == PollSense::NotDone ? Loop : nullptr;
}

void ExplicitSyncCheck::checkPoll(const CallExpr *Query, ASTContext &Ctx) {
  const Stmt *Loop = pollingLoop(Query, Ctx);
  if (!Loop)
    return;
  // Classified as the synchronize it stands for, in the loop's place.
  std::string HostWork;
  std::string Why = barrierReason(Loop, analysis(Ctx), HostWork);
  Finding F;
  F.What = "polling `" + queryName(Query) +
           "` in a loop until the work is done blocks the host like `synchronize()` (PyTorch's "
           "sync debug mode does not see this one)";
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Loop);
  classifyBarrier(F, Why, HostWork, "remove the loop: nothing after it needs the GPU's work");
  report(Query->getBeginLoc(), F);
}

TORCH_SYNC_CHECK_FACTORY(ExplicitSyncCheck)

} // namespace torch_syncfree
