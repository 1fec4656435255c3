// torch-sync-coalesce: several `item<T>()` reads of GPU tensors in a row each wait
// for the GPU. Stacking the values on the device and copying them once waits once:
//   auto host_values = torch::stack({a.detach(), b.detach()}).cpu().to(torch::kDouble);
//   ... static_cast<float>(host_values.data_ptr<double>()[0]) ... host_values.data_ptr<double>()[1] ...
// stack() promotes within a kind exactly (float with double: double; bool with
// int64: int64), so reads of one kind travel without a cast. Mixed kinds travel as
// double: the elements not known to be floating are cast, one kernel each. The fix
// is offered only when the kernels it adds (stack + casts) are no more than the
// syncs it removes; otherwise the finding is a note without a fix.
// Host work counts too (measured on an H200: a 3-read step of 0.12 ms took 0.25 ms
// with one `[i].item<T>()` pair of LibTorch calls per read and a reshape per value):
// the host copy is converted once to the travel type and read through its data
// pointer (no LibTorch call per read), and values known to be 0-dim are not reshaped.
#include "CatalogChecks.h"
#include "TensorFacts.h"
#include "TorchApi.h"
#include "fixes/HoistInvariantCopy.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Lex/Lexer.h"
#include "clang/Tooling/Transformer/RangeSelector.h"
#include "clang/Tooling/Transformer/Stencil.h"

using namespace clang;
using namespace clang::ast_matchers;
using namespace clang::transformer;

namespace torch_syncfree {

static auto blockMatcher(AnalysisHub *Hub) {
  // The system-header test first: it is cheap, userCode(hub()) walks the parents.
  return compoundStmt(unless(isExpansionInSystemHeader()), matchers::userCode(Hub)).bind("block");
}

void CoalesceCheck::registerMatchers(MatchFinder *Finder) { Finder->addMatcher(blockMatcher(hub()), this); }

struct CoalesceCheck::Read {
  const CXXMemberCallExpr *Item;
  const Expr *Object;
  bool ReadAsFloating; ///< item<T>() with a floating T
  ElementKind Kind;    ///< the tensor's element kind, when known
  Placement Where;
  std::string TypeText; ///< T of item<T>() as written (printed when spelled in a macro)
};
using Read = CoalesceCheck::Read;

namespace {
enum class StatementKind { Candidate, Neutral, Barrier };
} // namespace

/// A call that cannot touch a tensor: the standard library, printf-style and
/// the configured logging functions (they receive host values only).
static bool isHarmlessCall(const CallExpr *Call, UseClassifier &Classifier) {
  const FunctionDecl *FD = Call->getDirectCallee();
  if (!FD)
    return false;
  const auto *Method = dyn_cast<CXXMethodDecl>(FD);
  bool InStd = FD->isInStdNamespace() || (Method && Method->getParent()->isInStdNamespace());
  return InStd || Classifier.isLoggingCall(Call);
}

/// Classifies a statement of the block. A candidate holds exactly one
/// `item<T>()` of a definitely-GPU, side-effect-free tensor expression,
/// evaluated unconditionally, and nothing that could change a tensor; a neutral
/// statement mentions no tensor at all and calls only harmless functions.
static StatementKind classifyStatement(const Stmt *S, TranslationUnitAnalysis &TU, UseClassifier &Classifier,
                                       llvm::function_ref<bool(Placement)> MayBeOnGpu,
                                       std::optional<Read> &Out) {
  DeviceOracle &Oracle = TU.oracle();
  if (!isa<DeclStmt>(S) && !isa<Expr>(S))
    return StatementKind::Barrier; // control flow: hoisting could run reads not reached before
  std::vector<Read> Reads;
  bool Barrier = false, MentionsTensor = false;
  std::function<void(const Stmt *, bool)> Visit = [&](const Stmt *Node, bool Conditional) {
    if (!Node || Barrier)
      return;
    if (isa<LambdaExpr, StmtExpr>(Node)) {
      Barrier = true;
      return;
    }
    if (const auto *E = dyn_cast<Expr>(Node))
      MentionsTensor |= isTensorType(E->getType());
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Node); MC && isTensorMethodCall(MC, "item")) {
      const FunctionDecl *FD = MC->getDirectCallee();
      const TemplateArgumentList *Args = FD ? FD->getTemplateSpecializationArgs() : nullptr;
      const Expr *Object = MC->getImplicitObjectArgument();
      if (Conditional || !Args || Args->size() != 1 ||
          Args->get(0).getKind() != TemplateArgument::Type ||
          !Args->get(0).getAsType()->isArithmeticType() || !isSideEffectFree(Object) ||
          !MayBeOnGpu(Oracle.tensorPlacement(Object))) {
        Barrier = true;
        return;
      }
      QualType T = Args->get(0).getAsType();
      // T as written (`int64_t`, not the canonical `long`), for the read's cast.
      std::string TypeText;
      if (const auto *Callee = dyn_cast<MemberExpr>(MC->getCallee()->IgnoreParens());
          Callee && Callee->getNumTemplateArgs() == 1)
      {
        ASTContext &Ctx = Oracle.context();
        SourceRange Spelled = Callee->getTemplateArgs()[0].getSourceRange();
        if (Spelled.getBegin().isFileID() && Spelled.getEnd().isFileID())
          TypeText = Lexer::getSourceText(CharSourceRange::getTokenRange(Spelled), Ctx.getSourceManager(),
                                          Ctx.getLangOpts())
                         .str();
      }
      if (TypeText.empty()) // spelled in a macro: the type itself
        TypeText = T.getUnqualifiedType().getAsString(Oracle.context().getPrintingPolicy());
      Reads.push_back({MC, Object, T->isFloatingType(), elementKind(TU, Object),
                       Oracle.tensorPlacement(Object), TypeText});
      return; // the object was checked as a whole
    }
    if (const auto *Call = dyn_cast<CallExpr>(Node)) {
      const FunctionDecl *FD = Call->getDirectCallee();
      const auto *Member = dyn_cast<CXXMemberCallExpr>(Call);
      if (FD && isInTorchNamespace(FD)) {
        // In-place tensor ops change a tensor; methods of other LibTorch objects
        // (Module::to, Optimizer::step, zero_grad) change tensors they own.
        if (calleeName(Call).ends_with("_") ||
            (Member && !isTensorType(Member->getImplicitObjectArgument()->getType())))
          Barrier = true;
      } else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Call);
                 Op && Op->isAssignmentOp() && isTensorType(Op->getArg(0)->getType())) {
        Barrier = true;
      } else if (!isHarmlessCall(Call, Classifier)) {
        Barrier = true;
      }
    }
    bool ChildConditional = Conditional || isa<AbstractConditionalOperator>(Node) ||
                            (isa<BinaryOperator>(Node) && cast<BinaryOperator>(Node)->isLogicalOp());
    for (const Stmt *Child : Node->children())
      Visit(Child, ChildConditional);
  };
  Visit(S, false);
  if (Barrier || Reads.size() > 1)
    return StatementKind::Barrier;
  if (Reads.size() == 1) {
    Out = Reads.front();
    return StatementKind::Candidate;
  }
  return MentionsTensor ? StatementKind::Barrier : StatementKind::Neutral;
}

/// Every variable the object refers to is declared before \p Start.
static bool onlyRefersToEarlierDecls(const Expr *Object, SourceLocation Start,
                                     const SourceManager &SM) {
  bool Earlier = true;
  std::function<void(const Stmt *)> Visit = [&](const Stmt *Node) {
    if (!Node || !Earlier)
      return;
    if (const auto *Ref = dyn_cast<DeclRefExpr>(Node))
      if (isa<VarDecl, BindingDecl>(Ref->getDecl()) &&
          !SM.isBeforeInTranslationUnit(Ref->getDecl()->getLocation(), Start))
        Earlier = false;
    for (const Stmt *Child : Node->children())
      Visit(Child);
  };
  Visit(Object);
  return Earlier;
}

/// The variables and fields \p S assigns (`x = ..`, `s.f = ..`, `x += ..`, `++x`).
static llvm::SmallPtrSet<const ValueDecl *, 4> assignedIn(const Stmt *S) {
  llvm::SmallPtrSet<const ValueDecl *, 4> Assigned;
  auto Target = [&](const Expr *E) {
    E = E ? E->IgnoreParenImpCasts() : nullptr;
    if (const auto *Ref = dyn_cast_or_null<DeclRefExpr>(E))
      Assigned.insert(Ref->getDecl());
    else if (const auto *Member = dyn_cast_or_null<MemberExpr>(E))
      Assigned.insert(Member->getMemberDecl());
  };
  std::function<void(const Stmt *)> Visit = [&](const Stmt *Node) {
    if (!Node)
      return;
    if (const auto *BO = dyn_cast<BinaryOperator>(Node); BO && BO->isAssignmentOp())
      Target(BO->getLHS());
    if (const auto *UO = dyn_cast<UnaryOperator>(Node); UO && UO->isIncrementDecrementOp())
      Target(UO->getSubExpr());
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Node); Op && Op->isAssignmentOp())
      Target(Op->getArg(0));
    for (const Stmt *Child : Node->children())
      Visit(Child);
  };
  Visit(S);
  return Assigned;
}

/// Whether \p Object names a variable or field in \p Assigned (its value comes
/// from a statement of the run: it cannot be evaluated before the run).
static bool refersToAny(const Expr *Object, const llvm::SmallPtrSetImpl<const ValueDecl *> &Assigned) {
  bool Found = false;
  std::function<void(const Stmt *)> Visit = [&](const Stmt *Node) {
    if (!Node || Found)
      return;
    if (const auto *Ref = dyn_cast<DeclRefExpr>(Node))
      Found = Assigned.count(Ref->getDecl());
    else if (const auto *Member = dyn_cast<MemberExpr>(Node))
      Found = Assigned.count(Member->getMemberDecl());
    for (const Stmt *Child : Node->children())
      Visit(Child);
  };
  Visit(Object);
  return Found;
}

const std::vector<CoalesceCheck::RunPlan> &CoalesceCheck::plansFor(const BoundNodes &BlockMatch,
                                                                   ASTContext &Ctx) {
  const auto *Block = BlockMatch.getNodeAs<CompoundStmt>("block");
  if (PlannedContext != &Ctx) {
    Plans.clear();
    PlannedContext = &Ctx;
  }
  if (auto It = Plans.find(Block); It != Plans.end())
    return It->second;
  std::vector<RunPlan> BlockPlans;
  const SourceManager &SM = Ctx.getSourceManager();
  std::vector<std::pair<const Stmt *, Read>> Run;
  llvm::SmallPtrSet<const ValueDecl *, 8> AssignedInRun; // by the run's statements so far
  auto Flush = [&]() {
    if (Run.size() >= 2)
      BlockPlans.push_back(planRun(Run, MatchFinder::MatchResult(BlockMatch, &Ctx)));
    Run.clear();
    AssignedInRun.clear();
  };
  for (const Stmt *S : Block->body()) {
    std::optional<Read> R;
    StatementKind Kind =
        classifyStatement(S, analysis(Ctx), classifier(Ctx), [&](Placement P) { return mayBeOnGpu(P); }, R);
    // A read a check ranked above this one reports (torch-sync-deferred-accumulate
    // moves it out of the loop) is not coalesced, and neither is a read a fix
    // inserted (its one read after a loop).
    // Nor is a read whose wait a restructuring of torch-sync-item removes (a
    // host copy already made, a round trip, an element read of a tensor the
    // loop does not change: issue 41).
    if (Kind == StatementKind::Candidate && R &&
        (isSiteClaimedAbove(Ctx, R->Item) || isOnInsertedSyncLine(R->Item->getExprLoc(), SM) ||
         (isCheckEnabled("torch-sync-item") && restructuringRemovesRead(analysis(Ctx), R->Item))))
      Kind = StatementKind::Barrier;
    switch (Kind) {
    case StatementKind::Neutral:
      if (!Run.empty())
        AssignedInRun.insert_range(assignedIn(S));
      continue;
    case StatementKind::Barrier:
      Flush();
      continue;
    case StatementKind::Candidate:
      // The stacked copy runs before the run's first statement: the object may
      // only use variables declared before it.
      // Nor a value a statement of the run assigns (`s.best = a.argmax().item<..>();
      // ... t[s.best].item<..>()`).
      if (!R)
        continue;
      if (!Run.empty() && (!onlyRefersToEarlierDecls(R->Object, Run.front().first->getBeginLoc(), SM) ||
                           refersToAny(R->Object, AssignedInRun)))
        Flush();
      Run.push_back({S, *R});
      AssignedInRun.insert_range(assignedIn(S));
      continue;
    }
  }
  Flush();
  return Plans[Block] = std::move(BlockPlans);
}

bool CoalesceCheck::claimsSite(SyncSiteKind Kind, TranslationUnitAnalysis &TU, const Expr *Site) {
  if (Kind != SyncSiteKind::ItemRead)
    return false;
  // The block the read's statement belongs to (through a declaration's initialiser).
  ASTContext &Ctx = TU.context();
  const CompoundStmt *Block = enclosingBlock(Ctx, Site);
  if (!Block)
    return false;
  auto BlockMatches = match(blockMatcher(hub()), *Block, Ctx);
  if (BlockMatches.empty())
    return false;
  // A read of a run this check rewrites: the fixed run is one finding.
  return llvm::any_of(plansFor(BlockMatches.front(), Ctx), [&](const RunPlan &Plan) {
    return Plan.Fixes && llvm::is_contained(Plan.Reads, Site);
  });
}

void CoalesceCheck::check(const MatchFinder::MatchResult &Result) {
  for (const RunPlan &Plan : plansFor(Result.Nodes, *Result.Context))
    if (Plan.Reported)
      report(Plan.Loc, Plan.F, Plan.Fixes ? *Plan.Fixes : std::vector<FixItHint>{});
}

CoalesceCheck::RunPlan CoalesceCheck::planRun(const std::vector<std::pair<const Stmt *, Read>> &Run,
                                              const MatchFinder::MatchResult &Result) {
  ASTContext &Ctx = *Result.Context;
  const SourceManager &SM = Ctx.getSourceManager();
  RunPlan Plan;
  for (const auto &[S, R] : Run)
    Plan.Reads.push_back(R.Item);
  Plan.Loc = Run.front().second.Item->getExprLoc();
  const Stmt *First = Run.front().first;
  std::string Lines;
  for (const auto &[S, R] : Run)
    Lines += (Lines.empty() ? "" : ", ") +
             std::to_string(SM.getExpansionLineNumber(R.Item->getExprLoc()));
  // The kind the values travel as: floating when any is read as or known to be
  // floating, else integral. An element known to be of that kind travels as it is
  // (stack promotes it exactly); any other is cast, which may cost a kernel.
  bool FloatingTravel = llvm::any_of(Run, [](const auto &Entry) {
    return Entry.second.ReadAsFloating || Entry.second.Kind == ElementKind::Floating;
  });
  auto needsCast = [&](const Read &R) {
    if (FloatingTravel)
      return R.Kind != ElementKind::Floating;
    return R.Kind != ElementKind::Integer && R.Kind != ElementKind::Bool;
  };
  unsigned Casts = llvm::count_if(Run, [&](const auto &Entry) { return needsCast(Entry.second); });
  // A name no declaration in the enclosing function (or lambda) uses.
  const Stmt *Scope = enclosingBody(Ctx, First);
  if (!Scope)
    Scope = First;
  std::string Name;
  for (int Attempt = 0; Name.empty(); ++Attempt) {
    std::string Candidate = "host_values" + (Attempt ? std::to_string(Attempt + 1) : "");
    if (match(findAll(namedDecl(hasName(Candidate))), *Scope, Ctx).empty())
      Name = Candidate;
  }
  std::string NS = torchNamespacePrefix(Ctx);
  // stack() needs one device. Tensors known to be on the GPU share it; otherwise
  // every value is moved to the device of a tensor variable of the run (a no-op
  // when they already share it), and without such a variable there is no fix.
  bool AllGpu = llvm::all_of(Run, [](const auto &Entry) { return Entry.second.Where == Placement::Gpu; });
  const Expr *Anchor = nullptr;
  for (const auto &[S, R] : Run)
    if (!Anchor && isa<DeclRefExpr>(ignoreWrappers(R.Object)))
      Anchor = R.Object;
  std::string Elements;
  std::vector<ASTEdit> Edits;
  std::string TravelType = FloatingTravel ? "double" : "int64_t";
  for (size_t I = 0; I < Run.size(); ++I) {
    const Read &R = Run[I].second;
    // Integer and bool tensors never require grad: no detach. 0-dim values need no reshape.
    bool NoGrad = R.Kind == ElementKind::Integer || R.Kind == ElementKind::Bool;
    std::string Suffix = std::string(NoGrad ? "" : ".detach()") + (isZeroDim(R.Object) ? "" : ".reshape({})");
    std::string Device = Anchor && R.Object != Anchor && !AllGpu
                             ? sourceText(Ctx, Anchor) + ".device()"
                             : std::string();
    std::string Dtype = needsCast(R) ? NS + (FloatingTravel ? "kDouble" : "kLong") : std::string();
    if (!Device.empty() || !Dtype.empty())
      Suffix += ".to(" + Device + (!Device.empty() && !Dtype.empty() ? ", " : "") + Dtype + ")";
    std::string Value = Suffix.empty() ? sourceText(Ctx, R.Object) : asPostfix(Ctx, R.Object) + Suffix;
    Elements += (I ? ", " : "") + Value;
    // The read: the I-th value of the host copy, converted as item<T>() converts it.
    std::string Element = Name + ".data_ptr<" + TravelType + ">()[" + std::to_string(I) + "]";
    Edits.push_back(changeTo(selectTokens(R.Item), cat(R.TypeText == TravelType
                                                           ? Element
                                                           : "static_cast<" + R.TypeText + ">(" + Element + ")")));
  }
  unsigned Column = SM.getExpansionColumnNumber(First->getBeginLoc());
  std::string Indent(Column > 0 ? Column - 1 : 0, ' ');
  Edits.insert(Edits.begin(),
               insertBefore(selectPoint(First->getBeginLoc()),
                            cat("auto " + Name + " = " + NS + "stack({" + Elements + "}).cpu().to(" + NS +
                                (FloatingTravel ? "kDouble" : "kLong") + ");" +
                                insertedSyncComment("one copy for " + std::to_string(Run.size()) +
                                                    " reads") +
                                "\n" + Indent)));
  // A run is reported whether or not it is rewritten (issue 41): its reads
  // keep their own findings (torch-sync-item, torch-sync-deferred-log) until a
  // fix makes them this check's, and the run's finding says what one copy
  // saves. Its class is its reads': a true dependency when the host needs any
  // of the values (one copy still serves them all).
  Finding &F = Plan.F;
  auto ReportWithoutFix = [&]() {
    Plan.Reported = true;
    return Plan;
  };
  F.What = std::to_string(Run.size()) + " `item()` reads of " +
           (AllGpu ? "GPU tensors" : "tensors that may be on the GPU") + " in a row (lines " +
           Lines + ") each wait for the GPU";
  F.Use.Kind = Dependency::False;
  F.Use.Reason = "the values can travel to the host in one copy";
  for (const auto &[S, R] : Run)
    if (UseVerdict Use = classifier(Ctx).classify(R.Item); Use.Kind == Dependency::True) {
      F.Use.Kind = Dependency::True;
      F.Use.Reason = "line " + std::to_string(SM.getExpansionLineNumber(R.Item->getExprLoc())) + ": " +
                     Use.Reason + "; one copy still serves every read";
      break;
    }
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(First);
  F.Remedy = "stack them on the device and copy once with `" + NS +
             "stack({...}).cpu()` (one wait instead of " + std::to_string(Run.size()) + ")";
  if (!AllGpu && !Anchor) {
    F.Remedy += " (no fix: no tensor variable among them names the device to stack on)";
    return ReportWithoutFix();
  }
  // A rewrite exists to make the step faster: stack() and each cast are kernels,
  // and on a short step a kernel costs about what a sync of an idle GPU does.
  unsigned SyncsRemoved = Run.size() - 1, KernelsAdded = 1 + Casts;
  if (KernelsAdded > SyncsRemoved) {
    F.Remedy += " (no fix: stacking these values needs " + std::to_string(KernelsAdded) +
                " kernels (stack and " + std::to_string(Casts) + " dtype casts of values of unknown or "
                "mixed kinds) to save " + std::to_string(SyncsRemoved) +
                " syncs; give the values one dtype, e.g. `.to(" + NS + "kDouble)` where they are made)";
    return ReportWithoutFix();
  }
  if (!fixesEnabled()) {
    F.Remedy += " (the fix is opt-in, `torch-sync-coalesce.Fix: true`: the values are "
                "ready after the first read, so the copies it saves are short round trips, and on "
                "an H200 the stack and copy cost more)";
    return ReportWithoutFix();
  }
  std::vector<const Stmt *> RunStatements;
  for (const auto &[S, R] : Run)
    RunStatements.push_back(S);
  if (std::string NoGain = noGainReason(Ctx, RunStatements); !NoGain.empty()) {
    F.Remedy += " (no fix: " + NoGain + ")";
    return ReportWithoutFix();
  }
  auto Fixes = fixItsFor(Edits, Result);
  if (!Fixes || Fixes->empty()) // e.g. spelled in a macro
    return ReportWithoutFix();
  // The fixed run is one finding: its reads are this check's (claimsSite).
  Plan.Fixes = std::move(*Fixes);
  Plan.Reported = true;
  return Plan;
}

TORCH_SYNC_CHECK_FACTORY(CoalesceCheck)

} // namespace torch_syncfree
