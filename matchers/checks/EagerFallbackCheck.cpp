// torch-sync-eager-fallback: `opt.value_or(t.max().item<int64_t>())` evaluates
// its argument, and so waits for the GPU, even when the optional holds a value.
// `opt.has_value() ? *opt : t.max().item<int64_t>()` waits only when it is empty
// (issue 41: a restructuring maintainers make by hand).
#include "SyncCalls.h"
#include "SyncCheck.h"
#include "TensorFacts.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/Lex/Lexer.h"
#include "clang/Tooling/Transformer/RangeSelector.h"
#include "clang/Tooling/Transformer/Stencil.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

class EagerFallbackCheck : public SyncCheck {
public:
  using SyncCheck::SyncCheck;
  void registerMatchers(MatchFinder *Finder) override;
  void check(const MatchFinder::MatchResult &Result) override;
  /// An item() read inside the argument of a `value_or` this check reports.
  bool claimsSite(SyncSiteKind Kind, TranslationUnitAnalysis &TU, const Expr *Site) override;

private:
  /// The syncs of \p ValueOr's argument (outside nested `value_or` arguments
  /// and lambdas) that may wait for the GPU, in source order.
  std::vector<const CallExpr *> waitingSyncs(TranslationUnitAnalysis &TU, const CXXMemberCallExpr *ValueOr);
};

/// `value_or` of `std::optional` or `c10::optional` (LibTorch 1.13's own class;
/// an alias of std::optional since 2.1).
static bool isOptionalValueOr(const Stmt *S) {
  const auto *Call = dyn_cast_or_null<CXXMemberCallExpr>(S);
  const CXXMethodDecl *Method = Call ? Call->getMethodDecl() : nullptr;
  if (!Method || Method->getName() != "value_or" || Call->getNumArgs() != 1)
    return false;
  const CXXRecordDecl *Record = Method->getParent();
  if (Record->getName() != "optional")
    return false;
  if (Record->isInStdNamespace())
    return true;
  const auto *NS = dyn_cast<NamespaceDecl>(Record->getDeclContext()->getEnclosingNamespaceContext());
  return NS && NS->getName() == "c10" && NS->getParent()->getRedeclContext()->isTranslationUnit();
}

/// The `value_or` call whose argument holds \p S, innermost first; nullptr when
/// S is in none (or only in the object of one).
static const CXXMemberCallExpr *valueOrAround(ASTContext &Ctx, const Stmt *S) {
  const Stmt *Below = S;
  const Stmt *Found = innermostAncestor(Ctx, S, [&](const Stmt *Ancestor) {
    if (isOptionalValueOr(Ancestor) && cast<CXXMemberCallExpr>(Ancestor)->getArg(0) == Below)
      return true;
    Below = Ancestor;
    return false;
  });
  return cast_or_null<CXXMemberCallExpr>(Found);
}

void EagerFallbackCheck::registerMatchers(MatchFinder *Finder) {
  Finder->addMatcher(
      cxxMemberCallExpr(callee(cxxMethodDecl(hasName("value_or"),
                                             ofClass(hasAnyName("::std::optional", "::c10::optional")))),
                        argumentCountIs(1), matchers::userCode(hub()))
          .bind("call"),
      this);
}

std::vector<const CallExpr *> EagerFallbackCheck::waitingSyncs(TranslationUnitAnalysis &TU,
                                                               const CXXMemberCallExpr *ValueOr) {
  ASTContext &Ctx = TU.context();
  std::vector<const CallExpr *> Syncs;
  for (const TranslationUnitAnalysis::CallSite &Site : TU.callSitesUnder(*ValueOr->getArg(0)))
    // A lambda's body runs when it is called; a nested value_or's argument is
    // its own finding.
    if (Site.Sync && !Site.InLambda && valueOrAround(Ctx, Site.Call) == ValueOr &&
        (!Site.Sync->Tensor ||
         mayBeOnGpu(TU.oracle().tensorPlacement(Site.Sync->Tensor->IgnoreParenImpCasts()))))
      Syncs.push_back(Site.Call);
  return Syncs;
}

bool EagerFallbackCheck::claimsSite(SyncSiteKind Kind, TranslationUnitAnalysis &TU, const Expr *Site) {
  if (Kind != SyncSiteKind::ItemRead)
    return false;
  const CXXMemberCallExpr *ValueOr = valueOrAround(TU.context(), Site);
  return ValueOr && llvm::is_contained(waitingSyncs(TU, ValueOr), Site);
}

/// Whether the text replacing \p E needs parentheses: it is not the whole
/// initialiser, argument, return value or parenthesised expression.
static bool needsParentheses(ASTContext &Ctx, const Expr *E) {
  const Stmt *Child = E;
  DynTypedNode Node = firstParent(Ctx, DynTypedNode::create(*E));
  while (const auto *Parent = Node.get<Stmt>()) {
    bool Implicit =
        isa<ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr, ExprWithCleanups>(Parent);
    // A converting construction (`at::Scalar s = opt.value_or(...)`) is implicit;
    // a written one (`Foo f(x)`, `Foo{x}`) takes arguments.
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(Parent))
      Implicit = !isa<CXXTemporaryObjectExpr>(Construct) && Construct->getParenOrBraceRange().isInvalid();
    if (!Implicit)
      break;
    Child = Parent;
    Node = firstParent(Ctx, Node);
  }
  if (const auto *Var = Node.get<VarDecl>())
    return Var->getInit() == nullptr;
  const auto *Parent = Node.get<Stmt>();
  if (!Parent)
    return true;
  if (isa<ParenExpr, ReturnStmt, InitListExpr, CXXConstructExpr, ParenListExpr>(Parent))
    return false;
  if (const auto *Call = dyn_cast<CallExpr>(Parent); Call && !isa<CXXOperatorCallExpr>(Call))
    return !llvm::is_contained(Call->arguments(), Child);
  return true;
}

/// The object of \p ValueOr when it is a variable or a member of one, read
/// without side effects (it is evaluated twice after the rewrite).
static bool isPlainObject(const CXXMemberCallExpr *ValueOr) {
  const auto *Member = dyn_cast<MemberExpr>(ValueOr->getCallee()->IgnoreParens());
  if (!Member || Member->isArrow())
    return false;
  const Expr *Object = Member->getBase()->IgnoreParenImpCasts();
  if (!isSideEffectFree(Object))
    return false;
  while (const auto *Field = dyn_cast<MemberExpr>(Object))
    Object = Field->getBase()->IgnoreParenImpCasts();
  return isa<DeclRefExpr, CXXThisExpr>(Object);
}

/// The spelled text of \p E with \p Marker written right after each call of
/// \p Syncs inside it; empty when E or a call is not spelled in one file range.
static std::string textWithMarkedSyncs(ASTContext &Ctx, const Expr *E, llvm::ArrayRef<const CallExpr *> Syncs,
                                       llvm::StringRef Marker) {
  const SourceManager &SM = Ctx.getSourceManager();
  const LangOptions &Lang = Ctx.getLangOpts();
  CharSourceRange Whole =
      Lexer::makeFileCharRange(CharSourceRange::getTokenRange(E->getSourceRange()), SM, Lang);
  if (Whole.isInvalid())
    return "";
  unsigned Begin = SM.getFileOffset(Whole.getBegin()), End = SM.getFileOffset(Whole.getEnd());
  std::string Text = Lexer::getSourceText(Whole, SM, Lang).str();
  std::vector<unsigned> Ends;
  for (const CallExpr *Call : Syncs) {
    CharSourceRange Range =
        Lexer::makeFileCharRange(CharSourceRange::getTokenRange(Call->getSourceRange()), SM, Lang);
    if (Range.isInvalid() || SM.getFileID(Range.getEnd()) != SM.getFileID(Whole.getBegin()))
      return "";
    unsigned At = SM.getFileOffset(Range.getEnd());
    if (At < Begin || At > End)
      return "";
    Ends.push_back(At - Begin);
  }
  // From the last insertion point back, so the earlier offsets stay valid.
  llvm::sort(Ends, std::greater<unsigned>());
  for (unsigned At : Ends)
    Text.insert(At, Marker.str());
  return Text;
}

void EagerFallbackCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *ValueOr = Result.Nodes.getNodeAs<CXXMemberCallExpr>("call");
  if (!ValueOr || !isOptionalValueOr(ValueOr))
    return;
  ASTContext &Ctx = *Result.Context;
  std::vector<const CallExpr *> Syncs = waitingSyncs(analysis(Ctx), ValueOr);
  if (Syncs.empty())
    return;
  const CallExpr *First = Syncs.front();
  std::optional<SyncCall> Sync = asSyncCall(First);
  if (!Sync)
    return;

  const Expr *ObjectExpr = ValueOr->getImplicitObjectArgument();
  const Expr *Fallback = ValueOr->getArg(0);
  const Expr *Written = Fallback->IgnoreImplicit();
  std::string Object = spelledText(Ctx, ObjectExpr);
  // The reads stay in the rewritten fallback on purpose (they run only when
  // the optional is empty): each carries the marker, so a second run does not
  // report them again (the fixed point).
  std::string FallbackText =
      textWithMarkedSyncs(Ctx, Written, Syncs, insertedSyncMarker("read only when empty"));
  bool Arrow = false;
  if (const auto *Member = dyn_cast<MemberExpr>(ValueOr->getCallee()->IgnoreParens()))
    Arrow = Member->isArrow();
  std::string OptName = Object.empty() || Object.size() > 40
                            ? std::string("the optional")
                            : "`" + std::string(Arrow ? "*" : "") + Object + "`";

  std::string SyncText = "`" + Sync->Api.str() + "()`";
  if (Sync->Tensor)
    SyncText += " on " + tensorPhrase(oracle(Ctx).tensorPlacement(Sync->Tensor->IgnoreParenImpCasts()));
  Finding F;
  F.What = "the argument of `value_or` is evaluated even when " + OptName + " holds a value, and its " +
           SyncText + (Sync->Tensor ? " makes the host wait for all queued GPU work" : " waits for the GPU");
  if (Syncs.size() > 1)
    F.What +=
        " (and " + std::to_string(Syncs.size() - 1) + " more sync" + (Syncs.size() > 2 ? "s" : "") + ")";
  UseVerdict Outer = classifier(Ctx).classify(ValueOr);
  F.Use = Outer;
  F.Use.Kind = Dependency::False;
  F.Use.ValidationMacro.clear();
  F.Use.Reason = "the value is needed only when " + OptName + " is empty (then " +
                 (Outer.Kind == Dependency::False ? "a false dependency too: " : "a true dependency: ") +
                 Outer.Reason + ")";

  // The rewrite is exact when the object can be read twice and the
  // conditional has value_or's type: the fallback is a prvalue of the
  // optional's value type (value_or returns that type, cv removed).
  bool Plain = isPlainObject(ValueOr);
  bool SameType = Written->isPRValue() && Ctx.hasSameUnqualifiedType(Written->getType(), ValueOr->getType());
  std::string Conditional = (Plain ? Object : "<optional>") + ".has_value() ? *" +
                            (Plain ? Object : "<optional>") + " : " + FallbackText;
  bool Parenthesise = needsParentheses(Ctx, ValueOr);
  std::string Replacement = Parenthesise ? "(" + Conditional + ")" : Conditional;
  std::string Shown = Plain && !Object.empty() && Object.size() <= 40 ? Object : std::string("opt");
  F.Remedy = "evaluate it only then: `" + Shown + ".has_value() ? *" + Shown + " : ...` waits only when " +
             OptName + " is empty instead of on every call";

  // The fallback runs on every call today: only a fallback with no effect but
  // its value (and its waits) may run only when the optional is empty.
  bool Pure = isSideEffectFree(Written);
  std::optional<std::vector<FixItHint>> Fixes;
  if (Plain && SameType && Pure && !Object.empty() && !FallbackText.empty())
    Fixes = fixItsFor({transformer::changeTo(selectTokens(ValueOr), transformer::cat(Replacement))}, Result);
  if (!Pure)
    F.Remedy += " (no fix: the argument has side effects (an in-place op, an assignment or a call of code "
                "that is not LibTorch's) that run on every call today; move them out of the argument first)";
  else if (!Plain)
    F.Remedy += " (no fix: the optional is not a variable read without side effects; store it in one first)";
  else if (!SameType)
    F.Remedy += " (no fix: the argument's type is not the optional's value type, so the conditional's "
                "type could differ from `value_or`'s)";
  else if (!Fixes)
    F.Remedy += " (no fix: the call is spelled in a macro)";
  report(ValueOr->getExprLoc(), F, Fixes ? ArrayRef<FixItHint>(*Fixes) : ArrayRef<FixItHint>());
  if (Plain && !SameType && !FallbackText.empty())
    diag(ValueOr->getExprLoc(), "the rewrite, if the conditional's type is the one needed: `%0`",
         DiagnosticIDs::Note)
        << Replacement;
}

TORCH_SYNC_CHECK_FACTORY(EagerFallbackCheck)

} // namespace torch_syncfree
