#include "UseClassifier.h"
#include "ApiFacts.h"
#include "DeviceInference.h"
#include "SyncCalls.h"
#include "TorchApi.h"
#include "analysis/Containers.h"
#include "analysis/ValueFlow.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"
#include <functional>

#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringExtras.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

static UseVerdict verdict(Dependency D, std::string Reason) {
  UseVerdict V;
  V.Kind = D;
  V.Reason = std::move(Reason);
  return V;
}

/// `m += v`: a false dependency, the host reads the metric later.
static UseVerdict accumulated() {
  UseVerdict V = verdict(Dependency::False, "the value is accumulated into a host metric");
  V.Accumulated = true;
  return V;
}

/// Logging entry points of the standard library, {fmt}, spdlog, glog and c10.
static bool isBuiltinLoggingFunction(StringRef Name) {
  return hasHostApiTrait(Name, LoggingFunction) || hasApiTrait(Name, MessageText);
}

static bool isBuiltinLoggingMacro(StringRef Name) {
  return hasHostApiTrait(Name, LoggingMacro) || hasApiTrait(Name, WarningMacro);
}

/// Math helpers whose result carries the value on: std::abs(v) < eps is a condition.
static bool isValueTransformingFunction(const FunctionDecl *FD) {
  if (!FD || !FD->getDeclName().isIdentifier() || !hasHostApiTrait(FD->getName(), ValueTransforming))
    return false;
  return FD->isInStdNamespace() || FD->getDeclContext()->isTranslationUnit() ||
         isInTorchNamespace(FD);
}

static bool isOstream(QualType T) {
  const auto *RD = T.getNonReferenceType()->getAsCXXRecordDecl();
  if (!RD || !RD->hasDefinition())
    return false;
  auto IsStream = [](const CXXRecordDecl *C) {
    std::string Name = C->getQualifiedNameAsString();
    return Name == "std::basic_ostream" || Name == "std::basic_ios" ||
           Name == "std::ios_base";
  };
  if (IsStream(RD))
    return true;
  bool Found = false;
  RD->forallBases([&](const CXXRecordDecl *Base) {
    Found |= IsStream(Base);
    return true;
  });
  return Found;
}

/// The leftmost operand of a chain of `<<` (`os` in `os << a << b`), or
/// nullptr when Op is no `<<`.
static const Expr *insertionTarget(const CXXOperatorCallExpr *Op) {
  if (Op->getOperator() != OO_LessLess || Op->getNumArgs() != 2)
    return nullptr;
  const Expr *Left = Op->getArg(0);
  while (true) {
    const auto *Inner = dyn_cast<CXXOperatorCallExpr>(ignoreWrappers(Left));
    if (!Inner || Inner->getOperator() != OO_LessLess)
      break;
    Left = Inner->getArg(0);
  }
  return Left;
}

/// `os << a << b`: the leftmost operand of a chain of `<<` is a stream, or a
/// logging macro's record (`PLOG_INFO << v`: plog's Record has its own `<<`).
bool UseClassifier::isStreamInsertion(const CXXOperatorCallExpr *Op) const {
  const Expr *Left = insertionTarget(Op);
  return Left && (isOstream(Left->getType()) || isLoggingMacroArgument(Left));
}

const FunctionDecl *UseClassifier::programHelperDefinition(const FunctionDecl *FD) const {
  // A body the program wrote and the call surely runs: not virtual, not the
  // standard library's, LibTorch's or any system header's (`std::vector::reserve`
  // is instantiated differently with and without the shared PCH).
  const FunctionDecl *Definition = nullptr;
  if (!FD || (isa<CXXMethodDecl>(FD) && cast<CXXMethodDecl>(FD)->isVirtual()) || !FD->hasBody(Definition) ||
      !Definition || FD->isInStdNamespace() || isInTorchNamespace(FD) ||
      Ctx.getSourceManager().isInSystemHeader(Definition->getLocation()))
    return nullptr;
  return Definition;
}

bool UseClassifier::loggingParameter(const FunctionDecl *FD, unsigned Index, unsigned Depth) const {
  const FunctionDecl *Definition = Depth > 2 ? nullptr : programHelperDefinition(FD);
  if (!Definition || Index >= Definition->getNumParams())
    return false;
  const ParmVarDecl *Param = Definition->getParamDecl(Index);
  QualType T = Param->getType();
  if (T->isReferenceType() && !T.getNonReferenceType().isConstQualified())
    return false; // the callee may write through it
  llvm::ArrayRef<const DeclRefExpr *> Uses = TU.referencesTo(*Definition->getBody(), Param);
  if (Uses.empty())
    return false;
  for (const DeclRefExpr *Use : Uses) {
    DynTypedNode Parent =
        ancestorSkipping<ImplicitCastExpr, ParenExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr>(Ctx,
                                                                                                      Use);
    if (const auto *Op = Parent.get<CXXOperatorCallExpr>();
        Op && isStreamInsertion(Op) && ignoreWrappers(Op->getArg(1)) == ignoreWrappers(Use))
      continue; // `std::cout << value`
    const auto *Call = Parent.get<CallExpr>();
    if (!Call || isa<CXXOperatorCallExpr>(Call))
      return false;
    if (isLoggingCall(Call))
      continue; // printf-style
    bool Passed = false;
    for (unsigned I = 0; I < Call->getNumArgs(); ++I)
      if (ignoreWrappers(Call->getArg(I)) == ignoreWrappers(Use)) {
        if (!loggingParameter(Call->getDirectCallee(), I, Depth + 1))
          return false;
        Passed = true;
      }
    if (!Passed)
      return false;
  }
  return true;
}

bool UseClassifier::isLoggingCall(const CallExpr *Call) const {
  const FunctionDecl *FD = Call->getDirectCallee();
  if (!FD || !FD->getDeclName().isIdentifier())
    return false;
  StringRef Name = FD->getName();
  for (const std::string &Extra : Options.LoggingFunctions)
    if (Name == Extra || FD->getQualifiedNameAsString() == Extra)
      return true;
  // Metric writers (TensorBoard's add_scalar(name, value, step), MLflow-style
  // log_metric): whatever their namespace, the value only reaches a log.
  if (hasHostApiTrait(Name, MetricWriter))
    return true;
  if (!isBuiltinLoggingFunction(Name))
    return false;
  // Only the well-known homes of these names: printf in the global namespace or
  // std, print/info/... in fmt, spdlog, c10 (c10::str builds warning texts).
  const DeclContext *DC = FD->getDeclContext()->getEnclosingNamespaceContext();
  std::string Namespace =
      isa<NamespaceDecl>(DC) ? cast<NamespaceDecl>(DC)->getQualifiedNameAsString() : "";
  if (Namespace.empty())
    return Name.contains("printf") || Name.starts_with("put");
  // std::print/println (C++23) write text; std::format (C++20) builds it, as fmt::format.
  if (Namespace == "std" || StringRef(Namespace).starts_with("std::"))
    return Name.contains("printf") || Name.starts_with("put") || Name == "print" ||
           Name == "println" || Name == "format";
  return StringRef(Namespace).starts_with("fmt") ||
         StringRef(Namespace).starts_with("spdlog") ||
         StringRef(Namespace).starts_with("c10") || StringRef(Namespace).starts_with("google");
}

/// Splits an identifier into lower-case words: `addScalar`, `add_scalar` -> add, scalar.
static llvm::SmallVector<std::string, 4> identifierWords(StringRef Name) {
  llvm::SmallVector<std::string, 4> Words;
  std::string Word;
  for (size_t I = 0; I < Name.size(); ++I) {
    char C = Name[I];
    if (C == '_' || (llvm::isUpper(C) && !Word.empty() && !llvm::isUpper(Name[I - 1]))) {
      if (!Word.empty())
        Words.push_back(Word);
      Word.clear();
    }
    if (C != '_')
      Word += llvm::toLower(C);
  }
  if (!Word.empty())
    Words.push_back(Word);
  return Words;
}

std::optional<UseVerdict> UseClassifier::unseenMetricSink(const CallExpr *Call, const Expr *Arg) const {
  const FunctionDecl *FD = Call->getDirectCallee();
  if (!FD || FD->isDefined() || !FD->getDeclName().isIdentifier() || isInTorchNamespace(FD) ||
      FD->isInStdNamespace() || !FD->getReturnType()->isVoidType())
    return std::nullopt;
  // The parameter the value is bound to: a number by value or by const reference.
  unsigned Offset = isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(FD) ? 1 : 0;
  const ParmVarDecl *Param = nullptr;
  for (unsigned I = Offset; I < Call->getNumArgs() && I - Offset < FD->getNumParams(); ++I)
    if (ignoreWrappers(Call->getArg(I)) == ignoreWrappers(Arg))
      Param = FD->getParamDecl(I - Offset);
  if (!Param)
    return std::nullopt;
  if (isMutableReference(Param->getType()))
    return std::nullopt;
  QualType T = Param->getType().getNonReferenceType();
  if (!T->isArithmeticType() || T->isBooleanType())
    return std::nullopt;
  for (const std::string &Word : identifierWords(FD->getName()))
    if (hasHostApiTrait(Word, SinkWord)) {
      std::string Qualified = FD->getName().str();
      if (const auto *Method = dyn_cast<CXXMethodDecl>(FD))
        Qualified = Method->getParent()->getName().str() + "::" + Qualified;
      return verdict(Dependency::False,
                     "the value is passed to `" + Qualified +
                         "`, not defined in this translation unit: by its name and signature "
                         "(void, takes a number) a metrics or progress sink (name heuristic; "
                         "list it in LoggingFunctions to make it certain)");
    }
  return std::nullopt;
}

bool UseClassifier::isLoggingMacroArgument(const Expr *E) const {
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation Loc = E->getExprLoc(); // O(1); getBeginLoc() walks a whole call chain
  while (Loc.isMacroID()) {
    StringRef Name = Lexer::getImmediateMacroName(Loc, SM, Ctx.getLangOpts());
    if (isBuiltinLoggingMacro(Name))
      return true;
    // Projects' own logging macros: LOG_INFO(...), MY_LOG(...), LOGD(...).
    std::string Upper = Name.upper();
    if (StringRef(Upper).starts_with("LOG") || StringRef(Upper).ends_with("_LOG") ||
        StringRef(Upper).contains("_LOG_"))
      return true;
    for (const std::string &Extra : Options.LoggingFunctions)
      if (Name == Extra)
        return true;
    Loc = SM.getImmediateMacroCallerLoc(Loc);
  }
  return false;
}

unsigned UseClassifier::enclosingLoopLine(const Stmt *S) {
  const Stmt *Loop = TU.enclosingLoop(S);
  return Loop ? Ctx.getSourceManager().getExpansionLineNumber(Loop->getBeginLoc()) : 0;
}

void UseClassifier::noteLogInterval(UseVerdict &V, const Stmt *S) {
  const Stmt *Loop = TU.enclosingLoop(S);
  if (V.Kind != Dependency::False || !Loop)
    return;
  if (const IfStmt *Interval = logIntervalAround(Ctx, S, Loop)) {
    V.IntervalLine = Ctx.getSourceManager().getExpansionLineNumber(Interval->getBeginLoc());
    CharSourceRange Range = CharSourceRange::getTokenRange(Interval->getCond()->getSourceRange());
    V.IntervalCondition =
        Lexer::getSourceText(Range, Ctx.getSourceManager(), Ctx.getLangOpts()).str();
    if (V.IntervalCondition.empty() && Interval->getBeginLoc().isMacroID()) // `LOG_EVERY(n, ...)`
      V.IntervalCondition = Lexer::getImmediateMacroName(Interval->getBeginLoc(), Ctx.getSourceManager(),
                                                         Ctx.getLangOpts())
                                .str();
  }
}

/// Whether \p Call (under \p Loop) runs in every iteration of Loop: not in a
/// branch, a nested loop, a catch handler or the right side of && / || between
/// them, and in the part of Loop that repeats (not a for's init, not a range-for's
/// range).
static bool runsEveryIteration(ASTContext &Ctx, const CallExpr *Call, const Stmt *Loop) {
  const Stmt *Child = Call;
  for (DynTypedNode Node = firstParent(Ctx, DynTypedNode::create(*Call));; Node = firstParent(Ctx, Node)) {
    const Stmt *Parent = Node.get<Stmt>();
    if (!Parent) {
      if (Node.get<Decl>()) // a declaration's initialiser: on to its DeclStmt
        continue;
      return false;
    }
    if (Parent == Loop) {
      if (const auto *For = dyn_cast<ForStmt>(Loop))
        return Child == For->getCond() || Child == For->getInc() || Child == For->getBody();
      if (const auto *Range = dyn_cast<CXXForRangeStmt>(Loop))
        return Child == Range->getBody();
      return true; // while, do: the condition and the body repeat
    }
    if (const auto *If = dyn_cast<IfStmt>(Parent); If && (Child == If->getThen() || Child == If->getElse()))
      return false;
    if (const auto *Switch = dyn_cast<SwitchStmt>(Parent); Switch && Child == Switch->getBody())
      return false;
    if (const auto *CO = dyn_cast<AbstractConditionalOperator>(Parent);
        CO && (Child == CO->getTrueExpr() || Child == CO->getFalseExpr()))
      return false;
    if (const auto *BO = dyn_cast<BinaryOperator>(Parent); BO && BO->isLogicalOp() && Child == BO->getRHS())
      return false;
    if (isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt, CXXCatchStmt>(Parent))
      return false;
    Child = Parent;
  }
}

llvm::ArrayRef<const CallExpr *> UseClassifier::waitsEveryIteration(const Stmt *Loop) {
  auto [It, Inserted] = LoopWaits.try_emplace(Loop);
  if (Inserted) {
    std::vector<const CallExpr *> Waits;
    DeviceOracle &Oracle = TU.oracle();
    for (const TranslationUnitAnalysis::CallSite &Site : TU.callSitesUnder(*Loop)) {
      // Every wait that stays counts, whatever the host does with the value
      // (a value only logged waits as long as one that decides): a value read
      // unless the fix of the check that reports it removes the read; an op
      // that waits for its result's size when the host needs the result (a
      // false one may be rewritten by its check: not counted).
      const CallExpr *Call = Site.Call;
      if (Site.Sync && !Site.InLambda && Site.Sync->Tensor && runsEveryIteration(Ctx, Call, Loop) &&
          Oracle.tensorPlacement(Site.Sync->Tensor) != Placement::Cpu && !TU.isOutsideAnalysedCode(Call) &&
          (Site.Sync->ReadsValue ? !TU.isRemovedByItsOwner(Call) : classify(Call).Kind == Dependency::True))
        Waits.push_back(Call);
    }
    It->second = std::move(Waits); // nothing above inserts into LoopWaits
  }
  return It->second;
}

/// `E.numel()` or `E.size(0)` (ApiFacts' ShapeRead names, with no argument or the
/// constant 0): the call, else nullptr.
static const CXXMemberCallExpr *countReadOf(ASTContext &Ctx, const Expr *E, bool &Numel) {
  const auto *Read = dyn_cast_or_null<CXXMemberCallExpr>(consumerOf(Ctx, E));
  if (!Read || ignoreWrappers(Read->getImplicitObjectArgument()) != ignoreWrappers(E) ||
      !hasApiTrait(calleeName(Read), ShapeRead))
    return nullptr;
  unsigned Written = explicitArgCount(Read);
  if (Written == 0) {
    Numel = true;
    return Read;
  }
  std::optional<llvm::APSInt> Dim =
      Written == 1 ? Read->getArg(0)->getIntegerConstantExpr(Ctx) : std::nullopt;
  return Dim && *Dim == 0 ? Read : nullptr;
}

std::optional<CountReads> UseClassifier::classifyCountReads(const Expr *Selection) {
  CountReads Result;
  llvm::SmallVector<const CXXMemberCallExpr *, 4> Reads;
  if (const CXXMemberCallExpr *Direct = countReadOf(Ctx, Selection, Result.Numel)) {
    Reads.push_back(Direct);
  } else {
    // `auto sel = x.masked_select(m); n += sel.numel();`: every use a count read.
    const VarDecl *Var = initialisedVariable(Ctx, Selection);
    const auto *FD = Var ? dyn_cast_or_null<FunctionDecl>(Var->getParentFunctionOrMethod()) : nullptr;
    if (!Var || !FD || !FD->getBody() || Var->getType()->isReferenceType() || !Var->hasLocalStorage())
      return std::nullopt;
    for (const DeclRefExpr *Ref : TU.referencesTo(*FD->getBody(), Var)) {
      const CXXMemberCallExpr *Read = countReadOf(Ctx, Ref, Result.Numel);
      if (!Read)
        return std::nullopt;
      Reads.push_back(Read);
    }
    Result.Through = Var;
  }
  if (Reads.empty())
    return std::nullopt;
  Result.First = Reads.front();
  for (const CXXMemberCallExpr *Read : Reads) {
    UseVerdict V = classify(Read);
    if (V.Kind == Dependency::True) {
      Result.Verdict = std::move(V);
      return Result;
    }
    if (Read == Reads.front())
      Result.Verdict = std::move(V);
    else if (!V.IntervalLine)
      Result.Verdict.IntervalLine = 0; // read outside a log interval too
  }
  if (!Result.Verdict.IntervalLine)
    Result.Verdict.IntervalCondition.clear();
  return Result;
}

UseVerdict UseClassifier::classify(const Expr *ValueExpr) {
  UseVerdict V = classifyUse(ValueExpr, 0);
  V.LoopLine = enclosingLoopLine(ValueExpr);
  if (std::string Macro = validationMacro(Ctx, ValueExpr->getBeginLoc()).str(); !Macro.empty()) {
    // The host needs the value to decide whether to fail: a validation.
    V.Kind = Dependency::True;
    V.Reason = "the value is validated by `" + Macro + "(...)` on the host";
    V.ValidationMacro = Macro;
    V.OnlyLogged = false;
  }
  noteLogInterval(V, ValueExpr);
  return V;
}

/// Joins the uses of one value: the first true use decides; otherwise the
/// value is a false dependency, "only logged" when every use is.
struct UseJoin {
  std::string Via; ///< "through `x`", "returned by `f`"
  std::optional<UseVerdict> FirstFalse = std::nullopt;
  bool AllLogged = true;
  /// "through `y`, " + Reason, said once when the value passes through the same
  /// variable again (`y = y.to(torch::kCPU)`).
  std::string prefixed(const std::string &Reason) const {
    return llvm::StringRef(Reason).starts_with(Via + ",") ? Reason : Via + ", " + Reason;
  }
  /// The verdict when Use decides (a true use), else nullopt.
  std::optional<UseVerdict> add(UseVerdict Use) {
    if (Use.Kind == Dependency::True) {
      Use.Reason = prefixed(Use.Reason);
      return Use;
    }
    AllLogged &= Use.OnlyLogged;
    if (!FirstFalse)
      FirstFalse = Use;
    return std::nullopt;
  }
  /// The joined false verdict; nullopt when there was no use.
  std::optional<UseVerdict> result() const {
    if (!FirstFalse)
      return std::nullopt;
    UseVerdict V = *FirstFalse;
    V.Reason = prefixed(V.Reason);
    V.OnlyLogged = AllLogged;
    return V;
  }
};

/// Whether Inner starts inside Outer's source range.
static bool startsWithin(const SourceManager &SM, const Stmt *Inner, const Stmt *Outer) {
  return !SM.isBeforeInTranslationUnit(Inner->getBeginLoc(), Outer->getBeginLoc()) &&
         !SM.isBeforeInTranslationUnit(Outer->getEndLoc(), Inner->getBeginLoc());
}

UseVerdict UseClassifier::classifyReturned(const Stmt *Return, unsigned Depth) {
  UseVerdict Unknown = verdict(Dependency::True, "the value is returned to the caller");
  Unknown.ReturnedToUnseenCaller = true;
  // The function the return belongs to (a lambda's callers are not followed).
  const FunctionDecl *FD = enclosingFunction(Ctx, Return);
  if (!FD)
    return Unknown;
  Unknown.ReturnedBy = FD;
  // Callers elsewhere cannot be seen: follow only a program's own functions.
  if (!FD || Depth > 4 || !TU.callersAllVisible(FD))
    return Unknown;
  if (!ReturnsInProgress.insert(FD->getCanonicalDecl()).second)
    return Unknown; // recursion
  UseJoin Join{"returned by `" + FD->getNameAsString() + "`"};
  std::optional<UseVerdict> Result;
  for (const CallExpr *Call : TU.callsOf(FD))
    if ((Result = Join.add(classifyUse(Call, Depth + 1))))
      break;
  ReturnsInProgress.erase(FD->getCanonicalDecl());
  if (Result)
    return *Result;
  return Join.result().value_or(Unknown); // never called here: unknown
}

const VarDecl *UseClassifier::localContainer(const Expr *Object) {
  const auto *Ref = dyn_cast_or_null<DeclRefExpr>(Object ? Object->IgnoreParenImpCasts() : nullptr);
  const auto *VD = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  if (!VD || !VD->hasLocalStorage() || VD->getType()->isReferenceType())
    return nullptr;
  return isStdContainer(VD->getType(), /*Maps=*/true) ? VD : nullptr;
}

UseVerdict UseClassifier::classifyContainer(const VarDecl *Container, const Stmt *Writer,
                                            unsigned Depth) {
  std::string Name = "`" + Container->getNameAsString() + "`";
  const auto *FD = dyn_cast_or_null<FunctionDecl>(Container->getParentFunctionOrMethod());
  if (!FD || !FD->getBody() || Depth > 4)
    return verdict(Dependency::True, "the value is stored in a host container");
  const SourceManager &SM = Ctx.getSourceManager();
  UseJoin Join{"through " + Name};
  auto Consider = [&](UseVerdict Use) { return Join.add(std::move(Use)); };
  // The value-flow core says which uses see the stored element: not those
  // before the store, nor those after a `clear()` or a reassignment.
  const FunctionValueFlow *Flow = TU.valueFlow(FD);
  for (const DeclRefExpr *Ref : TU.referencesTo(*FD->getBody(), Container)) {
    if (startsWithin(SM, Ref, Writer))
      continue;
    if (std::optional<bool> Sees = Flow ? Flow->reaches(Writer, Container, Ref) : std::nullopt;
        Sees && !*Sees)
      continue;
    DynTypedNode ParentNode = firstParent(Ctx, DynTypedNode::create(*Ref));
    const Stmt *Parent = ancestorSkipping<ImplicitCastExpr, ParenExpr>(Ctx, Ref).get<Stmt>();
    // `for (x : c)` binds `auto &&__range = c;`: the loop is the consumer.
    if (const auto *Range = ParentNode.get<VarDecl>())
      if (const CXXForRangeStmt *Loop = rangeForDeclaring(Ctx, Range);
          Loop && Loop->getLoopVariable() != Range)
        Parent = Loop;
    // Other writes: `c[k] = ...`, `c.push_back(...)`, `c.clear()`.
    // Other writes (`c.push_back(...)`, `c.clear()`) and the count of elements,
    // not their values (`for (i = 0; i < c.size(); ++i)`).
    if (const auto *Member = dyn_cast_or_null<MemberExpr>(Parent);
        Member && Member->getMemberDecl()->getDeclName().isIdentifier()) {
      ContainerOp Op = containerOp(Member->getMemberDecl()->getName());
      if (Op == ContainerOp::Add || Op == ContainerOp::Remove || Op == ContainerOp::Inspect)
        continue;
      // `c.back()`, `c.at(k)`: a read of an element, whose consumer decides.
      if (const auto *Access = dyn_cast_or_null<CXXMemberCallExpr>(
              firstParent(Ctx, DynTypedNode::create(*Member)).get<Stmt>());
          Access && Op == ContainerOp::ElementAccess) {
        if (auto True = Consider(classifyUse(Access, Depth + 1)))
          return *True;
        continue;
      }
    }
    if (const auto *Subscript = dyn_cast_or_null<CXXOperatorCallExpr>(Parent);
        Subscript && Subscript->getOperator() == OO_Subscript) {
      DynTypedNodeList Up = Ctx.getParents(*Subscript);
      const auto *Assign = Up.empty() ? nullptr : Up[0].get<BinaryOperator>();
      if (Assign && Assign->isAssignmentOp() && Assign->getLHS() == Subscript)
        continue;
      // A read of an element: its consumer decides.
      if (auto True = Consider(classifyUse(Subscript, Depth + 1)))
        return *True;
      continue;
    }
    // Iterated: each element's (or structured binding's) uses decide.
    if (const auto *Loop = dyn_cast_or_null<CXXForRangeStmt>(Parent)) {
      const VarDecl *Element = Loop->getLoopVariable();
      std::vector<const ValueDecl *> Names;
      if (const auto *Decomposition = dyn_cast<DecompositionDecl>(Element))
        for (const BindingDecl *Binding : Decomposition->bindings())
          Names.push_back(Binding);
      else
        Names.push_back(Element);
      for (const ValueDecl *D : Names) {
        auto Refs = match(findAll(declRefExpr(to(valueDecl(equalsNode(D)))).bind("use")),
                          *Loop->getBody(), Ctx);
        for (const auto &Node : Refs)
          if (auto True = Consider(classifyUse(Node.getNodeAs<DeclRefExpr>("use"), Depth + 1)))
            return *True;
      }
      continue;
    }
    if (auto True = Consider(classifyUse(Ref, Depth + 1)))
      return *True;
  }
  return Join.result().value_or(
      verdict(Dependency::False, "the value is stored in " + Name + " but never read"));
}

UseVerdict UseClassifier::classifyFilledVariable(const VarDecl *VD, const Stmt *Writer) {
  UseVerdict V = classifyVariable(VD, /*Store=*/nullptr, nullptr, 0, Writer);
  V.LoopLine = enclosingLoopLine(Writer);
  noteLogInterval(V, Writer);
  return V;
}

UseVerdict UseClassifier::accumulatedInto(const Expr *Accumulator, const Stmt *Accumulation, unsigned Depth) {
  // A sum read only after the loop needs only its total, once: each
  // iteration's read is deferrable (a false dependency, whether the total is
  // logged or returned). A sum the loop itself reads (`if (total > limit)
  // break;`) is followed to what that read does: a branch needs every
  // iteration's value.
  const auto *Ref = dyn_cast<DeclRefExpr>(ignoreWrappers(Accumulator));
  const auto *VD = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  const Stmt *Loop = TU.enclosingLoop(Accumulation);
  if (!VD || !VD->hasLocalStorage() || VD->getType()->isReferenceType() || !Loop || Depth > 4)
    return accumulated();
  UseVerdict InLoop =
      classifyVariable(VD, Accumulation, cast<Expr>(Accumulation), Depth + 1, /*SkipWithin=*/nullptr,
                       /*Within=*/Loop);
  if (InLoop.Kind == Dependency::True)
    return InLoop;
  // A total the function returns: its caller needs the sum, once; each read
  // of the loop is still deferrable (issue 41 asked for the wording).
  const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  bool Returned =
      FD && FD->getBody() && llvm::any_of(TU.referencesTo(*FD->getBody(), VD), [&](const DeclRefExpr *Ref) {
        return isa_and_nonnull<ReturnStmt>(consumerOf(Ctx, Ref));
      });
  UseVerdict V = accumulated();
  if (Returned)
    V.Reason = "the value is summed into `" + VD->getNameAsString() +
               "`, which the function returns: its caller needs the total once, not each read";
  return V;
}

std::optional<UseVerdict> UseClassifier::deferrableInCallee(const CallExpr *Call, const Expr *Arg,
                                                            unsigned Depth) {
  // The unit's own helper taking the value by value (`norm_ip(t, t.min().item<double>(), ..)`
  // whose parameter only goes into `img.clamp_(min, max)`): its uses there decide.
  const FunctionDecl *Definition = Depth > 3 || isa<CXXOperatorCallExpr>(Call)
                                       ? nullptr
                                       : programHelperDefinition(Call->getDirectCallee());
  if (!Definition || Definition == enclosingFunction(Ctx, Call))
    return std::nullopt;
  std::optional<UseVerdict> Result;
  for (unsigned I = 0; I < Call->getNumArgs() && I < Definition->getNumParams(); ++I) {
    if (ignoreWrappers(Call->getArg(I)) != ignoreWrappers(Arg))
      continue;
    const ParmVarDecl *Param = Definition->getParamDecl(I);
    if (Param->getType()->isReferenceType() || !Param->getType()->isArithmeticType())
      return std::nullopt;
    llvm::ArrayRef<const DeclRefExpr *> Uses = TU.referencesTo(*Definition->getBody(), Param);
    if (Uses.empty())
      return std::nullopt;
    for (const DeclRefExpr *Use : Uses) {
      // Not a sum the callee keeps (`n += v > 0` into a reference the caller
      // reads): where that total goes is not followed back out of the callee.
      UseVerdict V = classifyUse(Use, Depth + 1);
      if (V.Kind != Dependency::False || V.Accumulated)
        return std::nullopt;
      if (!Result) {
        V.Reason = "in `" + Definition->getNameAsString() + "`, through `" + Param->getNameAsString() +
                   "`, " + V.Reason;
        Result = V;
      }
    }
  }
  return Result;
}

std::optional<UseVerdict> UseClassifier::onlyDecidesCounts(const IfStmt *If, unsigned Depth) {
  if (If->getElse() || If->getInit() || If->getConditionVariable() || Depth > 4)
    return std::nullopt;
  const Stmt *Loop = TU.enclosingLoop(If);
  if (!Loop)
    return std::nullopt;
  llvm::SmallVector<const Stmt *, 4> Body;
  if (const auto *Block = dyn_cast<CompoundStmt>(If->getThen()))
    Body.append(Block->body_begin(), Block->body_end());
  else
    Body.push_back(If->getThen());
  if (Body.empty())
    return std::nullopt;
  std::string Counts;
  for (const Stmt *S : Body) {
    // `n += 1`, `n -= 2`, `++n`, `n++`: a count grows by a constant.
    const Expr *Target = nullptr;
    if (const auto *BO = dyn_cast<BinaryOperator>(S);
        BO && (BO->getOpcode() == BO_AddAssign || BO->getOpcode() == BO_SubAssign) &&
        BO->getRHS()->isEvaluatable(Ctx))
      Target = BO->getLHS();
    else if (const auto *UO = dyn_cast<UnaryOperator>(S); UO && UO->isIncrementDecrementOp())
      Target = UO->getSubExpr();
    if (!Target)
      return std::nullopt;
    // A local scalar, or an element of a local array or container (`correct[label]`).
    const Expr *Base = ignoreWrappers(Target);
    while (true) {
      if (const auto *Element = dyn_cast<ArraySubscriptExpr>(Base))
        Base = ignoreWrappers(Element->getBase());
      else if (const auto *Subscript = dyn_cast<CXXOperatorCallExpr>(Base);
               Subscript && Subscript->getOperator() == OO_Subscript)
        Base = ignoreWrappers(Subscript->getArg(0));
      else
        break;
    }
    const auto *Ref = dyn_cast<DeclRefExpr>(Base);
    const auto *VD = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
    if (!VD || !VD->hasLocalStorage() || VD->getType()->isReferenceType())
      return std::nullopt;
    const SourceManager &SM = Ctx.getSourceManager();
    if (!SM.isBeforeInTranslationUnit(VD->getLocation(), Loop->getBeginLoc()))
      return std::nullopt; // a count the loop makes anew (declared in it)
    // What the loop itself does with the counts (`if (correct > k) break;`).
    UseVerdict InLoop = classifyVariable(VD, S, cast<Expr>(S), Depth + 1, /*SkipWithin=*/S, /*Within=*/Loop);
    if (InLoop.Kind == Dependency::True)
      return std::nullopt;
    if (Counts.empty())
      Counts = VD->getNameAsString();
  }
  return verdict(Dependency::False,
                 "the value only decides whether `" + Counts +
                     "` counts up, which the loop does not read (a count the device can keep)");
}

UseVerdict UseClassifier::classifyVariable(const VarDecl *VD, const Stmt *Store, const Expr *Except,
                                           unsigned Depth, const Stmt *SkipWithin, const Stmt *Within) {
  std::string Name = "`" + VD->getNameAsString() + "`";
  if (!VD->hasLocalStorage() || VD->getType()->isReferenceType())
    return verdict(Dependency::True, "the value is stored in " + Name +
                                         ", which outlives this function");
  const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  if (!FD || !FD->getBody())
    return verdict(Dependency::True, "the value is stored in " + Name);
  UseJoin Join{"through " + Name};
  const SourceManager &SM = Ctx.getSourceManager();
  // The value-flow core says which reads see the stored value: not those
  // before the store, nor those after another store replaces it.
  const FunctionValueFlow *Flow = Store ? TU.valueFlow(FD) : nullptr;
  for (const DeclRefExpr *Ref : TU.referencesTo(*FD->getBody(), VD)) {
    if (SkipWithin && startsWithin(SM, Ref, SkipWithin))
      continue; // the writer's own reference
    if (Within && !startsWithin(SM, Ref, Within))
      continue; // only the reads under Within are asked about
    if (std::optional<bool> Sees = Flow ? Flow->reaches(Store, VD, Ref) : std::nullopt; Sees && !*Sees)
      continue;
    // The assignment that stores the value: `x = 0.9 * x + 0.1 * v` reads the old x
    // to make the new one, which is followed through x's other uses.
    if (Except && startsWithin(SM, Ref, Except))
      continue;
    // Skip plain re-assignments of the variable: they define, not use; and
    // further accumulations (`m += v`): their result is m again, whose other
    // uses are followed here.
    DynTypedNodeList Parents = Ctx.getParents(*Ref);
    if (!Parents.empty())
      if (const auto *BO = Parents[0].get<BinaryOperator>())
        if (BO->isAssignmentOp() && BO->getLHS() == Ref)
          continue;
    if (std::optional<UseVerdict> True = Join.add(classifyUse(Ref, Depth + 1)))
      return *True;
  }
  return Join.result().value_or(
      verdict(Dependency::False, "the value is stored in " + Name + " but never read"));
}

UseVerdict UseClassifier::classifyUse(const Expr *E, unsigned Depth) {
  // Memoised per expression and depth, including every expression the climb
  // passed through (they share the answer): each sync site of a long call
  // chain climbs the same chain, which was quadratic.
  auto Key = std::make_pair(static_cast<const void *>(E), Depth);
  if (auto It = UseMemo.find(Key); It != UseMemo.end())
    return It->second;
  llvm::SmallVector<const Expr *, 8> Visited;
  UseVerdict V = classifyUseImpl(E, Depth, Visited);
  UseMemo.try_emplace(Key, V);
  for (const Expr *X : Visited)
    UseMemo.try_emplace(std::make_pair(static_cast<const void *>(X), Depth), V);
  return V;
}

UseVerdict UseClassifier::classifyUseImpl(const Expr *E, unsigned Depth,
                                          llvm::SmallVectorImpl<const Expr *> &Visited) {
  static const char *const Logged = "the value is only logged";
  if (Depth > 4)
    return verdict(Dependency::True, "the value flows through too many variables to follow");
  auto LoggedBy = [&](const Stmt *Sink) {
    UseVerdict V = verdict(Dependency::False, Logged);
    V.OnlyLogged = true;
    V.LoggedAt = Sink;
    return V;
  };
  // TORCH_CHECK's message arguments run only when the check fails: a message.
  if (isLoggingMacroArgument(E) || isInValidationMessage(Ctx, E->getBeginLoc()))
    return LoggedBy(E);
  // A use inside `TORCH_CHECK(...)` (reached through a variable: `n = t.item();
  // TORCH_CHECK(n > 0)`): a validation, whatever the macro expands to (an `if`,
  // `__builtin_expect`).
  if (std::string Macro = validationMacro(Ctx, E->getBeginLoc()).str(); !Macro.empty() && Depth > 0) {
    UseVerdict V = verdict(Dependency::True, "the value is validated by `" + Macro + "(...)` on the host");
    V.ValidationMacro = Macro;
    return V;
  }

  DynTypedNode Current = DynTypedNode::create(*E);
  const Expr *CurrentExpr = E;
  while (true) {
    if (CurrentExpr != E) {
      if (auto It = UseMemo.find(std::make_pair(static_cast<const void *>(CurrentExpr), Depth));
          It != UseMemo.end())
        return It->second;
      Visited.push_back(CurrentExpr);
    }
    DynTypedNodeList Parents = Ctx.getParents(Current);
    if (Parents.empty())
      return verdict(Dependency::False, "the value is unused");
    const DynTypedNode &P = Parents[0];
    auto Climb = [&](const Expr *Next) {
      Current = DynTypedNode::create(*Next);
      CurrentExpr = Next;
    };

    if (const auto *VD = P.get<VarDecl>()) {
      // A container made from the value's holder (`auto errors = check(..)`,
      // which returns messages built from it): its element reads decide, not
      // its size (`errors.size() > 0`).
      if (const auto *Init = dyn_cast_or_null<Expr>(VD->getInit());
          Init && ignoreWrappers(Init) == ignoreWrappers(CurrentExpr) && VD->hasLocalStorage() &&
          !VD->getType()->isReferenceType() && isStdContainer(VD->getType(), /*Maps=*/true))
        return classifyContainer(VD, firstParent(Ctx, P).get<DeclStmt>(), Depth + 1);
      return classifyVariable(VD, firstParent(Ctx, P).get<DeclStmt>(), nullptr, Depth + 1);
    }

    const Stmt *PS = P.get<Stmt>();
    if (!PS)
      return verdict(Dependency::True, "the host uses the value");

    if (const auto *PE = dyn_cast<Expr>(PS)) {
      if (isa<ParenExpr, ImplicitCastExpr, ExprWithCleanups, MaterializeTemporaryExpr,
              CXXBindTemporaryExpr, ExplicitCastExpr>(PE)) {
        Climb(PE);
        continue;
      }
      if (const auto *Construct = dyn_cast<CXXConstructExpr>(PE)) {
        if (Construct->getNumArgs() == 1) {
          Climb(PE);
          continue;
        }
        return verdict(Dependency::True, "the value is stored in a host object");
      }
      if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(PE)) {
        if (isStreamInsertion(Op))
          return LoggedBy(Op);
        bool IsRightOperand = Op->getNumArgs() == 2 && Op->getArg(1) == CurrentExpr;
        if (Op->getOperator() == OO_Equal && IsRightOperand) {
          if (const auto *LHS = dyn_cast<DeclRefExpr>(ignoreWrappers(Op->getArg(0))))
            if (const auto *VD = dyn_cast<VarDecl>(LHS->getDecl()))
              return classifyVariable(VD, Op, Op, Depth + 1);
          return verdict(Dependency::True, "the value is written to host memory");
        }
        // `table[v]`, `t[v]`: the host needs a number that indexes (as for a built-in
        // array); a tensor index (`g[h.cpu()]`) is copied, not read.
        if (Op->getOperator() == OO_Subscript && IsRightOperand && !isTensorType(CurrentExpr->getType()))
          return verdict(Dependency::True, "the value is used as an index");
        bool TensorOperand = false;
        for (const Expr *Arg : Op->arguments())
          TensorOperand |= isTensorType(Arg->getType());
        if (TensorOperand && !isTensorType(CurrentExpr->getType()))
          return verdict(Dependency::False,
                         "the value goes straight back into a tensor operation");
        if (Op->isAssignmentOp() && IsRightOperand)
          return accumulatedInto(Op->getArg(0), Op, Depth);
        // `packet << v` into an object of the program's own type (no stream, no
        // logging macro's record): the object takes the value, as a call would;
        // its result is no shift's, so climbing would end at "unused".
        if (Op->getOperator() == OO_LessLess && IsRightOperand &&
            Op->getArg(0)->getType().getNonReferenceType()->isRecordType()) {
          const FunctionDecl *FD = Op->getDirectCallee();
          unsigned Index = FD && isa<CXXMethodDecl>(FD) ? 0 : 1;
          if (loggingParameter(FD, Index, 0))
            return LoggedBy(Op);
          return verdict(Dependency::True,
                         "the value is passed to `" +
                             (FD ? FD->getQualifiedNameAsString() : std::string("operator<<")) + "`");
        }
        Climb(PE);
        continue;
      }
      if (isa<MemberExpr>(PE)) { // `value.method`: the call above decides
        Climb(PE);
        continue;
      }
      if (const auto *MC = dyn_cast<CXXMemberCallExpr>(PE)) {
        if (MC->getCallee() == CurrentExpr) {
          // The value is the object of a method call; CurrentExpr is the MemberExpr.
          CurrentExpr = cast<MemberExpr>(CurrentExpr)->getBase();
          QualType ObjectType = CurrentExpr->getType();
          StringRef Name = calleeName(MC);
          if (isScalarType(ObjectType)) { // Scalar::to<T>(), toFloat(), ...
            Climb(PE);
            continue;
          }
          if (isTensorType(ObjectType)) {
            if (Name == "print" || Name == "toString")
              return LoggedBy(MC);
            if (Name.contains("data_ptr") || Name == "data" || Name.contains("accessor") ||
                Name == "item" || Name == "equal")
              return verdict(Dependency::True, "the host reads the tensor's memory");
            Climb(PE); // another op on the host tensor
            continue;
          }
          // Text built from the value (`line.c_str()`, `s.append(...)`): the
          // consumer of the text decides (a log line is still only logged).
          if (const auto *RD = ObjectType.getNonReferenceType()->getAsCXXRecordDecl();
              RD && RD->isInStdNamespace() && RD->getName() == "basic_string") {
            Climb(PE);
            continue;
          }
          return verdict(Dependency::True, "the host uses the value");
        }
      }
      if (const auto *Call = dyn_cast<CallExpr>(PE)) {
        if (isLoggingCall(Call))
          return LoggedBy(Call);
        const FunctionDecl *FD = Call->getDirectCallee();
        if (isValueTransformingFunction(FD)) {
          Climb(PE);
          continue;
        }
        if (FD && isInTorchNamespace(FD) && !isTensorType(CurrentExpr->getType()) &&
            (isTensorType(FD->getReturnType()) || isa<CXXMemberCallExpr>(Call))) {
          // A value a tensor could carry (a Scalar, a double) could stay on the
          // device; an integer parameter is a size, an index or a dimension
          // (`narrow(0, start, length)`, `select(0, i)`): the host needs it.
          unsigned Offset = isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(FD) ? 1 : 0;
          for (unsigned I = Offset; I < Call->getNumArgs(); ++I) {
            if (ignoreWrappers(Call->getArg(I)) != ignoreWrappers(CurrentExpr) || I - Offset >= FD->getNumParams())
              continue;
            const ParmVarDecl *Param = FD->getParamDecl(I - Offset);
            QualType T = Param->getType().getNonReferenceType().getCanonicalType().getUnqualifiedType();
            // An optional bound (`slice(dim, optional<int64_t> start, ..)`;
            // `optional<SymInt>` in LibTorch 2) is a size or index too.
            if (const auto *Optional =
                    dyn_cast_or_null<ClassTemplateSpecializationDecl>(T->getAsCXXRecordDecl());
                Optional && Optional->getName() == "optional" && Optional->getTemplateArgs().size() == 1 &&
                Optional->getTemplateArgs()[0].getKind() == TemplateArgument::Type)
              T = Optional->getTemplateArgs()[0].getAsType().getCanonicalType().getUnqualifiedType();
            const auto *Record = T->getAsCXXRecordDecl();
            if ((T->isIntegralOrEnumerationType() && !T->isBooleanType()) ||
                (Record && Record->getName() == "SymInt"))
              return verdict(Dependency::True, "the value is a size, index or dimension argument (`" +
                                                   Param->getNameAsString() + "` of `" +
                                                   calleeName(Call).str() + "`)");
          }
          return verdict(Dependency::False,
                         "the value goes straight back into a tensor operation");
        }
        StringRef Name = calleeName(Call);
        if (Name == "push_back" || Name == "emplace_back" || Name == "insert" ||
            Name == "emplace") {
          if (const auto *Member = dyn_cast<CXXMemberCallExpr>(Call))
            if (const VarDecl *Container = localContainer(Member->getImplicitObjectArgument()))
              return classifyContainer(Container, Call, Depth + 1);
          return verdict(Dependency::True, "the value is stored in a host container");
        }
        if (std::optional<UseVerdict> Sink = unseenMetricSink(Call, CurrentExpr))
          return *Sink;
        // The program's own print helper (`printElement(value, width)` around
        // `std::cout << value`): the value only reaches a log.
        for (unsigned I = 0; I < Call->getNumArgs(); ++I)
          if (ignoreWrappers(Call->getArg(I)) == ignoreWrappers(CurrentExpr) && loggingParameter(FD, I, 0))
            return LoggedBy(Call);
        if (std::optional<UseVerdict> InCallee = deferrableInCallee(Call, CurrentExpr, Depth))
          return *InCallee;
        return verdict(Dependency::True,
                       Name.empty() ? std::string("the value is passed to a function")
                                    : "the value is passed to `" + Name.str() + "`");
      }
      if (const auto *BO = dyn_cast<BinaryOperator>(PE)) {
        if (BO->isLogicalOp())
          return verdict(Dependency::True, "the value decides a branch (`&&`/`||`)");
        if (BO->isAssignmentOp() && BO->getRHS() == CurrentExpr) {
          if (BO->isCompoundAssignmentOp())
            return accumulatedInto(BO->getLHS(), BO, Depth);
          if (const auto *LHS = dyn_cast<DeclRefExpr>(ignoreWrappers(BO->getLHS())))
            if (const auto *VD = dyn_cast<VarDecl>(LHS->getDecl()))
              return classifyVariable(VD, BO, BO, Depth + 1);
          if (const auto *Subscript = dyn_cast<CXXOperatorCallExpr>(BO->getLHS()->IgnoreParenImpCasts());
              Subscript && Subscript->getOperator() == OO_Subscript)
            if (const VarDecl *Container = localContainer(Subscript->getArg(0)))
              return classifyContainer(Container, BO, Depth + 1);
          return verdict(Dependency::True, "the value is written to host memory");
        }
        if (BO->getOpcode() == BO_Comma && BO->getLHS() == CurrentExpr)
          return verdict(Dependency::False, "the value is unused");
        Climb(PE);
        continue;
      }
      if (const auto *UO = dyn_cast<UnaryOperator>(PE)) {
        Climb(UO);
        continue;
      }
      if (const auto *CO = dyn_cast<AbstractConditionalOperator>(PE)) {
        if (CO->getCond() == CurrentExpr)
          return verdict(Dependency::True, "the value chooses a branch of `?:`");
        Climb(CO);
        continue;
      }
      if (const auto *AS = dyn_cast<ArraySubscriptExpr>(PE)) {
        if (AS->getIdx() == CurrentExpr)
          return verdict(Dependency::True, "the value is used as an index");
        Climb(AS);
        continue;
      }
      if (isa<CXXNewExpr>(PE))
        return verdict(Dependency::True, "the value sizes an allocation");
      return verdict(Dependency::True, "the host uses the value");
    }

    // Statements.
    if (const auto *If = dyn_cast<IfStmt>(PS))
      if (If->getCond() == CurrentExpr) {
        if (std::optional<UseVerdict> Counted = onlyDecidesCounts(If, Depth))
          return *Counted;
        return verdict(Dependency::True, "the value decides an `if`");
      }
    if (const auto *While = dyn_cast<WhileStmt>(PS))
      if (While->getCond() == CurrentExpr)
        return verdict(Dependency::True, "the value controls a `while` loop");
    if (const auto *Do = dyn_cast<DoStmt>(PS))
      if (Do->getCond() == CurrentExpr)
        return verdict(Dependency::True, "the value controls a `do` loop");
    if (const auto *For = dyn_cast<ForStmt>(PS))
      if (For->getCond() == CurrentExpr)
        return verdict(Dependency::True, "the value bounds a `for` loop");
    if (const auto *Switch = dyn_cast<SwitchStmt>(PS))
      if (Switch->getCond() == CurrentExpr)
        return verdict(Dependency::True, "the value selects a `switch` case");
    if (isa<ReturnStmt>(PS))
      return classifyReturned(PS, Depth);
    if (isa<CoreturnStmt>(PS))
      return verdict(Dependency::True, "the value is returned to the caller");
    if (isa<DeclStmt>(PS))
      return verdict(Dependency::True, "the host uses the value");
    // Any other statement holding the expression discards its value.
    return verdict(Dependency::False, "the value is unused");
  }
}

} // namespace torch_syncfree
