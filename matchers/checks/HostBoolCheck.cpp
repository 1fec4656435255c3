#include "ApiFacts.h"
#include "CatalogChecks.h"
#include "TensorFacts.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"
#include "clang/Lex/Lexer.h"
#include "clang/Tooling/Transformer/RangeSelector.h"
#include "clang/Tooling/Transformer/Stencil.h"

using namespace clang;
using namespace clang::ast_matchers;
using clang::transformer::RangeSelector;

namespace torch_syncfree {

void HostBoolCheck::registerMatchers(MatchFinder *Finder) {
  using namespace matchers;
  llvm::ArrayRef<StringRef> HostBools = namesWithTrait(HostBool);
  std::vector<StringRef> Methods(HostBools.begin(), HostBools.end());
  Methods.push_back("item"); // item<bool>(), told apart in check()
  Finder->addMatcher(tensorMethodCall(hub(), Methods).bind("call"), this);
  // multinomial: LibTorch 1.x validates the probabilities with host bools.
  Finder->addMatcher(tensorMethodCall(hub(), "multinomial").bind("sampling"), this);
  Finder->addMatcher(callExpr(callee(functionDecl(hasName("multinomial"))), unless(cxxMemberCallExpr()),
                              hasArgument(0, expr().bind("object")), userCode(hub()))
                         .bind("sampling"),
                     this);
  Finder->addMatcher(callExpr(callee(functionDecl(hasAnyName(HostBools))), unless(cxxMemberCallExpr()),
                              hasArgument(0, expr().bind("object")), userCode(hub()))
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

/// The innermost assertion macro the call is an argument of, if any, and the
/// file range of that macro's invocation.
/// Splits `MACRO(a, b, ...)` into its top-level arguments.
static std::vector<std::string> macroArguments(StringRef Invocation) {
  std::vector<std::string> Args;
  size_t Open = Invocation.find('(');
  if (Open == StringRef::npos || !Invocation.ends_with(")"))
    return Args;
  StringRef Inner = Invocation.drop_front(Open + 1).drop_back();
  int Depth = 0;
  bool InString = false;
  std::string Current;
  for (size_t I = 0; I < Inner.size(); ++I) {
    char C = Inner[I];
    if (InString) {
      Current += C;
      if (C == '\\' && I + 1 < Inner.size())
        Current += Inner[++I];
      else if (C == '"')
        InString = false;
      continue;
    }
    if (C == '"')
      InString = true;
    if (C == '(' || C == '{' || C == '[' || C == '<')
      ++Depth;
    if (C == ')' || C == '}' || C == ']' || C == '>')
      --Depth;
    if (C == ',' && Depth == 0) {
      Args.push_back(StringRef(Current).trim().str());
      Current.clear();
      continue;
    }
    Current += C;
  }
  Args.push_back(StringRef(Current).trim().str());
  return Args;
}

/// `probs.multinomial(n)` without replacement on a GPU tensor: LibTorch 1.x
/// validates the probabilities on the host (`(max < inf & min >= 0).item()` and
/// the rows' sums, each in a TORCH_CHECK) before sampling; 2.x validates them
/// with `_assert_async` (issue 43, item 3). With replacement, 1.x samples in a
/// kernel that asserts on the device: no wait.
void HostBoolCheck::checkSampling(const CallExpr *Call, const Expr *Probabilities, ASTContext &Ctx) {
  StringRef Name = calleeName(Call);
  if (!isInTorchNamespace(Call->getDirectCallee()) || !hasApiTrait(Name, ValidatedOnHostBeforeV2))
    return;
  // (num_samples, replacement = false, generator): after the tensor for a free call.
  unsigned ReplacementArg = isa<CXXMemberCallExpr>(Call) ? 1 : 2;
  if (Call->getNumArgs() <= ReplacementArg)
    return;
  const Expr *Replacement = Call->getArg(ReplacementArg);
  bool With = true;
  if (Replacement->isValueDependent() || !Replacement->EvaluateAsBooleanCondition(With, Ctx) || With)
    return;
  VersionInUse Version = libTorchVersion(Ctx);
  if (Version.Version.Major >= FirstMajorValidatingOnDevice)
    return;
  Placement Where = oracle(Ctx).tensorPlacement(Probabilities);
  if (!mayBeOnGpu(Where))
    return;
  Finding F;
  F.Subject = Where == Placement::Unknown ? Probabilities : nullptr;
  F.What = "`" + Name.str() + "` without replacement on " + tensorPhrase(Where) +
           " validates the probabilities with host `bool`s (`item()` inside `TORCH_CHECK`) in " +
           Version.Phrase + ", so the host waits for the GPU";
  F.Use.Kind = Dependency::False;
  F.Use.Reason = "the samples do not need the host: only LibTorch's validation reads the probabilities";
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Call);
  F.Remedy =
      "sample the way 1.13 does after its check, without it: `(p / torch::empty_like(p).exponential_(1))"
      ".argmax(-1, true)` for one sample, `std::get<1>((p / torch::empty_like(p).exponential_(1)).topk(n))` "
      "for n (invalid probabilities then go unreported); LibTorch 2.x validates on the device";
  report(Call->getExprLoc(), F);
}

void HostBoolCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Object = Result.Nodes.getNodeAs<Expr>("object");
  ASTContext &Ctx = *Result.Context;
  if (const auto *Sampling = Result.Nodes.getNodeAs<CallExpr>("sampling")) {
    checkSampling(Sampling, Object, Ctx);
    return;
  }
  const auto *Call = Result.Nodes.getNodeAs<CallExpr>("call");
  if (!isInTorchNamespace(Call->getDirectCallee()))
    return;
  StringRef Name = calleeName(Call);
  if (Name == "item" && !isItemBool(Call))
    return; // other item<T>() calls are torch-sync-item's
  if (isMarkedInsertedSync(Call, Ctx))
    return; // a sync a fix left on purpose
  Placement Where = oracle(Ctx).tensorPlacement(Object);
  if (!mayBeOnGpu(Where))
    return;
  // `t.equal(expected)` with `expected` a CPU tensor with dimensions: LibTorch
  // rejects tensors on two devices (a 0-dim CPU one passes as a scalar), so in
  // any run that gets past it, t is on the CPU too.
  if (Where == Placement::Unknown && (Name == "equal" || Name == "allclose"))
    for (const Expr *Arg : Call->arguments())
      if (ignoreWrappers(Arg) != ignoreWrappers(Object) && isTensorType(Arg->getType()) &&
          oracle(Ctx).tensorPlacement(Arg) == Placement::Cpu && hasDimensions(analysis(Ctx), Arg))
        return;
  Finding F;
  F.Subject = Where == Placement::Unknown ? Object : nullptr;
  std::string Spelled = Name == "item" ? "item<bool>()" : Name.str();
  F.What = "`" + Spelled + "` on " + tensorPhrase(Where) +
           " turns a GPU value into a host `bool`, so the host waits for the GPU";
  F.Use = classifier(Ctx).classify(Call);
  CharSourceRange Invocation;
  StringRef Macro = validationMacro(Ctx, Call->getBeginLoc(), &Invocation);
  std::vector<FixItHint> Fixes;
  if (!Macro.empty()) {
    F.Use.Kind = Dependency::True;
    F.Use.Reason = "the value is checked by `" + Macro.str() + "`";
    F.Remedy = "check on the device with `at::_assert_async(cond)` (a failing check then "
               "aborts the CUDA context instead of throwing)";
    F.Use.ValidationMacro.clear(); // this remedy, with its fix, is the more specific one
    // Opt-in: `TORCH_CHECK(t.item<bool>(), "msg")` -> `at::_assert_async(t, "msg")`
    // (the message only where the headers declare the two-argument form).
    std::string Text = Lexer::getSourceText(Invocation, Ctx.getSourceManager(),
                                            Ctx.getLangOpts()).str();
    std::vector<std::string> Args = macroArguments(Text);
    const std::string Suffix = ".item<bool>()";
    if (AssertAsyncFix && Macro == "TORCH_CHECK" && Name == "item" && !Args.empty() &&
        StringRef(Text).starts_with("TORCH_CHECK(") &&
        Args.size() <= 2 && StringRef(Args[0]).ends_with(Suffix) &&
        StringRef(Args[0]).count('(') == StringRef(Args[0]).count(')') &&
        Args[0].find("item") == Args[0].size() - Suffix.size() + 1 &&
        (Args.size() == 1 || StringRef(Args[1]).starts_with("\""))) {
      std::string Condition = Args[0].substr(0, Args[0].size() - Suffix.size());
      bool TwoArgument = torchDeclares(Ctx, "at", "_assert_async", 2);
      std::string Replacement = "at::_assert_async(" + Condition +
                                (Args.size() == 2 && TwoArgument ? ", " + Args[1] : "") + ")";
      RangeSelector Whole = selectRange(Invocation);
      if (Invocation.isValid() && Invocation.getBegin().isFileID())
        if (auto Edits = fixItsFor({transformer::changeTo(Whole, transformer::cat(Replacement))},
                                   Result))
          Fixes = *Edits;
    }
  } else {
    F.Remedy = "decide on the device instead (`torch::where`, masks) or check less often";
  }
  report(Call->getExprLoc(), F, Fixes);
}

TORCH_SYNC_CHECK_FACTORY(HostBoolCheck)

} // namespace torch_syncfree
