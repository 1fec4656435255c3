#include "ItemCheck.h"
#include "CatalogChecks.h"
#include "TorchApi.h"
#include "fixes/HoistInvariantCopy.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"
#include "clang/Tooling/Transformer/RewriteRule.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

void ItemCheck::registerMatchers(MatchFinder *Finder) {
  using namespace matchers;
  Finder->addMatcher(tensorMethodCall(hub(), "item").bind("call"), this);
  Finder->addMatcher(
      callExpr(callee(functionDecl(hasName("_local_scalar_dense"))),
               hasArgument(0, expr().bind("object")), userCode(hub()))
          .bind("call"),
      this);
}

void ItemCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CallExpr>("call");
  const auto *Object = Result.Nodes.getNodeAs<Expr>("object");
  if (!Call || !Object || !isInTorchNamespace(Call->getDirectCallee()))
    return;
  ASTContext &Ctx = *Result.Context;
  if (isMarkedInsertedSync(Call, Ctx))
    return; // a read a fix put at a log point on purpose
  // item<bool>() is torch-sync-host-bool's: one finding per site.
  if (const TemplateArgumentList *Args = Call->getDirectCallee()->getTemplateSpecializationArgs())
    if (Args->size() == 1 && Args->get(0).getKind() == TemplateArgument::Type &&
        Args->get(0).getAsType()->isBooleanType())
      return;
  Placement Where = oracle(Ctx).tensorPlacement(Object);
  if (!mayBeOnGpu(Where))
    return;

  // Sites a more specific check reports, with a better remedy, are left to it
  // (Checks.def's precedence; _local_scalar_dense is this check's alone).
  if (syncSiteKindOf(Call) && !ownsSite(Ctx, Call))
    return;
  UseVerdict Use = classifier(Ctx).classify(Call);

  Finding F;
  F.Subject = Where == Placement::Unknown ? Object : nullptr;
  std::string Callee = isa<CXXMemberCallExpr>(Call) ? "`item()`" : "`_local_scalar_dense`";
  F.What = Callee + " on " + tensorPhrase(Where) +
           " copies the value to the host and waits for all queued GPU work";
  F.Use = Use;
  F.Remedy = F.Use.Kind == Dependency::False
                 ? "keep the value on the device as a 0-dim tensor and read it after the "
                   "step or at a log interval"
                 : "if the host must decide, decide on the device instead (`torch::where`, "
                   "masks) or read the value less often";
  // A barrier, and a read already at a log interval (the remedy itself, shown
  // with ReportIntervalReads), are left as they are.
  if (Use.Kind == Dependency::Intentional || Use.IntervalLine) {
    report(Call->getExprLoc(), F);
    return;
  }
  // A tensor the same block also copies whole to the host: one copy serves
  // both reads (issue 41).
  auto SharedFor = [&](const CallExpr *Read) -> std::optional<SharedHostCopy> {
    const auto *Member = dyn_cast<CXXMemberCallExpr>(Read);
    return Member ? sharedHostCopy(analysis(Ctx), Member) : std::nullopt;
  };
  // A host tensor copied to the device and read back: read the host original.
  if (const auto *Member = dyn_cast<CXXMemberCallExpr>(Call))
    if (std::optional<HostOriginal> Original = hostOriginal(analysis(Ctx), Member)) {
      F.Remedy = "`" + Original->Device + "` is `" + Original->Host + "` copied to the device at line " +
                 std::to_string(Original->CopyLine) + ": read the element from `" + Original->Host +
                 "` on the host (one wait fewer per " +
                 (analysis(Ctx).enclosingLoop(Call) ? "iteration)" : "call)");
      std::optional<std::vector<FixItHint>> Fixes;
      if (!Original->NotProven.empty())
        F.Remedy += "; no fix: " + Original->NotProven + " (the rewrite: `" + Original->Host + "` for `" +
                    Original->Device + "` in the read)";
      else if (fixesEnabled()) {
        Fixes = fixItsFor(Original->Edits, Result);
        if (!Fixes)
          F.Remedy += "; no fix: a read is written in a macro (the rewrite: `" + Original->Host + "` for `" +
                      Original->Device + "` in the read)";
      }
      report(Call->getExprLoc(), F, Fixes ? *Fixes : std::vector<FixItHint>{});
      return;
    }
  std::optional<SharedHostCopy> Shared = SharedFor(Call);
  auto Fix = [&](const std::vector<transformer::ASTEdit> &Edits, const std::string &Rewrite) {
    if (!fixesEnabled()) {
      report(Call->getExprLoc(), F);
      return;
    }
    auto Fixes = fixItsFor(Edits, Result);
    if (!Fixes)
      F.Remedy += "; no fix: a read is written in a macro (the rewrite: " + Rewrite + ")";
    report(Call->getExprLoc(), F, Fixes ? *Fixes : std::vector<FixItHint>{});
  };
  auto DescribeShared = [&] {
    const SharedHostCopy &S = *Shared;
    F.Remedy = "`" + S.Tensor + "` is also copied to the host at line " + std::to_string(S.CopyLine) + " (`" +
               S.Host + "`): " +
               (S.CopyAfter ? "make that copy before this read and read the element from it"
                            : "read the element from that copy") +
               (S.PerIteration ? " (one wait fewer per iteration)" : " (one wait fewer per call)");
    return S.CopyAfter ? "`" + S.Host + "` declared before this statement, `" + S.Host + "` for `" +
                             S.Tensor + "` in the read"
                       : "`" + S.Host + "` for `" + S.Tensor + "` in the read";
  };
  if (Shared && Shared->NotProven.empty()) {
    std::string Rewrite = DescribeShared();
    Fix(Shared->Edits, Rewrite);
    return;
  }
  // Element reads of a tensor the loop does not change: one copy before the
  // loop serves them all (issue 41). It removes a wait per read, a gain even
  // while other waits stay (the no-gain rule does not hold it back).
  if (std::optional<InvariantElementReads> Hoist =
          invariantElementReads(analysis(Ctx), Call, [&](const CallExpr *Read) {
            if (isMarkedInsertedSync(Read, Ctx) || (syncSiteKindOf(Read) && !ownsSite(Ctx, Read)))
              return false;
            std::optional<SharedHostCopy> ItsShared = Read == Call ? Shared : SharedFor(Read);
            return !ItsShared || !ItsShared->NotProven.empty();
          })) {
    size_t Reads = Hoist->Reads.size();
    F.Remedy = "`" + Hoist->Tensor + "` does not change in the loop at line " +
               std::to_string(Hoist->LoopLine) +
               ": copy it to the host once before the loop and read its elements there (one wait per call "
               "instead of one per read, " +
               (Reads == 1 ? std::string("one read") : std::to_string(Reads) + " reads") + " per iteration)";
    std::string Rewrite = "`auto " + Hoist->HostName + " = " + Hoist->Tensor + ".cpu();` before the loop, `" +
                          Hoist->HostName + "[...]` for " + (Reads == 1 ? "the read" : "each read");
    if (Hoist->Reads.front() != Call)
      F.Remedy += "; the fix is on the read at line " + std::to_string(Hoist->FirstLine);
    else if (!Hoist->NotProven.empty())
      F.Remedy += "; no fix: " + Hoist->NotProven + " (the rewrite: " + Rewrite + ")";
    else {
      Fix(Hoist->Edits, Rewrite);
      return;
    }
    report(Call->getExprLoc(), F);
    return;
  }
  if (Shared) {
    std::string Rewrite = DescribeShared();
    F.Remedy += "; no fix: " + Shared->NotProven + " (the rewrite: " + Rewrite + ")";
  }
  report(Call->getExprLoc(), F);
}

TORCH_SYNC_CHECK_FACTORY(ItemCheck)

} // namespace torch_syncfree
