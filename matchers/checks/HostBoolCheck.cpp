#include "CatalogChecks.h"
#include "TorchApi.h"
#include "clang/Lex/Lexer.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

void HostBoolCheck::registerMatchers(MatchFinder *Finder) {
  using namespace matchers;
  Finder->addMatcher(tensorMethodCall("is_nonzero", "equal", "allclose", "item").bind("call"), this);
  Finder->addMatcher(callExpr(callee(functionDecl(hasAnyName("equal", "allclose", "is_nonzero"))),
                              unless(cxxMemberCallExpr()), hasArgument(0, expr().bind("object")),
                              userCode())
                         .bind("call"),
                     this);
}

/// item<bool>(): the explicit template argument is bool.
static bool isItemBool(const CallExpr *Call) {
  const FunctionDecl *FD = Call->getDirectCallee();
  if (calleeName(Call) != "item" || !FD->getTemplateSpecializationArgs())
    return false;
  const TemplateArgumentList *Args = FD->getTemplateSpecializationArgs();
  return Args->size() == 1 && Args->get(0).getKind() == TemplateArgument::Type &&
         Args->get(0).getAsType()->isBooleanType();
}

/// The innermost assertion macro the call is an argument of, if any.
static StringRef assertionMacro(ASTContext &Ctx, SourceLocation Loc) {
  const SourceManager &SM = Ctx.getSourceManager();
  while (Loc.isMacroID()) {
    StringRef Name = Lexer::getImmediateMacroName(Loc, SM, Ctx.getLangOpts());
    if (Name == "TORCH_CHECK" || Name == "AT_ASSERT" || Name == "assert" ||
        Name == "TORCH_INTERNAL_ASSERT" || Name == "AT_ASSERTM")
      return Name;
    Loc = SM.getImmediateMacroCallerLoc(Loc);
  }
  return "";
}

void HostBoolCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CallExpr>("call");
  const auto *Object = Result.Nodes.getNodeAs<Expr>("object");
  ASTContext &Ctx = *Result.Context;
  if (!isInTorchNamespace(Call->getDirectCallee()))
    return;
  StringRef Name = calleeName(Call);
  if (Name == "item" && !isItemBool(Call))
    return; // other item<T>() calls are torch-sync-item's
  Placement Where = oracle(Ctx).tensorPlacement(Object);
  if (!mayBeOnGpu(Where))
    return;
  Finding F;
  std::string Spelled = Name == "item" ? "item<bool>()" : Name.str();
  F.What = "`" + Spelled + "` on " + tensorPhrase(Where) +
           " turns a GPU value into a host `bool`, so the host waits for the GPU";
  F.Use = classifier(Ctx).classify(Call);
  StringRef Macro = assertionMacro(Ctx, Call->getBeginLoc());
  if (!Macro.empty()) {
    F.Use.Kind = Dependency::True;
    F.Use.Reason = "the value is checked by `" + Macro.str() + "`";
    F.Remedy = "check on the device with `at::_assert_async(cond)` (a failing check then "
               "aborts the CUDA context instead of throwing)";
  } else {
    F.Remedy = "decide on the device instead (`torch::where`, masks) or check less often";
  }
  report(Call->getExprLoc(), F);
}

} // namespace torch_syncfree
