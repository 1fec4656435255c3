#include "DeviceToHostCheck.h"
#include "ApiFacts.h"
#include "CopyCalls.h"
#include "TorchApi.h"
#include "fixes/HoistInvariantCopy.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

void DeviceToHostCheck::registerMatchers(MatchFinder *Finder) {
  using namespace matchers;
  Finder->addMatcher(tensorMethodCall(hub(), "cpu", "to").bind("call"), this);
  // `torch::save(value, path)`: every GPU tensor it holds is copied to the host.
  Finder->addMatcher(callExpr(callee(functionDecl(hasAnyName(qualifiedNamesWithTrait(SerializesToHost)))),
                              hasArgument(0, expr().bind("saved")), userCode(hub()))
                         .bind("save"),
                     this);
}

/// `torch::save(value, ...)` of a tensor, tensors or a module that may be on the
/// GPU: each tensor is copied to the host with a blocking copy first, on every
/// LibTorch version (1.13 and 2.11 pickle a CPU copy of each tensor). The host
/// needs those values (it writes them out): a true dependency, reported so that a
/// save inside the training loop is seen.
void DeviceToHostCheck::checkSave(const CallExpr *Save, const Expr *Saved, ASTContext &Ctx) {
  Placement Where = oracle(Ctx).heldTensorsPlacement(Saved);
  if (!mayBeOnGpu(Where))
    return;
  bool Tensor = isTensorType(Saved->getType());
  // A standard container holds tensors; anything else torch::save takes is a module.
  const CXXRecordDecl *Record = Saved->getType()->getAsCXXRecordDecl();
  bool Module = !Tensor && !(Record && Record->isInStdNamespace() && Record->getDeclName().isIdentifier() &&
                             hasHostApiTrait(Record->getName(), HostContainer));
  Finding F;
  F.What = "`torch::save` of " +
           (Tensor ? tensorPhrase(Where)
                   : std::string(Module ? "a module" : "tensors") +
                         (Where == Placement::Gpu ? " on the GPU" : " that may be on the GPU")) +
           " copies " +
           (Tensor   ? "it"
            : Module ? "every parameter and buffer"
                     : "each tensor") +
           " to the host first, a blocking copy " + (Tensor ? "that waits" : "each; the first waits") +
           " for all queued GPU work";
  F.Use.Kind = Dependency::True;
  F.Use.Reason = "the file needs the values on the host";
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Save);
  F.Remedy = F.Use.LoopLine
                 ? "save every N steps or once after the loop, not every iteration"
                 : "keep it where it waits once (a checkpoint needs the values); in a training loop, "
                   "save at an interval";
  report(Save->getBeginLoc(), F);
}

void DeviceToHostCheck::check(const MatchFinder::MatchResult &Result) {
  if (const auto *Save = Result.Nodes.getNodeAs<CallExpr>("save")) {
    checkSave(Save, Result.Nodes.getNodeAs<Expr>("saved"), *Result.Context);
    return;
  }
  const auto *Call = Result.Nodes.getNodeAs<CXXMemberCallExpr>("call");
  const auto *Object = Result.Nodes.getNodeAs<Expr>("object");
  ASTContext &Ctx = *Result.Context;
  DeviceOracle &Oracle = oracle(Ctx);
  StringRef Method = calleeName(Call);
  std::string Spelled = "`cpu()`";
  if (Method == "to") {
    if (!isBlockingCopyToHost(Call, Oracle, Ctx))
      return;
    Spelled = "`to(<CPU>)`";
  }
  Placement Where = Oracle.tensorPlacement(Object);
  if (!mayBeOnGpu(Where))
    return;

  Finding F;
  F.What = Spelled + " on " + tensorPhrase(Where) +
           " copies it to the host and waits for all queued GPU work";
  F.Use = classifier(Ctx).classify(Call);
  F.Remedy = F.Use.Kind == Dependency::False
                 ? "do the work on the device, or copy after the step or at a log interval"
                 : "copy once, later: into pinned memory with `non_blocking=true` and one "
                   "synchronization before the host reads it";
  // A copy of a tensor the loop does not change, made every iteration: one
  // copy before the loop reads the same values (issue 41). It removes a
  // transfer, a host allocation and a wait per iteration, a gain even while
  // other waits stay (the no-gain rule does not hold it back).
  // A host tensor copied to the device and read back in the same block: the
  // host original holds the same values (issue 41), no copy and no wait.
  if (F.Use.Kind != Dependency::Intentional && !F.Use.IntervalLine)
    if (std::optional<HostOriginal> Original = hostOriginal(analysis(Ctx), Call)) {
      F.Remedy = "`" + Original->Device + "` is `" + Original->Host + "` copied to the device at line " +
                 std::to_string(Original->CopyLine) + ": read `" + Original->Host +
                 "` on the host instead (no copy back, one wait fewer per " +
                 (analysis(Ctx).enclosingLoop(Call) ? "iteration)" : "call)");
      std::optional<std::vector<FixItHint>> Fixes;
      if (!Original->NotProven.empty())
        F.Remedy +=
            "; no fix: " + Original->NotProven + " (the rewrite: `" + Original->Host + "` for this copy)";
      else if (fixesEnabled()) {
        Fixes = fixItsFor(Original->Edits, Result);
        if (!Fixes)
          F.Remedy += "; no fix: the copy is written in a macro (the rewrite: `" + Original->Host +
                      "` for this copy)";
      }
      report(Call->getExprLoc(), F, Fixes ? *Fixes : std::vector<FixItHint>{});
      return;
    }
  if (F.Use.Kind != Dependency::Intentional)
    if (std::optional<InvariantCopy> Hoist = invariantHostCopy(analysis(Ctx), Call)) {
      F.Remedy = "`" + Hoist->Tensor + "` does not change in the loop at line " +
                 std::to_string(Hoist->LoopLine) +
                 ": copy it once before the loop (one wait per call instead of one per iteration)";
      if (!Hoist->NotProven.empty() || !fixesEnabled()) {
        if (!Hoist->NotProven.empty())
          F.Remedy += "; no fix: " + Hoist->NotProven + " (the rewrite: move `" + Hoist->Declaration +
                      "` before the loop)";
        report(Call->getExprLoc(), F);
        return;
      }
      auto Fixes = fixItsFor(Hoist->Edits, Result);
      if (!Fixes)
        F.Remedy += "; no fix: the loop is written in a macro";
      report(Call->getExprLoc(), F, Fixes ? *Fixes : std::vector<FixItHint>{});
      return;
    }
  report(Call->getExprLoc(), F);
}

TORCH_SYNC_CHECK_FACTORY(DeviceToHostCheck)

} // namespace torch_syncfree
