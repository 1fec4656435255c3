// torch-sync-call-in-loop: a call inside a loop to a function of this TU whose
// body (or a function it calls, up to three levels) makes the host wait on a
// GPU value. The sync is reported where the loop is, with a note in the callee.
// The callee is evaluated with its tensor parameters bound to the call's
// arguments, so `log_stats(cpu_tensor)` is not reported and
// `compute_metrics(gpu_logits)` is.
#include "Barriers.h"
#include "CatalogChecks.h"
#include "CopyCalls.h"
#include "Operators.h"
#include "SyncCalls.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include <set>

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

void CallInLoopCheck::registerMatchers(MatchFinder *Finder) {
  Finder->addMatcher(
      callExpr(unless(isExpansionInSystemHeader()), matchers::userCode(hub())).bind("call"), this);
  if (!projectSummaries())
    return;
  Finder->addMatcher(translationUnitDecl().bind("unit"), this);
  Finder->addMatcher(functionDecl(isDefinition(), unless(isExpansionInSystemHeader())).bind("definition"),
                     this);
  Finder->addMatcher(declRefExpr(to(functionDecl().bind("referenced")), unless(isExpansionInSystemHeader()),
                                 matchers::userCode(hub()))
                         .bind("reference"),
                     this);
  // Fields the unit's code names or initialises: their stores go into the
  // record (issue 43).
  Finder->addMatcher(memberExpr(member(fieldDecl().bind("field")), unless(isExpansionInSystemHeader())),
                     this);
  Finder->addMatcher(cxxConstructorDecl(isDefinition(), unless(isExpansionInSystemHeader()),
                                        forEachConstructorInitializer(forField(fieldDecl().bind("field")))),
                     this);
}

void CallInLoopCheck::onStartOfTranslationUnit() {
  SyncCheck::onStartOfTranslationUnit();
  Unit = nullptr;
  Defines.clear();
  Calls.clear();
  Addresses.clear();
}

/// The name a class has in every unit, for "is it ever constructed": nullopt
/// for classes other units cannot name (local, anonymous namespace, lambdas)
/// and templates (their instances are named apart).
static std::optional<std::string> constructedClassKey(const CXXRecordDecl *Class) {
  if (!Class || !Class->getIdentifier() || Class->isLocalClass() || Class->isInAnonymousNamespace() ||
      Class->isLambda() || Class->isDependentContext() || isa<ClassTemplateSpecializationDecl>(Class))
    return std::nullopt;
  return Class->getQualifiedNameAsString();
}

/// A constructor the user wrote, of a class whose every construction names it.
static bool isJudgedConstructor(const FunctionDecl *FD) {
  const auto *Ctor = dyn_cast<CXXConstructorDecl>(FD);
  return Ctor && !Ctor->isImplicit() && constructedClassKey(Ctor->getParent()).has_value();
}

/// Whether the batch may say that nothing calls \p FD (issue 43, item 13): a
/// function of the main file or of a project header (every unit that
/// includes it says so; a header's function is judged by its key) every use
/// of which is a call or a reference the project's units show, or a constructor (reached when its class is
/// named anywhere outside its own members). Not `main`, templates (their instances are named apart), virtual
/// functions (called through a base), other special members and operators (called implicitly), `extern "C"`
/// or `used` functions (called from outside the program), nor a function a macro defines.
static bool calledByLibTorchTemplates(const CXXMethodDecl *Method);
static bool callersCanBeJudged(const FunctionDecl *FD, const SourceManager &SM) {
  SourceLocation At = SM.getExpansionLoc(FD->getLocation());
  if ((!SM.isInMainFile(At) && SM.isInSystemHeader(At)) || At.isInvalid() || FD->getLocation().isMacroID() ||
      FD->isMain() || FD->isTemplated() || FD->isTemplateInstantiation() || FD->isExternC() ||
      FD->isDeleted() || FD->isDefaulted() || FD->hasAttr<UsedAttr>() || FD->hasAttr<ConstructorAttr>() ||
      (!FD->getDeclName().isIdentifier() && !isJudgedConstructor(FD)) ||
      FD->getLexicalDeclContext()->isFunctionOrMethod())
    return false;
  if (const auto *Method = dyn_cast<CXXMethodDecl>(FD))
    return !Method->isVirtual() && !Method->getParent()->isLambda() &&
           (!calledByLibTorchTemplates(Method) || constructedClassKey(Method->getParent()).has_value());
  return true;
}

/// A method LibTorch's templates call by name on a class that derives from
/// one of LibTorch's: a module's `forward` (`Sequential`, `AnyModule`, the
/// holder's call operator) and `reset` (`Cloneable`), an autograd Function's
/// static `forward` and `backward` (`apply`). No unit shows those calls: such
/// a method is reached when its class is named (constructed, or handed to
/// `apply` as a template argument), as a constructor is.
static bool calledByLibTorchTemplates(const CXXMethodDecl *Method) {
  if (!Method->getDeclName().isIdentifier() ||
      !llvm::is_contained({"forward", "backward", "reset"}, Method->getName()))
    return false;
  const CXXRecordDecl *Definition = Method->getParent()->getDefinition();
  return Definition &&
         !Definition->forallBases([](const CXXRecordDecl *Base) { return !isInTorchNamespace(Base); });
}

void CallInLoopCheck::recordUse(const Expr *Use, const FunctionDecl *Target, bool IsCall, ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  if (!isProjectFunction(Target, SM))
    return;
  llvm::json::Object Record{{"target", linkageName(Target)}, {"internal", !Target->isExternallyVisible()}};
  // The function the use belongs to: the outermost (a lambda's calls are its
  // enclosing function's).
  if (const FunctionDecl *From = outermostFunction(Ctx, Use); From && callersCanBeJudged(From, SM)) {
    Record["from"] = linkageName(From);
    Record["fromInternal"] = !From->isExternallyVisible();
  }
  if (!IsCall) {
    Addresses.push_back(std::move(Record));
    return;
  }
  if (llvm::json::Array Arguments = argumentConditions(cast<CallExpr>(Use), Target, Ctx); !Arguments.empty())
    Record["args"] = std::move(Arguments);
  SourceLocation At = SM.getExpansionLoc(Use->getBeginLoc());
  Record["file"] = absoluteFileName(SM, At);
  Record["offset"] = SM.getFileOffset(At);
  Record["line"] = SM.getExpansionLineNumber(At);
  // How this caller uses a result that may be a value the callee read.
  if (!Target->getReturnType()->isVoidType()) {
    UseVerdict Caller = classifier(Ctx).classify(cast<CallExpr>(Use));
    Record["class"] = dependencyName(Caller.Kind);
    Record["reason"] = Caller.Reason;
    Record["returned"] = Caller.ReturnedToUnseenCaller; // returned again: its callers decide
  }
  Calls.push_back(std::move(Record));
}

void CallInLoopCheck::onEndOfTranslationUnit() {
  if (!Unit)
    return;
  const SourceManager &SM = Unit->getSourceManager();
  emitSummaryRecord(SM.getLocForStartOfFile(SM.getMainFileID()),
                    llvm::json::Object{{"unit", true},
                                       {"defines", std::move(Defines)},
                                       {"calls", std::move(Calls)},
                                       {"addresses", std::move(Addresses)},
                                       {"fields", fieldConditions()},
                                       {"names", namedClasses(*Unit)},
                                       {"operators", registeredOperators(*Unit)}});
  Defines.clear();
  Calls.clear();
  Addresses.clear();
  ProjectFields.clear();
  Unit = nullptr;
}

namespace {
/// The classes the project's code names outside their own definition and
/// members: where one may be constructed (a variable, `new`, `make_shared<T>`,
/// a base class, a return type). A class no unit names is never constructed.
class ClassNames : public RecursiveASTVisitor<ClassNames> {
public:
  std::set<std::string> Named;
  bool TraverseDecl(Decl *D) {
    Enclosing.push_back(D);
    bool Result = RecursiveASTVisitor::TraverseDecl(D);
    Enclosing.pop_back();
    return Result;
  }
  bool VisitRecordTypeLoc(RecordTypeLoc TL) {
    const auto *Class = dyn_cast<CXXRecordDecl>(TL.getDecl());
    std::optional<std::string> Key =
        Class ? constructedClassKey(Class->getDefinition() ? Class->getDefinition() : Class) : std::nullopt;
    if (!Key || Named.count(*Key))
      return true;
    for (const Decl *D : Enclosing) {
      const auto *Record = dyn_cast<CXXRecordDecl>(D);
      if (const auto *Method = dyn_cast<CXXMethodDecl>(D))
        Record = Method->getParent();
      if (Record && Record->getCanonicalDecl() == Class->getCanonicalDecl())
        return true; // its own definition or member: not a construction elsewhere
    }
    Named.insert(*Key);
    return true;
  }

private:
  std::vector<const Decl *> Enclosing;
};
} // namespace

llvm::json::Array CallInLoopCheck::namedClasses(ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  ClassNames Visitor;
  for (Decl *D : Ctx.getTranslationUnitDecl()->decls()) {
    SourceLocation At = SM.getExpansionLoc(D->getLocation());
    if (At.isValid() && !SM.isInSystemHeader(At))
      Visitor.TraverseDecl(D);
  }
  return llvm::json::Array(Visitor.Named);
}

/// {"cpu": bool, "origins": [...]} of a condition (origins only when on the CPU).
static llvm::json::Object conditionRecord(const CpuCondition &Condition) {
  llvm::json::Object Record{{"cpu", Condition.OnCpu}};
  if (Condition.OnCpu && !Condition.Origins.empty())
    Record["origins"] = llvm::json::Array(Condition.Origins);
  return Record;
}

/// A type that may hold tensors: a tensor, or a standard container, pair,
/// tuple or optional of such types.
static bool mayHoldTensors(QualType T, unsigned Depth = 0) {
  T = T.getNonReferenceType().getCanonicalType();
  if (isTensorType(T))
    return true;
  const auto *Specialization = dyn_cast_or_null<ClassTemplateSpecializationDecl>(T->getAsCXXRecordDecl());
  if (!Specialization || !Specialization->isInStdNamespace() || Depth > 3)
    return false;
  for (const TemplateArgument &Arg : Specialization->getTemplateArgs().asArray())
    if (Arg.getKind() == TemplateArgument::Type && mayHoldTensors(Arg.getAsType(), Depth + 1))
      return true;
  return false;
}

llvm::json::Array CallInLoopCheck::fieldConditions() {
  llvm::json::Array Fields;
  if (!Unit)
    return Fields;
  DeviceOracle &Oracle = oracle(*Unit);
  for (const auto &[Key, Field] : ProjectFields) // by key: the same order in every run
    if (std::optional<CpuCondition> Stored = Oracle.fieldStoresCpuCondition(Field)) {
      llvm::json::Object Record = conditionRecord(*Stored);
      Record["field"] = Key;
      Fields.push_back(std::move(Record));
    }
  return Fields;
}

llvm::json::Array CallInLoopCheck::argumentConditions(const CallExpr *Call, const FunctionDecl *Target,
                                                      ASTContext &Ctx) {
  llvm::json::Array Arguments;
  if (isa<CXXOperatorCallExpr>(Call) || !Target->isExternallyVisible())
    return Arguments;
  DeviceOracle &Oracle = oracle(Ctx);
  for (unsigned I = 0; I < Target->getNumParams() && I < Call->getNumArgs(); ++I) {
    if (!mayHoldTensors(Target->getParamDecl(I)->getType()))
      continue;
    const Expr *Argument = Call->getArg(I);
    // The unit's own answer first; a fresh oracle only for what it cannot place.
    Placement Alone = Oracle.heldTensorsPlacement(Argument);
    CpuCondition Condition;
    Condition.OnCpu = Alone == Placement::Cpu;
    if (Alone == Placement::Unknown)
      Condition = Oracle.cpuCondition(Argument);
    llvm::json::Object Record = conditionRecord(Condition);
    Record["index"] = I;
    Arguments.push_back(std::move(Record));
  }
  return Arguments;
}

namespace {
struct CalleeSync {
  const CallExpr *Site = nullptr;      ///< the syncing call inside the callee
  SyncCall What;
  Placement Where = Placement::Unknown;
  std::vector<const FunctionDecl *> Path; ///< callee, then nested callees to the site
  bool FixedElsewhere = false; ///< another check's fix removes it in the same run
};
} // namespace

/// An inline function of a library header (a system header that is neither
/// LibTorch's nor the standard library's) that \p Call calls: header-only
/// wrappers (`buffer.copy_from_host(..)` around a blocking `cudaMemcpy`) wait
/// at the user's call (issue 42). Followed for barriers only: what a library
/// does with a tensor's value is not the user's to classify.
static const FunctionDecl *libraryWrapper(const CallExpr *Call, ASTContext &Ctx) {
  const FunctionDecl *Callee = Call->getDirectCallee();
  const FunctionDecl *Definition = nullptr;
  if (!Callee || !Callee->hasBody(Definition) || !Definition || isInTorchNamespace(Definition) ||
      Definition->isInStdNamespace() || !Ctx.getSourceManager().isInSystemHeader(Definition->getLocation()))
    return nullptr;
  const auto *Method = dyn_cast<CXXMethodDecl>(Definition);
  if (Method && Method->isVirtual())
    return nullptr;
  return Definition;
}

/// The syncs on may-be-GPU values in \p Body (at most \p Limit), following calls
/// into functions of this TU with their arguments' placements bound, and into
/// library wrappers for their barriers (\p BarriersOnly inside them).
static void findSyncs(const Stmt *Body, TranslationUnitAnalysis &TU, DeviceOracle &Oracle,
                      llvm::function_ref<bool(Placement)> MayBeOnGpu,
                      llvm::function_ref<bool(const CallExpr *)> FixedElsewhere,
                      llvm::function_ref<bool(const FunctionDecl *)> Blocking,
                      std::vector<const FunctionDecl *> &Path, std::vector<CalleeSync> &Found, size_t Limit,
                      bool BarriersOnly = false) {
  if (!Body)
    return;
  ASTContext &Ctx = TU.context();
  for (const TranslationUnitAnalysis::CallSite &Site : TU.callSitesUnder(*Body)) {
    if (Found.size() >= Limit)
      return;
    // A lambda's body runs when it is called; the reads the tool inserted on
    // purpose (one read after a loop, one coalesced copy) are not reported
    // again through their callers.
    if (Site.InLambda || Site.Inserted)
      continue;
    const CallExpr *Call = Site.Call;
    std::optional<SyncCall> Sync = Site.Sync;
    // A function the user listed as blocking (BlockingFunctions): a barrier.
    if (const FunctionDecl *FD = Call->getDirectCallee(); !Sync && Blocking(FD))
      Sync = SyncCall{FD->getName(), nullptr, /*ReadsValue=*/false};
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Call);
        !Sync && MC && isBlockingCopyToHost(MC, Oracle, Ctx))
      Sync = SyncCall{"to(<CPU>)", MC->getImplicitObjectArgument(), /*ReadsValue=*/true};
    if (Sync && BarriersOnly && (Sync->Tensor || Sync->ReadsValue))
      continue;
    if (Sync) {
      Placement Where = Sync->Tensor ? Oracle.tensorPlacement(Sync->Tensor) : Placement::Gpu;
      if (MayBeOnGpu(Where))
        Found.push_back(CalleeSync{Call, *Sync, Where, Path, FixedElsewhere(Call)});
    } else if (const FunctionDecl *Callee = BarriersOnly ? nullptr : Oracle.followableCallee(Call);
               Callee && Path.size() < 3 && Oracle.pushCallBindings(Call)) {
      Path.push_back(Callee);
      findSyncs(Callee->getBody(), TU, Oracle, MayBeOnGpu, FixedElsewhere, Blocking, Path, Found, Limit);
      Path.pop_back();
      Oracle.popCallBindings();
    } else if (const FunctionDecl *Wrapper = libraryWrapper(Call, Ctx);
               Wrapper && Path.size() < 3 && llvm::find(Path, Wrapper) == Path.end()) {
      Path.push_back(Wrapper);
      findSyncs(Wrapper->getBody(), TU, Oracle, MayBeOnGpu, FixedElsewhere, Blocking, Path, Found, Limit,
                /*BarriersOnly=*/true);
      Path.pop_back();
    }
  }
}

/// The first function on the path to a wait that a library header defines.
static const FunctionDecl *libraryFunctionOn(llvm::ArrayRef<const FunctionDecl *> Path,
                                             const SourceManager &SM) {
  for (const FunctionDecl *FD : Path)
    if (SM.isInSystemHeader(FD->getLocation()))
      return FD;
  return nullptr;
}

/// "line N" of the wait, in the caller's file; "buffer.h:N" in another file.
static std::string siteLine(const SourceManager &SM, SourceLocation Site, SourceLocation Caller) {
  std::string Line = std::to_string(SM.getExpansionLineNumber(Site));
  if (SM.getFileID(SM.getExpansionLoc(Site)) == SM.getFileID(SM.getExpansionLoc(Caller)))
    return "line " + Line;
  return llvm::sys::path::filename(SM.getFilename(SM.getExpansionLoc(Site))).str() + ":" + Line;
}

namespace {
/// The wait a call is cited by, and how the callee uses it.
struct ChosenWait {
  CalleeSync Sync;
  UseVerdict Use;         ///< the value's use where it is read (a value read)
  std::string BarrierWhy; ///< why a barrier is deliberate ("" when it is not)
};
} // namespace

/// The callee's most necessary wait: the first one the host needs (a value that
/// decides, a barrier with no reason to be there), else the first one no other
/// fix removes, else a deliberate barrier (a timer's: torch-sync-explicit leaves
/// it alone, so the copies are what to cite; issue 43, item 6), else the first
/// one. Each value's use is classified where it is read, inside the callee.
static std::optional<ChosenWait> chooseWait(llvm::ArrayRef<CalleeSync> Syncs, TranslationUnitAnalysis &TU,
                                            UseClassifier &Classifier) {
  std::optional<ChosenWait> Chosen;
  int ChosenRank = 4;
  for (const CalleeSync &Sync : Syncs) {
    bool Logged = Sync.What.Api == "print" || Sync.What.Api == "operator<<";
    UseVerdict V;
    if (Sync.What.ReadsValue && !Logged)
      V = Classifier.classify(Sync.Site);
    std::string HostWork, Why;
    if (!Sync.What.Tensor && !Sync.What.ReadsValue)
      Why = barrierReason(Sync.Site, TU, HostWork);
    bool Deliberate = !Why.empty() && HostWork.empty();
    bool Needed =
        Sync.What.ReadsValue ? (!Logged && !V.Reason.empty() && V.Kind == Dependency::True) : !Deliberate;
    int Rank = Sync.FixedElsewhere ? 3 : Deliberate ? 2 : Needed ? 0 : 1;
    if (Rank < ChosenRank) {
      Chosen = ChosenWait{Sync, V, Deliberate ? Why : std::string()};
      ChosenRank = Rank;
    }
    if (Rank == 0)
      break;
  }
  return Chosen;
}

/// "`item` on a GPU tensor at line 12 through `helper`".
static std::string waitPhrase(const CalleeSync &Sync, const std::string &Where) {
  std::string Chain;
  for (size_t I = 1; I < Sync.Path.size(); ++I)
    Chain += " through `" + Sync.Path[I]->getNameAsString() + "`";
  return "`" + Sync.What.Api.str() + "`" +
         (Sync.What.Tensor ? " on " + tensorPhrase(Sync.Where) : std::string()) + " at " + Where + Chain;
}

/// How the callee uses its chosen wait, for the finding at the call.
static UseVerdict calleeVerdict(const ChosenWait &Chosen, const SourceManager &SM) {
  const CalleeSync &Found = Chosen.Sync;
  UseVerdict V;
  if (Found.What.ReadsValue && !Chosen.Use.Reason.empty()) {
    V = Chosen.Use;
    V.Reason = "in the callee, " + Chosen.Use.Reason;
  } else if (Found.What.Api == "print" || Found.What.Api == "operator<<") {
    V.Kind = Dependency::False;
    V.Reason = "in the callee, the value is only logged";
  } else if (const FunctionDecl *Library = libraryFunctionOn(Found.Path, SM)) {
    V.Kind = Dependency::True;
    V.Reason = "inside the library's `" + Library->getNameAsString() + "`, `" + Found.What.Api.str() +
               "` blocks the host until the GPU is done";
  } else if (!Chosen.BarrierWhy.empty()) {
    V.Kind = Dependency::Intentional;
    V.Reason = "in the callee, " + Chosen.BarrierWhy;
  } else {
    V.Kind = Dependency::True;
    V.Reason = "the callee needs GPU results on the host";
  }
  return V;
}

/// The remedy of a call's finding, by its class.
static std::string callRemedy(Dependency Kind, bool InLibrary, const std::string &BarrierWhy) {
  if (Kind == Dependency::False)
    return "let the callee return device tensors and read them after the loop or at a log interval";
  if (InLibrary)
    return "use the library's asynchronous variant (a stream-ordered copy from pinned memory) or move the "
           "call out of the loop";
  if (Kind == Dependency::Intentional)
    return BarrierWhy.find("timer") != std::string::npos
               ? "for timing, CUDA events measure without stalling the host"
               : "keep it if every iteration needs it";
  return "move the host decision out of the loop or onto the device";
}

std::optional<llvm::json::Object> CallInLoopCheck::waitRecord(const FunctionDecl *Definition,
                                                              ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  DeviceOracle &Oracle = oracle(Ctx);
  std::vector<const FunctionDecl *> Path{Definition};
  std::vector<CalleeSync> Syncs;
  auto FixedElsewhere = [&](const CallExpr *Site) { return analysis(Ctx).isRemovedByItsOwner(Site); };
  findSyncs(
      Definition->getBody(), analysis(Ctx), Oracle, [&](Placement P) { return mayBeOnGpu(P); },
      FixedElsewhere, [&](const FunctionDecl *FD) { return isBlockingFunction(FD); }, Path, Syncs,
      /*Limit=*/16);
  std::optional<ChosenWait> Chosen = chooseWait(Syncs, analysis(Ctx), classifier(Ctx));
  if (!Chosen)
    return std::nullopt;
  SourceLocation Site = SM.getExpansionLoc(Chosen->Sync.Site->getBeginLoc());
  UseVerdict Use = calleeVerdict(*Chosen, SM);
  bool InLibrary = libraryFunctionOn(Chosen->Sync.Path, SM) != nullptr;
  return llvm::json::Object{
      {"what", waitPhrase(Chosen->Sync, llvm::sys::path::filename(SM.getFilename(Site)).str() + ":" +
                                            std::to_string(SM.getExpansionLineNumber(Site)))},
      {"file", absoluteFileName(SM, Site)},
      {"offset", SM.getFileOffset(Site)},
      {"class", dependencyName(Use.Kind)},
      {"reason", Use.Reason},
      {"returned", Chosen->Sync.What.ReadsValue && Chosen->Use.ReturnedToUnseenCaller},
      {"library", InLibrary},
      {"barrier", Chosen->BarrierWhy},
      // The remedy by the class the call ends with (the caller may decide it).
      {"remedy",
       llvm::json::Object{
           {dependencyName(Dependency::False), callRemedy(Dependency::False, false, Chosen->BarrierWhy)},
           {dependencyName(Dependency::True), callRemedy(Dependency::True, InLibrary, Chosen->BarrierWhy)},
           {dependencyName(Dependency::Intentional),
            callRemedy(Dependency::Intentional, false, Chosen->BarrierWhy)}}}};
}

/// The project operators a function's body calls through the dispatcher, in
/// source order, each once.
llvm::json::Array CallInLoopCheck::dispatchedOperators(const FunctionDecl *Definition) {
  struct Finder : RecursiveASTVisitor<Finder> {
    std::vector<std::string> Found;
    bool VisitCallExpr(CallExpr *Call) {
      if (std::optional<std::string> Operator = dispatchedOperator(Call);
          Operator && llvm::find(Found, *Operator) == Found.end())
        Found.push_back(*Operator);
      return true;
    }
  } Visitor;
  Visitor.TraverseStmt(Definition->getBody());
  return llvm::json::Array(Visitor.Found);
}

/// Each kernel the unit registers for a project operator, with its wait.
llvm::json::Array CallInLoopCheck::registeredOperators(ASTContext &Ctx) {
  llvm::json::Array Out;
  for (const OperatorRegistration &R : operatorRegistrations(Ctx)) {
    llvm::json::Object Record{{"operator", R.Operator},
                              {"key", R.Key},
                              {"kernel", linkageName(R.Implementation)},
                              {"internal", !R.Implementation->isExternallyVisible()}};
    if (R.Implementation->getBody() && mayRunOnGpu(R.Key))
      if (std::optional<llvm::json::Object> Wait = waitRecord(R.Implementation, Ctx))
        Record["wait"] = std::move(*Wait);
    Out.push_back(std::move(Record));
  }
  return Out;
}

void CallInLoopCheck::summariseDefinition(const FunctionDecl *Definition, ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation At = SM.getExpansionLoc(Definition->getLocation());
  if (SM.isInSystemHeader(At) || !Definition->getBody())
    return;
  bool Judged = callersCanBeJudged(Definition, SM);
  // Functions other units can call, summarised for their calls in loops: not
  // templates (their instances are in the callers' units), inline or methods,
  // nor a header's (each unit that calls it has its body).
  bool Summarised = SM.isInMainFile(At) && Definition->isExternallyVisible() && !Definition->isInlined() &&
                    !Definition->isTemplated() && !Definition->isMain() && !isa<CXXMethodDecl>(Definition) &&
                    !Definition->getLocation().isMacroID();
  if (!Judged && !Summarised)
    return;
  CharSourceRange Range = SM.getExpansionRange(Definition->getSourceRange());
  // A constructor, or a method LibTorch's templates call on the object
  // (`forward`), runs when the class is constructed.
  const auto *Method = dyn_cast<CXXMethodDecl>(Definition);
  std::optional<std::string> Constructs =
      Method && (isa<CXXConstructorDecl>(Method) || calledByLibTorchTemplates(Method))
          ? constructedClassKey(Method->getParent())
          : std::nullopt;
  llvm::json::Object Define{{"define", linkageName(Definition)},
                            {"internal", !Definition->isExternallyVisible()},
                            {"name", Definition->getQualifiedNameAsString()},
                            {"judged", Judged},
                            {"file", absoluteFileName(SM, Range.getBegin())},
                            {"offset", SM.getFileOffset(SM.getExpansionLoc(Definition->getLocation()))},
                            {"begin", SM.getFileOffset(Range.getBegin())},
                            {"end", SM.getFileOffset(Range.getEnd())}};
  if (Summarised) {
    if (std::optional<llvm::json::Object> Wait = waitRecord(Definition, Ctx))
      Define["wait"] = std::move(*Wait);
    else if (llvm::json::Array Operators = dispatchedOperators(Definition); !Operators.empty())
      Define["operators"] = std::move(Operators); // their kernels' waits are the callers' (issue 42)
  }
  if (Constructs)
    Define["constructs"] = *Constructs;
  // Where what it returns is, for the callers in other units (issue 43).
  if (Definition->isExternallyVisible() && mayHoldTensors(Definition->getReturnType()))
    Define["returns"] = conditionRecord(oracle(Ctx).returnedCpuCondition(Definition));
  Defines.push_back(std::move(Define));
}

void CallInLoopCheck::check(const MatchFinder::MatchResult &Result) {
  ASTContext &Ctx = *Result.Context;
  if (Result.Nodes.getNodeAs<TranslationUnitDecl>("unit")) {
    Unit = &Ctx;
    return;
  }
  if (const auto *Definition = Result.Nodes.getNodeAs<FunctionDecl>("definition")) {
    summariseDefinition(Definition, Ctx);
    return;
  }
  if (const auto *Field = Result.Nodes.getNodeAs<FieldDecl>("field")) {
    if (mayHoldTensors(Field->getType()))
      if (std::optional<std::string> Key = DeviceOracle::projectFieldKey(Field))
        ProjectFields.try_emplace(*Key, Field);
    return;
  }
  if (const auto *Reference = Result.Nodes.getNodeAs<DeclRefExpr>("reference")) {
    // A reference that is not the callee of a call: the function's address is
    // taken (a callback, a registration): it has callers no unit shows.
    const Expr *Outer = Reference;
    DynTypedNodeList Parents = Ctx.getParents(*Outer);
    while (!Parents.empty() && (Parents[0].get<ImplicitCastExpr>() || Parents[0].get<ParenExpr>())) {
      Outer = Parents[0].get<Expr>();
      Parents = Ctx.getParents(*Outer);
    }
    const auto *Call = Parents.empty() ? nullptr : Parents[0].get<CallExpr>();
    if (!Call || Call->getCallee() != Outer)
      recordUse(Reference, Result.Nodes.getNodeAs<FunctionDecl>("referenced"), /*IsCall=*/false, Ctx);
    return;
  }
  const auto *Call = Result.Nodes.getNodeAs<CallExpr>("call");
  const SourceManager &SM = Ctx.getSourceManager();
  if (SM.isInSystemHeader(Call->getBeginLoc()))
    return; // headers' own code
  if (projectSummaries())
    recordUse(Call, Call->getDirectCallee(), /*IsCall=*/true, Ctx);
  if (asSyncCall(Call))
    return; // direct syncs are the catalog checks' findings
  // A project operator called through the dispatcher: its kernel is
  // registered by name, in this unit or another; said for the batch, which
  // joins the call with the kernels' summaries (issue 42).
  if (std::optional<std::string> Operator = dispatchedOperator(Call)) {
    if (projectSummaries() && analysis(Ctx).enclosingLoop(Call))
      emitLoopCallRecord(Call, "operator:" + *Operator, *Operator, Ctx);
    return;
  }
  DeviceOracle &Oracle = oracle(Ctx);
  const FunctionDecl *Callee = Oracle.followableCallee(Call);
  const FunctionDecl *Wrapper = Callee ? nullptr : libraryWrapper(Call, Ctx);
  if (!analysis(Ctx).enclosingLoop(Call))
    return;
  // A compiled library's function the user listed as blocking, called in the loop.
  if (const FunctionDecl *Listed = Call->getDirectCallee();
      !Callee && !Wrapper && isBlockingFunction(Listed)) {
    Finding F;
    F.What = "the call to `" + Listed->getNameAsString() +
             "` makes the host wait for the GPU (listed in the `BlockingFunctions` option)";
    F.Use.Kind = Dependency::True;
    F.Use.Reason = "the library blocks the host until the GPU is done";
    F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Call);
    F.Remedy = "use the library's asynchronous variant or move the call out of the loop";
    report(Call->getBeginLoc(), F);
    return;
  }
  if (!Callee && !Wrapper) {
    // A function of the program defined in another unit: said for the batch,
    // which joins it with that unit's summary (issue 42).
    const FunctionDecl *Elsewhere = Call->getDirectCallee();
    if (projectSummaries() && isProjectFunction(Elsewhere, SM) && !Elsewhere->hasBody() &&
        Elsewhere->isExternallyVisible())
      emitLoopCallRecord(Call, linkageName(Elsewhere), Elsewhere->getNameAsString(), Ctx);
    return;
  }
  if (Callee && !Oracle.pushCallBindings(Call))
    return;
  if (Wrapper)
    Callee = Wrapper;
  std::vector<const FunctionDecl *> Path{Callee};
  std::vector<CalleeSync> Syncs;
  // Waits the same run removes with their own fixes (an unused clip_grad_norm_, an
  // accumulated read) are cited last: citing one would change this finding after
  // `--fix` (one run must reach the fixed point).
  auto FixedElsewhere = [&](const CallExpr *Site) { return analysis(Ctx).isRemovedByItsOwner(Site); };
  findSyncs(
      Callee->getBody(), analysis(Ctx), Oracle, [&](Placement P) { return mayBeOnGpu(P); }, FixedElsewhere,
      [&](const FunctionDecl *FD) { return isBlockingFunction(FD); }, Path, Syncs, /*Limit=*/16,
      /*BarriersOnly=*/Wrapper != nullptr);
  std::optional<ChosenWait> Chosen = chooseWait(Syncs, analysis(Ctx), classifier(Ctx));
  if (!Wrapper)
    Oracle.popCallBindings();
  if (!Chosen) {
    // A function of this unit that waits only through a project operator
    // (`return op.call(x);`): the batch joins the call with its kernel.
    if (!Wrapper && projectSummaries())
      for (const llvm::json::Value &Operator : dispatchedOperators(Callee))
        emitLoopCallRecord(Call, "operator:" + Operator.getAsString().value_or("").str(),
                           Callee->getNameAsString(), Ctx);
    return;
  }
  const CalleeSync *Found = &Chosen->Sync;

  std::string CalleeName = Callee->getNameAsString();
  if (isa<CXXMethodDecl>(Callee) && cast<CXXMethodDecl>(Callee)->getParent()->isLambda())
    CalleeName = "the lambda";
  else
    CalleeName = "`" + CalleeName + "`";
  Finding F;
  F.What = "the call to " + CalleeName + " makes the host wait for the GPU (" +
           waitPhrase(*Found, siteLine(SM, Found->Site->getBeginLoc(), Call->getBeginLoc())) + ")";
  // A value the callee only accumulates or stores may still reach the caller through
  // what the callee returns (a metrics struct): the caller's use of the result decides.
  UseVerdict CallerUse;
  // A returned tensor holds device values the host reads only by another
  // sync (its own finding): it carries no host value back.
  if (Found->What.ReadsValue && !Chosen->Use.Reason.empty() && Chosen->Use.Kind == Dependency::False &&
      !Callee->getReturnType()->isVoidType() && !isTensorType(Callee->getReturnType()))
    CallerUse = classifier(Ctx).classify(Call);
  if (!CallerUse.Reason.empty() && CallerUse.Kind == Dependency::True) {
    F.Use = CallerUse;
    F.Use.Reason = "the callee's result carries the value back: " + CallerUse.Reason;
  } else {
    F.Use = calleeVerdict(*Chosen, SM);
  }
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Call);
  F.Remedy = callRemedy(F.Use.Kind, libraryFunctionOn(Found->Path, SM) != nullptr, Chosen->BarrierWhy);
  // `f(x)` of a lambda is an operator call: point at the callee's name.
  SourceLocation At = isa<CXXOperatorCallExpr>(Call) ? Call->getArg(0)->getBeginLoc()
                                                     : Call->getBeginLoc();
  report(At, F);
  diag(Found->Site->getBeginLoc(), "the host waits here", DiagnosticIDs::Note);
}

void CallInLoopCheck::emitLoopCallRecord(const CallExpr *Call, const std::string &Callee,
                                         const std::string &Name, ASTContext &Ctx) {
  llvm::json::Object Record{
      {"call", Callee}, {"name", Name}, {"loopLine", classifier(Ctx).enclosingLoopLine(Call)}};
  if (!Call->getType()->isVoidType() && !isTensorType(Call->getType())) {
    UseVerdict Caller = classifier(Ctx).classify(Call);
    Record["callerClass"] = dependencyName(Caller.Kind);
    Record["callerReason"] = Caller.Reason;
  }
  emitSummaryRecord(isa<CXXOperatorCallExpr>(Call) ? Call->getArg(0)->getBeginLoc() : Call->getBeginLoc(),
                    std::move(Record));
}

TORCH_SYNC_CHECK_FACTORY(CallInLoopCheck)

} // namespace torch_syncfree
