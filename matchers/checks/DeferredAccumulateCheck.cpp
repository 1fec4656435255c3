// torch-sync-deferred-accumulate: `metric += t.item<T>()` inside a loop, with the
// metric read only after the loop, becomes a device accumulator declared before the
// loop, a device-side add in the body and one `item()` after the loop.
#include "ApiFacts.h"
#include "CatalogChecks.h"
#include "TensorFacts.h"
#include "TorchApi.h"
#include "fixes/ClipGradNorm.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Lex/Lexer.h"
#include "clang/Tooling/Transformer/RangeSelector.h"
#include "clang/Tooling/Transformer/Stencil.h"

using namespace clang;
using namespace clang::ast_matchers;
using namespace clang::transformer;

namespace torch_syncfree {

/// `metric += <summand with an item() read or a clip_grad_norm_ call>` on a
/// local host number: the check's sites, and what its claims match from the read.
static auto accumulateMatcher(AnalysisHub *Hub) {
  return binaryOperator(
             hasAnyOperatorName("+=", "-="),
             hasLHS(ignoringParenImpCasts(declRefExpr(
                 to(varDecl(hasLocalStorage(), hasType(qualType(anyOf(isInteger(), realFloatingPointType()))))
                        .bind("var"))))),
             hasRHS(anyOf(ignoringParenImpCasts(matchers::tensorMethodCall(Hub, "item").bind("item")),
                          ignoringParenImpCasts(
                              callExpr(callee(functionDecl(hasName("clip_grad_norm_")))).bind("clip")),
                          hasDescendant(matchers::tensorMethodCall(Hub, "item").bind("item")))),
             matchers::userCode(Hub))
      .bind("accumulate");
}

void DeferredAccumulateCheck::registerMatchers(MatchFinder *Finder) {
  Finder->addMatcher(accumulateMatcher(hub()), this);
}

const Expr *DeferredAccumulateCheck::reportedRead(const BoundNodes &Nodes, TranslationUnitAnalysis &TU) {
  const auto *Accumulate = Nodes.getNodeAs<BinaryOperator>("accumulate");
  const auto *Var = Nodes.getNodeAs<VarDecl>("var");
  const auto *Item = Nodes.getNodeAs<CXXMemberCallExpr>("item");
  const auto *Clip = Nodes.getNodeAs<CallExpr>("clip");
  if (!Accumulate || !Var || (!Item && !Clip))
    return nullptr;
  if (Clip && (!isInTorchNamespace(Clip->getDirectCallee()) || Clip->getNumArgs() < 2))
    return nullptr;
  ASTContext &Ctx = TU.context();
  const Stmt *Loop = TU.enclosingLoop(Accumulate);
  if (!isDiscarded(Ctx, Accumulate) || !Loop)
    return nullptr;
  // Parameters come from a module: their device is not known here.
  Placement Where = Clip ? Placement::Unknown : TU.oracle().tensorPlacement(Nodes.getNodeAs<Expr>("object"));
  if (!mayBeOnGpu(Where))
    return nullptr;
  // The metric lives outside the loop.
  const auto *FD = dyn_cast_or_null<FunctionDecl>(Var->getParentFunctionOrMethod());
  if (!FD || !FD->getBody() ||
      !Ctx.getSourceManager().isBeforeInTranslationUnit(Var->getEndLoc(), Loop->getBeginLoc()))
    return nullptr;
  return Clip ? static_cast<const Expr *>(Clip) : Item;
}

std::optional<BoundNodes> DeferredAccumulateCheck::matchOfRead(TranslationUnitAnalysis &TU,
                                                               const Expr *Site) {
  // The accumulation whose summand holds the read: the first `+=` or `-=` up
  // the read's expression, matched as registerMatchers matches it.
  ASTContext &Ctx = TU.context();
  const Expr *Accumulate = nullptr;
  for (const Expr *E = parentExpr(Ctx, Site); E && !Accumulate; E = parentExpr(Ctx, E))
    if (const auto *Op = dyn_cast<BinaryOperator>(E);
        Op && (Op->getOpcode() == BO_AddAssign || Op->getOpcode() == BO_SubAssign))
      Accumulate = Op;
  if (!Accumulate)
    return std::nullopt;
  for (const BoundNodes &Nodes : match(accumulateMatcher(hub()), *Accumulate, Ctx))
    if (reportedRead(Nodes, TU) == Site)
      return Nodes;
  return std::nullopt;
}

bool DeferredAccumulateCheck::claimsSite(SyncSiteKind, TranslationUnitAnalysis &TU, const Expr *Site) {
  return matchOfRead(TU, Site).has_value();
}

bool DeferredAccumulateCheck::removesSite(SyncSiteKind, TranslationUnitAnalysis &TU, const Expr *Site) {
  if (!fixesEnabled())
    return false;
  std::optional<BoundNodes> Nodes = matchOfRead(TU, Site);
  return Nodes && examine(*Nodes, TU.context()).Refusal.empty();
}

/// `t.sum()` of an integer or bool tensor, `count_nonzero()`, `argmax()`/`argmin()`:
/// LibTorch returns int64 for these, so an integer metric adds them without a cast.
static bool isInt64Reduction(TranslationUnitAnalysis &TU, const Expr *E) {
  const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(ignoreWrappers(E));
  if (!MC || !isTensorType(MC->getType()) || explicitArgCount(MC) != 0)
    return false;
  StringRef Name = calleeName(MC);
  if (Name == "count_nonzero" || Name == "argmax" || Name == "argmin")
    return true;
  ElementKind Kind = elementKind(TU, MC->getImplicitObjectArgument());
  return Name == "sum" && (Kind == ElementKind::Integer || Kind == ElementKind::Bool);
}

/// Whether \p Loop makes work run on another CUDA stream: a stream guard
/// declared in it or a call that sets the current stream (ApiFacts: SwitchesStream).
static bool switchesStreams(ASTContext &Ctx, const Stmt *Loop) {
  llvm::ArrayRef<StringRef> Names = qualifiedNamesWithTrait(SwitchesStream);
  std::vector<StringRef> Spellings(Names.begin(), Names.end());
  auto Switch = stmt(anyOf(declStmt(has(varDecl(hasType(hasUnqualifiedDesugaredType(
                               recordType(hasDeclaration(cxxRecordDecl(hasAnyName(Spellings))))))))),
                           callExpr(callee(functionDecl(hasAnyName(Spellings))))));
  return !match(findAll(Switch), *Loop, Ctx).empty();
}

/// Paths that leave the loop without passing the statement right after it.
static bool hasNonLocalExit(const Stmt *S) {
  if (!S)
    return false;
  if (isa<ReturnStmt, GotoStmt, CXXThrowExpr, CoreturnStmt>(S))
    return true;
  if (isa<LambdaExpr>(S))
    return false;
  for (const Stmt *Child : S->children())
    if (hasNonLocalExit(Child))
      return true;
  return false;
}

DeferredAccumulateCheck::Accumulation DeferredAccumulateCheck::examine(const BoundNodes &Nodes,
                                                                       ASTContext &Ctx) {
  Accumulation A;
  const auto *Accumulate = Nodes.getNodeAs<BinaryOperator>("accumulate");
  const auto *Var = Nodes.getNodeAs<VarDecl>("var");
  const auto *Item = Nodes.getNodeAs<CXXMemberCallExpr>("item");
  const auto *Clip = Nodes.getNodeAs<CallExpr>("clip");
  const SourceManager &SM = Ctx.getSourceManager();
  const Expr *HostRead = reportedRead(Nodes, analysis(Ctx));
  if (!HostRead)
    return A;
  A.HostRead = HostRead;
  A.Loop = analysis(Ctx).enclosingLoop(Accumulate);
  // The metric is touched in the loop only here, and is read after the loop.
  A.FD = cast<FunctionDecl>(Var->getParentFunctionOrMethod());
  A.Lhs = cast<DeclRefExpr>(Accumulate->getLHS()->IgnoreParenImpCasts());
  bool UsedInLoop = false, ReadAfter = false;
  // Reads of the running value at a log interval inside the loop (`if (step %
  // N == 0) print(correct / seen)`): they become the host value plus one read
  // of the device sum, once per interval.
  SourceRange LoopRange = A.Loop->getSourceRange();
  for (const DeclRefExpr *Ref : analysis(Ctx).referencesTo(*A.FD->getBody(), Var)) {
    if (Ref == A.Lhs)
      continue;
    SourceLocation Loc = Ref->getBeginLoc();
    if (!SM.isBeforeInTranslationUnit(Loc, LoopRange.getBegin()) &&
        !SM.isBeforeInTranslationUnit(LoopRange.getEnd(), Loc)) {
      DynTypedNodeList Parents = Ctx.getParents(*Ref);
      const auto *Read = Parents.empty() ? nullptr : Parents[0].get<ImplicitCastExpr>();
      if (Read && Read->getCastKind() == CK_LValueToRValue && !Ref->refersToEnclosingVariableOrCapture() &&
          !Loc.isMacroID() && analysis(Ctx).enclosingLoop(Ref) == A.Loop &&
          logIntervalAround(Ctx, Ref, A.Loop))
        A.IntervalReads.push_back(Ref);
      else
        UsedInLoop = true; // read every iteration, passed by reference or captured in the loop
    } else if (SM.isBeforeInTranslationUnit(LoopRange.getEnd(), Loc)) {
      ReadAfter = true;
    }
  }
  A.Body = dyn_cast_or_null<CompoundStmt>(loopBody(A.Loop));
  // The item call must be the only host read in the summand: `t.item<T>()`,
  // optionally multiplied or divided by a host value.
  const Expr *Summand = Accumulate->getRHS()->IgnoreParenImpCasts();
  bool SimpleSummand = Summand == HostRead;
  // The host factor of an item summand (`* n`, `n *`, `/ n`), spelled as written.
  if (const auto *Product = dyn_cast<BinaryOperator>(Summand);
      Product && Item && (Product->getOpcode() == BO_Mul || Product->getOpcode() == BO_Div)) {
    A.Divides = Product->getOpcode() == BO_Div;
    if (Product->getLHS()->IgnoreParenImpCasts() == Item)
      A.Factor = Product->getRHS();
    else if (Product->getRHS()->IgnoreParenImpCasts() == Item && !A.Divides)
      A.Factor = Product->getLHS();
    SimpleSummand = A.Factor && isSideEffectFree(A.Factor);
  }
  A.Type = Var->getType().getCanonicalType();
  A.Floating = A.Type->isFloatingType();
  bool HasTemplateArg = Clip || Item->getDirectCallee()->getTemplateSpecializationArgs() != nullptr;
  A.Clipping = Clip ? deviceClipGradNorm(Ctx, Clip, FusedNorm) : std::nullopt;

  if (UsedInLoop)
    A.Refusal = "`" + Var->getNameAsString() + "` is also used inside the loop";
  else if (!ReadAfter)
    A.Refusal = "`" + Var->getNameAsString() + "` is not read after the loop";
  else if (hasNonLocalExit(loopBody(A.Loop)))
    A.Refusal = "the loop can exit through return, goto or an exception before the read";
  else if (!A.Body)
    A.Refusal = "the loop body is not a block";
  // The accumulator is declared before the loop and read after it: both need
  // the loop to be a statement of a block (not the body of a braceless `if`).
  else if (DynTypedNodeList LoopParents = Ctx.getParents(*A.Loop);
           LoopParents.empty() || !LoopParents[0].get<CompoundStmt>())
    A.Refusal = "the loop is not a statement of a block";
  // The summand's tensor expression is evaluated once, where it was: any call may stay.
  else if (!SimpleSummand || !HasTemplateArg)
    A.Refusal = Clip ? "the summand is not the `clip_grad_norm_` call alone"
                     : "the summand is not a plain `t.item<T>()` (times a host value)";
  else if (Clip && !A.Clipping)
    A.Refusal = "`clip_grad_norm_` with a norm type other than 2 or a finiteness check";
  else if (Accumulate->getBeginLoc().isMacroID() || Accumulate->getEndLoc().isMacroID() ||
           A.Loop->getBeginLoc().isMacroID() || A.Loop->getEndLoc().isMacroID())
    A.Refusal = "the accumulation or its loop is spelled in a macro";
  // Found by the blind programs of issue 43 (a video pipeline on two streams):
  // the host's wait in item() ordered the streams; a device sum added from
  // alternating streams is a race.
  else if (switchesStreams(Ctx, A.Loop))
    A.Refusal = "the loop switches CUDA streams, and a sum on the device would be added from several "
                "streams without ordering";
  // Host integer division and a floating factor truncate in ways an integer
  // tensor's add_ cannot reproduce.
  else if (A.Factor && !A.Floating &&
           (A.Divides || A.Factor->IgnoreParenImpCasts()->getType()->isFloatingType()))
    A.Refusal = "an integer metric with a floating factor or a division";
  return A;
}

void DeferredAccumulateCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Accumulate = Result.Nodes.getNodeAs<BinaryOperator>("accumulate");
  const auto *Var = Result.Nodes.getNodeAs<VarDecl>("var");
  const auto *Item = Result.Nodes.getNodeAs<CXXMemberCallExpr>("item");
  const auto *Object = Result.Nodes.getNodeAs<Expr>("object");
  // `norm_sum += clip_grad_norm_(...)`: the host read is the call's own; the
  // rewrite composes torch-sync-grad-norm's device clipping with a device sum.
  const auto *Clip = Result.Nodes.getNodeAs<CallExpr>("clip");
  ASTContext &Ctx = *Result.Context;
  const SourceManager &SM = Ctx.getSourceManager();
  const LangOptions &LO = Ctx.getLangOpts();
  Accumulation A = examine(Result.Nodes, Ctx);
  const Expr *HostRead = A.HostRead;
  if (!HostRead || !ownsSite(Ctx, HostRead))
    return;
  const Stmt *Loop = A.Loop;
  const FunctionDecl *FD = A.FD;
  // Reported at the sync call, as every other check reports (NOLINT, baselines
  // and SARIF fingerprints point at the same token whichever check reports it).
  SourceLocation SyncLoc = Clip ? Clip->getBeginLoc() : Item->getExprLoc();
  Finding F;
  // clip_grad_norm_'s parameters come from a module: no subject.
  if (Item && Object && oracle(Ctx).tensorPlacement(Object) == Placement::Unknown)
    F.Subject = Object;
  F.What = "`" + Var->getNameAsString() + "` accumulates " +
           (Clip ? "the host norm `clip_grad_norm_` returns" : "`item()`") +
           " every iteration, so every iteration waits for the GPU";
  F.Use.Kind = Dependency::False;
  F.Use.Reason = "the sum is read only after the loop";
  F.Use.LoopLine = SM.getExpansionLineNumber(Loop->getBeginLoc());
  F.Remedy = "accumulate on the device and read the total once after the loop";
  std::string Refusal = A.Refusal;
  if (Refusal.empty())
    Refusal = noGainReason(Ctx, {Accumulate});
  if (!Refusal.empty()) {
    // Without a safe rewrite this is torch-sync-item's finding; say why once here.
    F.Remedy += " (no fix: " + Refusal + ")";
    report(SyncLoc, F);
    return;
  }

  std::string Torch = torchNamespacePrefix(Ctx);
  std::string Dtype =
      Torch +
      (A.Floating ? (A.Type->isSpecificBuiltinType(BuiltinType::Float) ? "kFloat" : "kDouble") : "kLong");
  // Names no declaration in the function uses (looked up in the AST, so comments
  // and strings that mention them do not matter) and no other fix of this run
  // declares there (two loops summing the same metric: total_on_device, total_on_device2).
  auto freshName = [&](const std::string &Base) {
    for (int Attempt = 0;; ++Attempt) {
      std::string Candidate = Base + (Attempt ? std::to_string(Attempt + 1) : "");
      if (match(findAll(namedDecl(hasName(Candidate))), *FD->getBody(), Ctx).empty() &&
          analysis(Ctx).claimName(FD, Candidate))
        return Candidate;
    }
  };
  std::string Accumulator = freshName(Var->getNameAsString() + "_on_device");
  std::string Step = freshName(Var->getNameAsString() + "_step");
  // The read after the loop names the device sum's own C++ type: LibTorch
  // defines `item<T>()` only for its scalar types, so `item<size_t>()` (or
  // `item<long double>()`) compiles and fails to link; the `+=` converts.
  std::string ItemType =
      A.Floating ? (A.Type->isSpecificBuiltinType(BuiltinType::Float) ? "float" : "double") : "int64_t";

  // Indentation of the loop and of the accumulation, for the inserted lines.
  auto indentOf = [&](SourceLocation Loc) {
    unsigned Column = SM.getExpansionColumnNumber(Loc);
    return std::string(Column > 0 ? Column - 1 : 0, ' ');
  };
  std::string Indent = indentOf(Loop->getBeginLoc());
  std::string StmtIndent = indentOf(Accumulate->getBeginLoc());
  std::string Inner = StmtIndent + "  ";
  // The summand's tensor expression stays where it is, evaluated once: the
  // accumulation becomes a block that names it (`auto step = X.detach();`) and
  // adds it in place. Only the text around X is edited (before it, the `.item<T>()`
  // tail, after it), so fixes inside X (a mask-index or scalar-index rewrite)
  // apply in the same run.
  // For a clip_grad_norm_ summand, "the object" is the call: it is replaced whole.
  const auto *Member = Item ? dyn_cast<MemberExpr>(Item->getCallee()->IgnoreParens()) : nullptr;
  if (!Member && !Clip) {
    report(SyncLoc, F);
    return;
  }
  const Expr *Spelled = Clip ? Clip : Member->getBase()->IgnoreImplicit();
  SourceLocation ObjectBegin = SM.getSpellingLoc(Spelled->getBeginLoc());
  SourceLocation ObjectEnd = Lexer::getLocForEndOfToken(SM.getSpellingLoc(Spelled->getEndLoc()), 0, SM, LO);
  SourceLocation ItemEnd = Lexer::getLocForEndOfToken(SM.getSpellingLoc(HostRead->getEndLoc()), 0, SM, LO);
  // The accumulation must be a statement of its own: the block replaces it up to its `;`.
  SourceLocation StatementEnd =
      Lexer::findLocationAfterToken(Accumulate->getEndLoc(), tok::semi, SM, LO, false);
  DynTypedNode Parent = ancestorSkipping<ExprWithCleanups>(Ctx, Accumulate); // the summand's temporaries
  bool OwnStatement = Parent.get<Stmt>() && !Parent.get<Expr>() && !Parent.get<ForStmt>();
  if (ObjectEnd.isInvalid() || ItemEnd.isInvalid() || StatementEnd.isInvalid() || !OwnStatement ||
      SM.getFileID(ObjectBegin) != SM.getFileID(StatementEnd) ||
      SM.isBeforeInTranslationUnit(ItemEnd, ObjectEnd) ||
      SM.isBeforeInTranslationUnit(StatementEnd, ItemEnd)) {
    report(SyncLoc, F); // not spelled in one piece: no rewrite
    return;
  }
  // Host work per step counts on short steps: integer and bool tensors never require
  // grad (no detach), and the sum of one is already int64 (no conversion).
  ElementKind Kind = Clip ? ElementKind::Floating : elementKind(analysis(Ctx), Object);
  bool NeedsDetach = Clip == nullptr && Kind != ElementKind::Integer && Kind != ElementKind::Bool;
  bool KnownInt64 = !Clip && isInt64Reduction(analysis(Ctx), Object);
  bool Wrap = NeedsDetach && !(isa<DeclRefExpr, CallExpr, ParenExpr, MemberExpr, ArraySubscriptExpr>(Spelled) &&
                               !isa<CXXOperatorCallExpr>(Spelled));
  std::string Op = Accumulate->getOpcode() == BO_AddAssign ? "+=" : "-=";

  // The factor as a LibTorch Scalar: int, long, float and double convert as they
  // are; other arithmetic types (size_t, long double) would be ambiguous, so cast.
  std::string Scale;
  if (A.Factor) {
    std::string Text =
        Lexer::getSourceText(CharSourceRange::getTokenRange(A.Factor->getSourceRange()), SM, LO).str();
    QualType FactorType = A.Factor->IgnoreParenImpCasts()->getType().getCanonicalType().getUnqualifiedType();
    bool Plain = FactorType->isSpecificBuiltinType(BuiltinType::Int) ||
                 FactorType->isSpecificBuiltinType(BuiltinType::Long) ||
                 FactorType->isSpecificBuiltinType(BuiltinType::Double) ||
                 FactorType->isSpecificBuiltinType(BuiltinType::Float);
    Scale = Plain ? Text
                  : "static_cast<" + std::string(FactorType->isFloatingType() ? "double" : "int64_t") + ">(" +
                        Text + ")";
    if (Text.empty()) {
      report(SyncLoc, F);
      return;
    }
  }
  // Every step after the first: one in-place add (dtype promotion by add_, the
  // factor as its alpha), no allocation. Integer metrics convert the step to kLong
  // (free when it is already kLong), so counts stay exact. The first step creates
  // the accumulator on the summand's device from a copy of the step.
  std::string Converted = A.Floating || KnownInt64 ? Step : Step + ".to(" + Dtype + ")";
  std::string AddStep = A.Divides ? Accumulator + ".add_(" + Step + ".to(" + Dtype + ") / " + Scale + ")"
                                  : Accumulator + ".add_(" + Converted + (A.Factor ? ", " + Scale : "") + ")";
  std::string FirstStep = A.Factor ? Step + ".to(" + Dtype + ")" + (A.Divides ? " / " : " * ") + Scale
                                   : Step + ".to(" + Dtype + ", /*non_blocking=*/false, /*copy=*/true)";
  SourceLocation LoopBegin = Loop->getBeginLoc();
  SourceLocation LoopEnd = Lexer::getLocForEndOfToken(Loop->getEndLoc(), 0, SM, LO);
  std::vector<ASTEdit> Edits{
      insertBefore(selectPoint(LoopBegin), cat(Torch + "Tensor " + Accumulator + "; // " +
                                               Var->getNameAsString() + ", summed on the device\n" + Indent)),
      changeTo(charRange(CharSourceRange::getCharRange(Accumulate->getBeginLoc(), ObjectBegin)),
               cat("{\n" + Inner + "auto " + Step + " = " + (Wrap ? "(" : ""))),
      Clip ? changeTo(charRange(CharSourceRange::getCharRange(ObjectBegin, ObjectEnd)),
                      cat(A.Clipping.value_or(std::string())))
           : changeTo(charRange(CharSourceRange::getCharRange(ObjectEnd, ItemEnd)),
                      cat(std::string(Wrap ? ")" : "") + (NeedsDetach ? ".detach()" : ""))),
      changeTo(charRange(CharSourceRange::getCharRange(ItemEnd, StatementEnd)),
               cat(";\n" + Inner + "if (" + Accumulator + ".defined())\n" + Inner + "  " + AddStep + ";\n" +
                   Inner + "else\n" + Inner + "  " + Accumulator + " = " + FirstStep + ";\n" + StmtIndent +
                   "}")),
      insertBefore(selectPoint(LoopEnd),
                   cat("\n" + Indent + "if (" + Accumulator + ".defined())\n" + Indent + "  " +
                       Var->getNameAsString() + " " + Op + " " + Accumulator + ".item<" + ItemType + ">();" +
                       insertedSyncComment("one read after the loop")))};
  for (const DeclRefExpr *Read : A.IntervalReads)
    Edits.push_back(changeTo(selectTokens(Read),
                             cat("(" + Accumulator + ".defined() ? " + Var->getNameAsString() + " " + Op.substr(0, 1) +
                                 " " + Accumulator + ".item<" + ItemType + ">()" +
                                 insertedSyncMarker("the running value, read at the log interval") + " : " +
                                 Var->getNameAsString() + ")")));
  auto Fixes = fixItsFor(Edits, Result);
  // The clipping helper last: claimed only once the rest of the fix applies.
  if (Fixes && Clip) {
    if (addClipGradNormHelper(analysis(Ctx), Clip, FusedNorm, HelperInEveryFix, Edits))
      Fixes = fixItsFor(Edits, Result);
    else
      Fixes = std::nullopt;
  }
  report(SyncLoc, F, Fixes ? *Fixes : std::vector<FixItHint>{});
}

TORCH_SYNC_CHECK_FACTORY(DeferredAccumulateCheck)

} // namespace torch_syncfree
