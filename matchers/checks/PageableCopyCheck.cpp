// torch-sync-pageable-copy: a `non_blocking` copy between the GPU and pageable host
// memory is synchronous all the same: the driver stages it through a pinned
// buffer of its own and the host waits for the staging copy. PyTorch's sync debug
// mode does not see this wait. Also: a non_blocking copy of a non-contiguous
// pinned tensor first makes a contiguous (pageable) copy.
#include "CatalogChecks.h"
#include "CopyCalls.h"
#include "PinnedMemory.h"
#include "TorchApi.h"
#include "fixes/PinAtCreation.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/Lex/Lexer.h"
#include "clang/Tooling/Transformer/RangeSelector.h"
#include "clang/Tooling/Transformer/Stencil.h"

using namespace clang;
using namespace clang::ast_matchers;
using namespace clang::transformer;

namespace torch_syncfree {

void PageableCopyCheck::registerMatchers(MatchFinder *Finder) {
  Finder->addMatcher(matchers::tensorMethodCall(hub(), "to", "copy_").bind("call"), this);
}

void PageableCopyCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CXXMemberCallExpr>("call");
  const auto *Object = Result.Nodes.getNodeAs<Expr>("object");
  ASTContext &Ctx = *Result.Context;
  // A blocking copy is torch-sync-host-to-device's (its message names a pageable
  // source, and its fix pins one it can).
  // A copy torch-sync-host-to-device made asynchronous from a source it could
  // not pin carries the tool's marker (its message already named the pageable
  // source; the tool never reports its own edit). The user's own copies are
  // reported however the flag is spelled.
  if (!passesNonBlocking(Call, Ctx) || isMarkedInsertedSync(Call, Ctx))
    return;
  DeviceOracle &Oracle = oracle(Ctx);
  const Expr *Host = nullptr;
  Placement DeviceSide = Placement::Unknown;
  bool HostToDevice = true;
  if (calleeName(Call) == "to") {
    const Expr *Target = targetDeviceArgument(Call, Oracle);
    // to(kCPU, non_blocking) of a GPU tensor allocates a pinned result itself.
    if (!Target)
      return;
    DeviceSide = *Oracle.devicePlacement(Target);
    Host = Object;
  } else { // dst.copy_(src, non_blocking)
    if (Call->getNumArgs() < 1)
      return;
    Placement Source = Oracle.tensorPlacement(Call->getArg(0));
    Placement Destination = Oracle.tensorPlacement(Object);
    if (Source == Placement::Cpu) {
      Host = Call->getArg(0);
      DeviceSide = Destination;
    } else if (Destination == Placement::Cpu) {
      Host = Object;
      DeviceSide = Source;
      HostToDevice = false;
    } else {
      return;
    }
  }
  if (Oracle.tensorPlacement(Host) != Placement::Cpu || !mayBeOnGpu(DeviceSide))
    return;
  // An index tensor moved to the indexed tensor's device inside `index({...})`
  // (the form torch-sync-index-put rewrites CPU indices to): indices are small.
  bool InIndexList = false;
  for (DynTypedNodeList Parents = Ctx.getParents(*Call); !Parents.empty();
       Parents = Ctx.getParents(Parents[0])) {
    const auto *E = Parents[0].get<Expr>();
    if (!E)
      break;
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E);
        Construct && Construct->getType().getAsString().find("TensorIndex") != std::string::npos)
      return;
    // An element of the braced index list itself, whatever type the headers
    // give the list.
    if (const auto *Indexing = dyn_cast<CXXMemberCallExpr>(E);
        Indexing && InIndexList && (calleeName(Indexing) == "index" || calleeName(Indexing) == "index_put_"))
      return;
    if (isa<InitListExpr, CXXStdInitializerListExpr>(E)) {
      InIndexList = true;
      continue;
    }
    if (!isa<ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr, CXXConstructExpr,
             ParenExpr, ExprWithCleanups>(E))
      break;
  }
  // `torch::tensor({values})`: a few values the host just wrote (and the form
  // torch-sync-tensor-factory rewrites to): not worth a pinned allocation.
  if (const auto *Values = dyn_cast_or_null<CallExpr>(ignoreWrappers(Host));
      Values && !isa<CXXMemberCallExpr>(Values) && calleeName(Values) == "tensor")
    return;
  Pinning HostMemory = hostPinning(analysis(Ctx), Host);
  bool NonContiguousPinned = HostMemory == Pinning::Pinned && mayBeNonContiguousView(Host);
  if (HostMemory != Pinning::Pageable && !NonContiguousPinned)
    return;

  std::string Direction = HostToDevice ? "from" : "into";
  Finding F;
  F.Use.Kind = Dependency::False;
  F.Use.Reason = "the host does not need to wait for the copy";
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Call);
  if (NonContiguousPinned) {
    F.What = "a `non_blocking` copy " + Direction +
             " a non-contiguous view of pinned memory first makes a contiguous copy in pageable "
             "memory, so the host waits for the transfer";
    F.Remedy = "copy a contiguous pinned tensor (make the layout contiguous once, where the "
               "tensor is made) and rearrange it on the device";
    report(Call->getExprLoc(), F);
    return;
  }
  F.What = "a copy " + Direction +
           " pageable host memory cannot overlap with the GPU: even with `non_blocking=true` the "
           "driver stages it through a pinned buffer and the host waits (sync debug mode does not "
           "see this)";
  F.Remedy = "pin the host tensor where it is made (`.pin_memory()`, or options with "
             "`pinned_memory(true)`)";
  std::optional<PinAtCreation> Pin;
  if (HostToDevice)
    Pin = pinAtCreation(analysis(Ctx), Host, Call, DeviceSide == Placement::Gpu);
  if (!Pin) {
    F.Remedy += "; where it is made anew every step (a loader batch), copy it into a pinned "
                "staging buffer allocated once and reused (wait on an event recorded after "
                "the copy before refilling it)";
    report(Call->getExprLoc(), F);
    return;
  }
  F.Remedy += Pin->Container ? ": the elements of `" + Pin->Variable + "` are stored " + Pin->Where +
                                   " and only read"
                             : ": `" + Pin->Variable + "` is made once " + Pin->Where + " and only read";
  std::vector<ASTEdit> PinEdits;
  for (const PinEdit &Edit : Pin->Edits)
    PinEdits.push_back(changeTo(charRange(Edit.Range), cat(Edit.NewText)));
  auto Fixes = fixItsFor(PinEdits, Result);
  report(Call->getExprLoc(), F, Fixes ? *Fixes : std::vector<FixItHint>{});
}

TORCH_SYNC_CHECK_FACTORY(PageableCopyCheck)

} // namespace torch_syncfree
