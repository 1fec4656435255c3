// The engine's per-TU state (TranslationUnitAnalysis.h): memos, indices and
// the analyses every check of the TU shares.
#include "TranslationUnitAnalysis.h"
#include "DeviceInference.h"
#include "TorchApi.h"
#include "UseClassifier.h"
#include "analysis/ValueFlow.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "llvm/ADT/DenseSet.h"

using namespace clang;

namespace torch_syncfree {
TranslationUnitAnalysis::TranslationUnitAnalysis(ASTContext &Ctx, const SiteClaimants *Claimants,
                                                 Preprocessor *PP)
    : Ctx(Ctx), PP(PP), Claimants(Claimants) {}

std::optional<LibTorchVersion> TranslationUnitAnalysis::headerLibTorchVersion() {
  if (!HeaderVersion)
    HeaderVersion = PP ? libTorchVersionFromMacros(*PP) : std::nullopt;
  return *HeaderVersion;
}
TranslationUnitAnalysis::~TranslationUnitAnalysis() = default;

DeviceOracle &TranslationUnitAnalysis::oracle() {
  if (!Oracle)
    Oracle = std::make_unique<DeviceOracle>(*this);
  return *Oracle;
}

const FunctionValueFlow *TranslationUnitAnalysis::valueFlow(const FunctionDecl *FD) {
  if (!FD)
    return nullptr;
  auto [Slot, Inserted] = ValueFlows.try_emplace(FD);
  if (Inserted)
    Slot->second = FunctionValueFlow::build(FD, Ctx);
  return Slot->second.get();
}

bool TranslationUnitAnalysis::claims(CheckId Id, SyncSiteKind Kind, const Expr *Site) {
  SiteClaimant *Check = Claimants ? Claimants->claimant(Id) : nullptr;
  if (!Check)
    return false; // not enabled
  auto Key = std::make_pair(Site, static_cast<unsigned>(Id));
  if (auto It = Claims.find(Key); It != Claims.end())
    return It->second;
  Claims[Key] = false; // asked again while answering: refused
  bool Claimed = Check->claimsSite(Kind, *this, Site);
  Claims[Key] = Claimed;
  return Claimed;
}

std::optional<CheckId> TranslationUnitAnalysis::ownerOfSite(const Expr *Site) {
  std::optional<SyncSiteKind> Kind = syncSiteKindOf(Site);
  if (!Kind)
    return std::nullopt;
  for (CheckId Id : sitePrecedence(*Kind))
    if (claims(Id, *Kind, Site))
      return Id;
  return std::nullopt;
}

bool TranslationUnitAnalysis::isRemovedByItsOwner(const Expr *Site) {
  std::optional<SyncSiteKind> Kind = syncSiteKindOf(Site);
  if (!Kind || !Claimants)
    return false;
  // Asking a check that cannot remove the site would only find out that it is
  // not removed, and some checks' claims (coalesce's plans) ask the "no gain"
  // rule, which asks this: below the last check that can remove it, stop.
  ArrayRef<CheckId> Precedence = sitePrecedence(*Kind);
  size_t Last = Precedence.size();
  for (size_t I = 0; I < Precedence.size(); ++I)
    if (SiteClaimant *Check = Claimants->claimant(Precedence[I]); Check && Check->removesAnySites())
      Last = I;
  if (Last == Precedence.size())
    return false;
  for (size_t I = 0; I <= Last; ++I)
    if (claims(Precedence[I], *Kind, Site))
      return Claimants->claimant(Precedence[I])->removesSite(*Kind, *this, Site);
  return false;
}

bool TranslationUnitAnalysis::isSiteClaimedAbove(const Expr *Site, CheckId Rank) {
  std::optional<SyncSiteKind> Kind = syncSiteKindOf(Site);
  if (!Kind)
    return false;
  for (CheckId Id : sitePrecedence(*Kind)) {
    if (Id == Rank)
      return false;
    if (claims(Id, *Kind, Site))
      return true;
  }
  return false;
}

const Stmt *TranslationUnitAnalysis::enclosingLoop(const Stmt *S) {
  // Memoised per TU: every site asks, and a walk to the function per site
  // is quadratic on long expressions.
  // `do { ... } while (0)` (a statement macro's body) is not a loop.
  auto IsLoop = [](const Stmt *X) {
    if (const auto *Do = dyn_cast<DoStmt>(X)) {
      const Expr *Cond = Do->getCond()->IgnoreParenImpCasts();
      if (const auto *Int = dyn_cast<IntegerLiteral>(Cond))
        return Int->getValue() != 0;
      if (const auto *Bool = dyn_cast<CXXBoolLiteralExpr>(Cond))
        return Bool->getValue();
      return true;
    }
    return isa<ForStmt, WhileStmt, CXXForRangeStmt>(X);
  };
  if (auto It = LoopMemo.find(S); It != LoopMemo.end())
    return It->second;
  llvm::SmallVector<const Stmt *, 16> Path{S};
  const Stmt *Answer = nullptr;
  DynTypedNode Node = DynTypedNode::create(*S);
  while (true) {
    DynTypedNodeList Parents = Ctx.getParents(Node);
    if (Parents.empty())
      break;
    Node = Parents[0];
    if (Node.get<FunctionDecl>() || Node.get<LambdaExpr>())
      break;
    if (const auto *Ancestor = Node.get<Stmt>()) {
      // A for's init and a range-for's range run once, before the loop: what
      // they hold is in the loops around it, not in this one.
      const Stmt *Child = Path.back();
      const auto *For = dyn_cast<ForStmt>(Ancestor);
      const auto *Range = dyn_cast<CXXForRangeStmt>(Ancestor);
      bool BeforeTheLoop = (For && Child == For->getInit()) ||
                           (Range && (Child == Range->getInit() || Child == Range->getRangeStmt() ||
                                      Child == Range->getBeginStmt() || Child == Range->getEndStmt()));
      if (IsLoop(Ancestor) && !BeforeTheLoop) {
        Answer = Ancestor;
        break;
      }
      if (auto It = LoopMemo.find(Ancestor); It != LoopMemo.end()) {
        Answer = It->second;
        break;
      }
      Path.push_back(Ancestor);
    }
  }
  for (const Stmt *P : Path)
    LoopMemo[P] = Answer;
  return Answer;
}

UseClassifier &TranslationUnitAnalysis::classifier(const ClassifierOptions &Options) {
  std::unique_ptr<UseClassifier> &C = Classifiers[Options.LoggingFunctions];
  if (!C)
    C = std::make_unique<UseClassifier>(*this, Options);
  return *C;
}

/// The instantiation of a function template (or of a member function of a
/// class template) that stands for its pattern: the first one with a body in
/// this TU, or null when the template is never instantiated here.
const FunctionDecl *TranslationUnitAnalysis::representativeOf(const FunctionDecl *Pattern) {
  auto [It, Inserted] = Representatives.try_emplace(Pattern, nullptr);
  if (!Inserted)
    return It->second;
  const FunctionDecl *Found = nullptr;
  if (const FunctionTemplateDecl *Template = Pattern->getDescribedFunctionTemplate()) {
    for (const FunctionDecl *Spec : Template->specializations())
      if (Spec->getTemplateSpecializationKind() != TSK_ExplicitSpecialization &&
          Spec->doesThisDeclarationHaveABody()) {
        Found = Spec;
        break;
      }
  } else if (const auto *Method = dyn_cast<CXXMethodDecl>(Pattern)) {
    if (const ClassTemplateDecl *Class = Method->getParent()->getDescribedClassTemplate())
      for (const ClassTemplateSpecializationDecl *Spec : Class->specializations()) {
        if (Spec->getTemplateSpecializationKind() == TSK_ExplicitSpecialization)
          continue;
        for (const CXXMethodDecl *M : Spec->methods())
          if (M->getTemplateInstantiationPattern() == Pattern && M->doesThisDeclarationHaveABody()) {
            Found = M;
            break;
          }
        if (Found)
          break;
      }
  }
  Representatives[Pattern] = Found;
  return Found;
}

namespace {
/// A function template's definition whose calls may be dependent (a method
/// of a class template, or a function template).
bool isTemplatePattern(const FunctionDecl *FD) {
  if (FD->getDescribedFunctionTemplate())
    return true;
  const auto *Method = dyn_cast<CXXMethodDecl>(FD);
  return Method && Method->getParent()->getDescribedClassTemplate();
}

/// Whether code in D is not analysed. A template is analysed once: in the
/// first instantiation with a body in the TU, where calls on dependent types
/// (`batch.data.to(device)` in a template over the loader type) have become
/// calls the matchers see; a template never instantiated here is analysed in
/// its definition. Other instantiations, and the definition of a template
/// analysed through an instantiation, are skipped.
} // namespace

bool TranslationUnitAnalysis::declIsInInstantiation(const Decl *D) {
  for (const DeclContext *DC = isa<DeclContext>(D) ? cast<DeclContext>(D) : D->getDeclContext(); DC;
       DC = DC->getParent()) {
    if (const auto *FD = dyn_cast<FunctionDecl>(DC)) {
      TemplateSpecializationKind Kind = FD->getTemplateSpecializationKind();
      if (Kind == TSK_ImplicitInstantiation || Kind == TSK_ExplicitInstantiationDeclaration ||
          Kind == TSK_ExplicitInstantiationDefinition) {
        const FunctionDecl *Pattern = FD->getTemplateInstantiationPattern();
        return !Pattern || representativeOf(Pattern) != FD;
      }
      if (Kind != TSK_ExplicitSpecialization && isTemplatePattern(FD))
        return representativeOf(FD) != nullptr;
      continue; // a lambda's call operator, a local class's method: look further out
    }
    if (const auto *RD = dyn_cast<CXXRecordDecl>(DC);
        RD && RD->getTemplateSpecializationKind() != TSK_Undeclared &&
        RD->getTemplateSpecializationKind() != TSK_ExplicitSpecialization)
      return true;
  }
  return false;
}

bool TranslationUnitAnalysis::callersAllVisible(const FunctionDecl *FD) {
  const SourceManager &SM = Ctx.getSourceManager();
  if (!FD || FD->isMain() || isa<CXXMethodDecl>(FD) || !FD->hasBody() ||
      !SM.isInMainFile(SM.getExpansionLoc(FD->getLocation())))
    return false;
  if (!ProgramTU) {
    ProgramTU = false;
    for (const Decl *D : Ctx.getTranslationUnitDecl()->decls())
      if (const auto *Candidate = dyn_cast<FunctionDecl>(D);
          Candidate && Candidate->isMain() && Candidate->hasBody())
        ProgramTU = true;
  }
  return *ProgramTU || !FD->isExternallyVisible();
}

llvm::ArrayRef<const CallExpr *> TranslationUnitAnalysis::callsOf(const FunctionDecl *FD) {
  FD = FD->getCanonicalDecl();
  auto [It, Inserted] = CallsOf.try_emplace(FD);
  if (Inserted) {
    const SourceManager &SM = Ctx.getSourceManager();
    using namespace clang::ast_matchers;
    for (const Decl *D : Ctx.getTranslationUnitDecl()->decls()) {
      if (!SM.isInMainFile(SM.getExpansionLoc(D->getLocation())))
        continue;
      for (const auto &Found : match(
               decl(forEachDescendant(callExpr(callee(functionDecl(equalsNode(FD)))).bind("call"))), *D, Ctx))
        It->second.push_back(Found.getNodeAs<CallExpr>("call"));
    }
  }
  return It->second;
}

llvm::ArrayRef<const DeclRefExpr *> TranslationUnitAnalysis::referencesTo(const Stmt &Root,
                                                                          const ValueDecl *VD) {
  std::unique_ptr<ReferenceIndex> &Index = ReferenceIndices[&Root];
  if (!Index) {
    Index = std::make_unique<ReferenceIndex>();
    llvm::SmallVector<const Stmt *, 64> Stack{&Root};
    while (!Stack.empty()) { // pre-order, children left to right
      const Stmt *S = Stack.pop_back_val();
      if (!S)
        continue;
      if (const auto *Ref = dyn_cast<DeclRefExpr>(S))
        if (isa<VarDecl, BindingDecl>(Ref->getDecl()))
          (*Index)[cast<ValueDecl>(Ref->getDecl()->getCanonicalDecl())].push_back(Ref);
      llvm::SmallVector<const Stmt *, 8> Children(S->child_begin(), S->child_end());
      Stack.append(Children.rbegin(), Children.rend());
    }
  }
  auto It = Index->find(cast<ValueDecl>(VD->getCanonicalDecl()));
  if (It == Index->end())
    return {};
  return It->second;
}

const std::vector<TranslationUnitAnalysis::CallSite> &
TranslationUnitAnalysis::callSitesOfBody(const Stmt &Body) {
  auto [It, Inserted] = CallSites.try_emplace(&Body);
  if (!Inserted)
    return It->second;
  std::vector<CallSite> Sites;
  const SourceManager &SM = Ctx.getSourceManager();
  // Pre-order, children left to right; the depth of lambdas open on the path.
  llvm::SmallVector<std::pair<const Stmt *, unsigned>, 64> Stack{{&Body, 0}};
  while (!Stack.empty()) {
    auto [S, Lambdas] = Stack.pop_back_val();
    if (!S)
      continue;
    if (const auto *Call = dyn_cast<CallExpr>(S)) {
      // The tool's own reads are never reported again.
      bool Inserted = isOnInsertedSyncLine(Call->getExprLoc(), SM) || isMarkedInsertedSync(Call, Ctx);
      Sites.push_back({Call, Inserted ? std::nullopt : asSyncCall(Call), Lambdas > 0, Inserted});
    }
    unsigned Inner = Lambdas + isa<LambdaExpr>(S);
    llvm::SmallVector<const Stmt *, 8> Children(S->child_begin(), S->child_end());
    for (const Stmt *Child : llvm::reverse(Children))
      Stack.push_back({Child, Inner});
  }
  return It->second = std::move(Sites);
}

std::vector<TranslationUnitAnalysis::CallSite> TranslationUnitAnalysis::callSitesUnder(const Stmt &Root) {
  const FunctionDecl *Outermost = outermostFunction(Ctx, &Root);
  const Stmt *Body = Outermost && Outermost->getBody() ? Outermost->getBody() : &Root;
  const std::vector<CallSite> &All = callSitesOfBody(*Body);
  if (Body == &Root)
    return All;
  // The calls of the body under Root: a cheap test on the expansion range
  // first, then the parent chain (which also says whether a lambda is between).
  const SourceManager &SM = Ctx.getSourceManager();
  CharSourceRange Range = SM.getExpansionRange(Root.getSourceRange());
  std::vector<CallSite> Under;
  for (const CallSite &Site : All) {
    SourceLocation At = SM.getExpansionLoc(Site.Call->getBeginLoc());
    if (SM.isBeforeInTranslationUnit(At, Range.getBegin()) ||
        SM.isBeforeInTranslationUnit(Range.getEnd(), At))
      continue;
    bool InLambda = false;
    for (DynTypedNode Node = DynTypedNode::create(*Site.Call);;) {
      const Stmt *S = Node.get<Stmt>();
      if (S == &Root) {
        Under.push_back({Site.Call, Site.Sync, InLambda, Site.Inserted});
        break;
      }
      if (S == Body)
        break;
      InLambda |= isa_and_nonnull<LambdaExpr>(S);
      DynTypedNodeList Parents = Ctx.getParents(Node);
      if (Parents.empty())
        break;
      Node = Parents[0];
    }
  }
  return Under;
}

std::optional<llvm::ArrayRef<const MemberExpr *>>
TranslationUnitAnalysis::memberReferencesTo(const FieldDecl *Field) {
  if (!Members) {
    Members = std::make_unique<MemberIndex>();
    const SourceManager &SM = Ctx.getSourceManager();
    using namespace clang::ast_matchers;
    for (const Decl *D : Ctx.getTranslationUnitDecl()->decls()) {
      if (!SM.isInMainFile(SM.getExpansionLoc(D->getLocation())))
        continue;
      for (const auto &Found : match(decl(forEachDescendant(memberExpr().bind("use"))), *D, Ctx)) {
        const auto *Use = Found.getNodeAs<MemberExpr>("use");
        if (const auto *Member = dyn_cast<FieldDecl>(Use->getMemberDecl()))
          Members->Uses[Member->getCanonicalDecl()].push_back(Use);
      }
      for (const auto &Found :
           match(decl(forEachDescendant(cxxDependentScopeMemberExpr().bind("use"))), *D, Ctx))
        if (const IdentifierInfo *Name =
                Found.getNodeAs<CXXDependentScopeMemberExpr>("use")->getMember().getAsIdentifierInfo())
          Members->DependentNames.insert(Name);
    }
  }
  if (Members->DependentNames.contains(Field->getIdentifier()))
    return std::nullopt;
  auto It = Members->Uses.find(Field->getCanonicalDecl());
  if (It == Members->Uses.end())
    return llvm::ArrayRef<const MemberExpr *>();
  return llvm::ArrayRef<const MemberExpr *>(It->second);
}

bool TranslationUnitAnalysis::isUnreachableInBlock(const CompoundStmt *Block, const Stmt *Child) {
  auto [It, Inserted] = DeadRanges.try_emplace(Block);
  if (Inserted) {
    // One pass per block: the unreachable statements are those after the
    // first jump and before the next label (computed once: a block of N
    // statements asked N times stays linear).
    It->second = {};
    bool AfterJump = false;
    for (const Stmt *Statement : Block->body()) {
      if (isa<LabelStmt, SwitchCase>(Statement))
        AfterJump = false;
      if (AfterJump)
        It->second.insert(Statement);
      const Stmt *Plain = Statement;
      if (const auto *Cleanups = dyn_cast<ExprWithCleanups>(Plain))
        Plain = Cleanups->getSubExpr();
      if (isa<ReturnStmt, BreakStmt, ContinueStmt, GotoStmt, CXXThrowExpr>(Plain))
        AfterJump = true;
    }
  }
  return It->second.contains(Child);
}

bool TranslationUnitAnalysis::isOutsideAnalysedCode(const Stmt *S) {
  // Walk up to a statement already answered or to the first declaration,
  // then answer for every statement on the way. Other nodes between (member
  // initialisers, type locations) are walked through without memoising.
  llvm::SmallVector<const Stmt *, 16> Path;
  bool Answer = false;
  DynTypedNode Current = DynTypedNode::create(*S);
  for (unsigned Steps = 0; Steps < 100000; ++Steps) {
    if (const auto *CurrentStmt = Current.get<Stmt>()) {
      auto It = OutsideAnalysedCode.find(CurrentStmt);
      if (It != OutsideAnalysedCode.end()) {
        Answer = It->second;
        break;
      }
      Path.push_back(CurrentStmt);
    } else if (const auto *D = Current.get<Decl>()) {
      Answer = declIsInInstantiation(D);
      break;
    }
    auto Parents = Ctx.getParents(Current);
    if (Parents.empty())
      break;
    // A statement after a `throw` (or return, break, continue, goto) in the
    // same block, with no label between, never runs: not analysed.
    if (const auto *Block = Parents[0].get<CompoundStmt>();
        Block && Current.get<Stmt>() && isUnreachableInBlock(Block, Current.get<Stmt>())) {
      Answer = true;
      break;
    }
    // A branch that never runs: `if constexpr (false)`, `if (kDebug)` with a
    // constant false flag, or the `else` of a constant true condition. Its code is
    // dead: not analysed.
    if (const auto *If = Parents[0].get<IfStmt>();
        If && Current.get<Stmt>() &&
        (Current.get<Stmt>() == If->getThen() || Current.get<Stmt>() == If->getElse())) {
      bool Value = false;
      const Expr *Cond = If->getCond();
      if (Cond && !If->getConditionVariable() && !Cond->isValueDependent() &&
          Cond->EvaluateAsBooleanCondition(Value, Ctx) &&
          (Current.get<Stmt>() == If->getThen() ? !Value : Value)) {
        Answer = true;
        break;
      }
    }
    // The right operand of `false && x` / `true || x` (`if (kDebug && check(t))`).
    if (const auto *Logical = Parents[0].get<BinaryOperator>();
        Logical && Logical->isLogicalOp() && Current.get<Stmt>() == Logical->getRHS()) {
      bool Value = false;
      const Expr *LHS = Logical->getLHS();
      if (!LHS->isValueDependent() && LHS->EvaluateAsBooleanCondition(Value, Ctx) &&
          Value == (Logical->getOpcode() == BO_LOr)) {
        Answer = true;
        break;
      }
    }
    Current = Parents[0];
  }
  for (const Stmt *P : Path)
    OutsideAnalysedCode[P] = Answer;
  return Answer;
}

} // namespace torch_syncfree
