// torch-sync-deferred-accumulate: `metric += t.item<T>()` inside a loop, with the
// metric read only after the loop, becomes a device accumulator declared before the
// loop, a device-side add in the body and one `item()` after the loop.
#include "CatalogChecks.h"
#include "TensorFacts.h"
#include "TorchApi.h"

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

void DeferredAccumulateCheck::registerMatchers(MatchFinder *Finder) {
  Finder->addMatcher(
      binaryOperator(hasAnyOperatorName("+=", "-="),
                     hasLHS(ignoringParenImpCasts(
                         declRefExpr(to(varDecl(hasLocalStorage(), hasType(qualType(anyOf(isInteger(), realFloatingPointType()))))
                                            .bind("var"))))),
                     hasRHS(anyOf(
                         ignoringParenImpCasts(matchers::tensorMethodCall("item").bind("item")),
                         hasDescendant(matchers::tensorMethodCall("item").bind("item")))),
                     matchers::userCode())
          .bind("accumulate"),
      this);
}

static const Stmt *loopBody(const Stmt *Loop) {
  if (const auto *For = dyn_cast<ForStmt>(Loop))
    return For->getBody();
  if (const auto *While = dyn_cast<WhileStmt>(Loop))
    return While->getBody();
  if (const auto *Do = dyn_cast<DoStmt>(Loop))
    return Do->getBody();
  if (const auto *Range = dyn_cast<CXXForRangeStmt>(Loop))
    return Range->getBody();
  return nullptr;
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

bool DeferredAccumulateCheck::reportsItem(ASTContext &Ctx, const Expr *Item) {
  // The same conditions as the matcher and the first tests of check(), seen from
  // the item call: the summand of a discarded `local += ...` inside a loop, with the
  // local declared before the loop.
  const Stmt *Current = Item;
  while (true) {
    DynTypedNodeList Parents = Ctx.getParents(*Current);
    const auto *Parent = Parents.empty() ? nullptr : Parents[0].get<Expr>();
    if (!Parent)
      return false;
    if (const auto *Accumulate = dyn_cast<BinaryOperator>(Parent);
        Accumulate && (Accumulate->getOpcode() == BO_AddAssign ||
                       Accumulate->getOpcode() == BO_SubAssign)) {
      if (Accumulate->getRHS() != Current)
        return false;
      const auto *Lhs = dyn_cast<DeclRefExpr>(Accumulate->getLHS()->IgnoreParenImpCasts());
      const auto *Var = Lhs ? dyn_cast<VarDecl>(Lhs->getDecl()) : nullptr;
      if (!Var || !Var->hasLocalStorage() ||
          !(Var->getType()->isIntegerType() || Var->getType()->isRealFloatingType()) ||
          !isDiscarded(Ctx, Accumulate))
        return false;
      const Stmt *Loop = enclosingLoop(Ctx, Accumulate);
      return Loop && Ctx.getSourceManager().isBeforeInTranslationUnit(Var->getEndLoc(),
                                                                       Loop->getBeginLoc());
    }
    Current = Parent;
  }
}

void DeferredAccumulateCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Accumulate = Result.Nodes.getNodeAs<BinaryOperator>("accumulate");
  const auto *Var = Result.Nodes.getNodeAs<VarDecl>("var");
  const auto *Item = Result.Nodes.getNodeAs<CXXMemberCallExpr>("item");
  const auto *Object = Result.Nodes.getNodeAs<Expr>("object");
  ASTContext &Ctx = *Result.Context;
  const SourceManager &SM = Ctx.getSourceManager();
  const LangOptions &LO = Ctx.getLangOpts();
  if (!isDiscarded(Ctx, Accumulate))
    return;
  const Stmt *Loop = enclosingLoop(Ctx, Accumulate);
  if (!Loop)
    return;
  Placement Where = oracle(Ctx).tensorPlacement(Object);
  if (!mayBeOnGpu(Where))
    return;
  // The metric lives outside the loop, is touched in the loop only here, and is
  // read after the loop.
  const auto *FD = dyn_cast_or_null<FunctionDecl>(Var->getParentFunctionOrMethod());
  if (!FD || !FD->getBody() || !SM.isBeforeInTranslationUnit(Var->getEndLoc(), Loop->getBeginLoc()))
    return;
  const auto *Lhs = cast<DeclRefExpr>(Accumulate->getLHS()->IgnoreParenImpCasts());
  bool UsedInLoop = false, ReadAfter = false;
  SourceRange LoopRange = Loop->getSourceRange();
  for (const DeclRefExpr *Ref : referencesTo(*FD->getBody(), Var)) {
    if (Ref == Lhs)
      continue;
    SourceLocation Loc = Ref->getBeginLoc();
    if (!SM.isBeforeInTranslationUnit(Loc, LoopRange.getBegin()) &&
        !SM.isBeforeInTranslationUnit(LoopRange.getEnd(), Loc))
      UsedInLoop = true; // read, passed by reference or captured in the loop
    else if (SM.isBeforeInTranslationUnit(LoopRange.getEnd(), Loc))
      ReadAfter = true;
  }
  const auto *Body = dyn_cast_or_null<CompoundStmt>(loopBody(Loop));
  // The item call must be the only host read in the summand: `t.item<T>()`,
  // optionally multiplied or divided by a host value.
  const Expr *Summand = Accumulate->getRHS()->IgnoreParenImpCasts();
  bool SimpleSummand = Summand == Item;
  if (const auto *Product = dyn_cast<BinaryOperator>(Summand))
    SimpleSummand = (Product->getOpcode() == BO_Mul || Product->getOpcode() == BO_Div) &&
                    (Product->getLHS()->IgnoreParenImpCasts() == Item ||
                     (Product->getRHS()->IgnoreParenImpCasts() == Item &&
                      Product->getOpcode() == BO_Mul)) &&
                    isSideEffectFree(Product->getLHS()->IgnoreParenImpCasts() == Item
                                         ? Product->getRHS()
                                         : Product->getLHS());
  bool HasTemplateArg = Item->getDirectCallee()->getTemplateSpecializationArgs() != nullptr;

  Finding F;
  F.What = "`" + Var->getNameAsString() + "` accumulates `item()` every iteration, so every "
           "iteration waits for the GPU";
  F.Use.Kind = Dependency::False;
  F.Use.Reason = "the sum is read only after the loop";
  F.Use.LoopLine = SM.getExpansionLineNumber(Loop->getBeginLoc());
  F.Remedy = "accumulate on the device and read the total once after the loop";
  std::string Refusal;
  if (UsedInLoop)
    Refusal = "`" + Var->getNameAsString() + "` is also used inside the loop";
  else if (!ReadAfter)
    Refusal = "`" + Var->getNameAsString() + "` is not read after the loop";
  else if (hasNonLocalExit(loopBody(Loop)))
    Refusal = "the loop can exit through return, goto or an exception before the read";
  else if (!Body)
    Refusal = "the loop body is not a block";
  // The summand's tensor expression is evaluated once, where it was: any call may stay.
  else if (!SimpleSummand || !HasTemplateArg)
    Refusal = "the summand is not a plain `t.item<T>()` (times a host value)";
  else if (Accumulate->getBeginLoc().isMacroID() || Accumulate->getEndLoc().isMacroID() ||
           Loop->getBeginLoc().isMacroID() || Loop->getEndLoc().isMacroID())
    Refusal = "the accumulation or its loop is spelled in a macro";
  if (!Refusal.empty()) {
    // Without a safe rewrite this is torch-sync-item's finding; say why once here.
    F.Remedy += " (no fix: " + Refusal + ")";
    report(Accumulate->getOperatorLoc(), F);
    return;
  }

  QualType Type = Var->getType().getCanonicalType();
  bool Floating = Type->isFloatingType();
  std::string Dtype = torchNamespacePrefix(Ctx) +
                      (Floating ? (Type->isSpecificBuiltinType(BuiltinType::Float) ? "kFloat" : "kDouble")
                                : "kLong");
  // A name no declaration in the function uses (looked up in the AST, so comments
  // and strings that mention it do not matter).
  std::string Accumulator;
  for (int Attempt = 0; Accumulator.empty(); ++Attempt) {
    std::string Candidate = Var->getNameAsString() + "_on_device" +
                            (Attempt ? std::to_string(Attempt + 1) : "");
    if (match(findAll(namedDecl(hasName(Candidate))), *FD->getBody(), Ctx).empty())
      Accumulator = Candidate;
  }
  std::string ItemType = Var->getType().getUnqualifiedType().getAsString(Ctx.getPrintingPolicy());

  // Indentation of the loop, for the inserted lines.
  unsigned Column = SM.getExpansionColumnNumber(Loop->getBeginLoc());
  std::string Indent(Column > 0 ? Column - 1 : 0, ' ');
  // The summand as a tensor: the item call becomes `t.detach().to(dtype)`. The
  // summand's own text is left alone (edits before it, at the item call's
  // tail and after it), so fixes inside it (a mask-index or scalar-index
  // rewrite of the tensor expression) apply in the same run.
  // The object as written before `.item` (parentheses included).
  const auto *Member = dyn_cast<MemberExpr>(Item->getCallee()->IgnoreParens());
  if (!Member) {
    report(Accumulate->getOperatorLoc(), F);
    return;
  }
  const Expr *Spelled = Member->getBase()->IgnoreImplicit();
  const Expr *Rhs = Accumulate->getRHS();
  SourceLocation ObjectBegin = SM.getSpellingLoc(Spelled->getBeginLoc());
  SourceLocation ObjectEnd = Lexer::getLocForEndOfToken(SM.getSpellingLoc(Spelled->getEndLoc()), 0, SM, LO);
  SourceLocation ItemEnd = Lexer::getLocForEndOfToken(SM.getSpellingLoc(Item->getEndLoc()), 0, SM, LO);
  SourceLocation RhsBegin = SM.getSpellingLoc(Rhs->getBeginLoc());
  SourceLocation RhsEnd = Lexer::getLocForEndOfToken(SM.getSpellingLoc(Rhs->getEndLoc()), 0, SM, LO);
  if (ObjectEnd.isInvalid() || ItemEnd.isInvalid() || RhsEnd.isInvalid() ||
      SM.getFileID(ObjectBegin) != SM.getFileID(RhsBegin) ||
      SM.isBeforeInTranslationUnit(ItemEnd, ObjectEnd) ||
      SM.isBeforeInTranslationUnit(RhsEnd, ItemEnd)) {
    report(Accumulate->getOperatorLoc(), F); // not spelled in one piece: no rewrite
    return;
  }
  bool Wrap = !(isa<DeclRefExpr, CallExpr, ParenExpr, MemberExpr, ArraySubscriptExpr>(Spelled) &&
                !isa<CXXOperatorCallExpr>(Spelled));
  bool ItemEndsSummand = ItemEnd == RhsEnd;
  std::string Op = Accumulate->getOpcode() == BO_AddAssign ? "+=" : "-=";

  SourceLocation LoopBegin = Loop->getBeginLoc();
  SourceLocation LoopEnd = Lexer::getLocForEndOfToken(Loop->getEndLoc(), 0, SM, LO);
  std::vector<ASTEdit> Edits{
      insertBefore(selectPoint(LoopBegin), cat("auto " + Accumulator + " = " + torchNamespacePrefix(Ctx) +
                                               "zeros({}, " + Dtype + ");\n" + Indent)),
      changeTo(charRange(CharSourceRange::getCharRange(Accumulate->getBeginLoc(), RhsBegin)),
               cat(Accumulator + " = " + Accumulator + " + (")),
      changeTo(charRange(CharSourceRange::getCharRange(ObjectEnd, ItemEnd)),
               cat(std::string(Wrap ? ")" : "") + ".detach().to(" + Dtype + ")" +
                   (ItemEndsSummand ? ")" : ""))),
      insertBefore(selectPoint(LoopEnd), cat("\n" + Indent + Var->getNameAsString() + " " + Op + " " +
                                             Accumulator + ".item<" + ItemType + ">();" +
                                             insertedSyncComment("one read after the loop")))};
  if (Wrap)
    Edits.push_back(insertBefore(selectPoint(ObjectBegin), cat("(")));
  if (!ItemEndsSummand)
    Edits.push_back(insertBefore(selectPoint(RhsEnd), cat(")")));
  auto Fixes = fixItsFor(Edits, Result);
  report(Accumulate->getOperatorLoc(), F, Fixes ? *Fixes : std::vector<FixItHint>{});
}

} // namespace torch_syncfree
