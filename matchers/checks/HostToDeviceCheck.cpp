#include "HostToDeviceCheck.h"
#include "ApiFacts.h"
#include "CatalogChecks.h"
#include "CopyCalls.h"
#include "PinnedMemory.h"
#include "TorchApi.h"
#include "fixes/PinAtCreation.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Lex/Lexer.h"
#include "clang/Tooling/Transformer/RangeSelector.h"
#include "clang/Tooling/Transformer/Stencil.h"

using namespace clang;
using namespace clang::ast_matchers;
using namespace clang::transformer;

namespace torch_syncfree {

static const char PinnedNote[] =
    "a pageable source still stalls for large copies (measured: 256 MB waited, 16 KB did not)";

void HostToDeviceCheck::registerMatchers(MatchFinder *Finder) {
  using namespace matchers;
  Finder->addMatcher(tensorMethodCall(hub(), "cuda", "to", "copy_").bind("call"), this);
}

static CharSourceRange tokenRange(const Stmt *S) {
  return CharSourceRange::getTokenRange(S->getSourceRange());
}

/// The namespace prefix of a `kCUDA` spelling: "torch::" from "torch::kCUDA".
static std::string namespacePrefix(StringRef Spelling) {
  size_t Pos = Spelling.rfind("::");
  return Pos == StringRef::npos ? "" : Spelling.substr(0, Pos + 2).str();
}

/// Whether the named local source tensor is written after the copy (or
/// anywhere in a loop around it): a non_blocking copy from pinned memory would
/// race with that write.
bool HostToDeviceCheck::sourceWrittenAfter(const Expr *Source, const Stmt *Copy,
                                           ASTContext &Ctx, unsigned LoopLine) {
  const auto *Ref = dyn_cast_or_null<DeclRefExpr>(ignoreWrappers(Source));
  if (!Ref)
    return false;
  const auto *VD = dyn_cast<VarDecl>(Ref->getDecl());
  const auto *FD = VD ? dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod()) : nullptr;
  if (!FD || !FD->getBody())
    return false;
  // The writing uses are found once per variable (a copy per statement of a
  // long function asked for all of them each time: quadratic).
  auto [It, Inserted] = WritesOf.try_emplace(VD);
  std::vector<const DeclRefExpr *> &Writes = It->second;
  if (Inserted)
    for (const DeclRefExpr *Use : analysis(Ctx).referencesTo(*FD->getBody(), VD)) {
      const Stmt *Parent = consumerOf(Ctx, Use);
      bool IsWrite = false;
      if (const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(Parent)) {
        const Expr *Object = MC->getImplicitObjectArgument();
        if (!Object || Object->IgnoreParenImpCasts() != Use)
          continue; // an argument of a LibTorch method: read, not written
        StringRef Name = calleeName(MC);
        IsWrite = mayWriteTensorMemory(Name);
      } else if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(Parent)) {
        IsWrite = Op->isAssignmentOp() && ignoreWrappers(Op->getArg(0))->IgnoreImplicit() == Use;
      } else if (const auto *Call = dyn_cast_or_null<CallExpr>(Parent)) {
        const FunctionDecl *Callee = Call->getDirectCallee();
        IsWrite = !Callee || !isInTorchNamespace(Callee); // code that may write it
      }
      if (IsWrite)
        Writes.push_back(Use);
    }
  if (Writes.empty())
    return false;
  // In a loop, any other write races with the next iteration's copy.
  if (LoopLine != 0 && llvm::any_of(Writes, [&](const DeclRefExpr *W) { return W != Ref; }))
    return true;
  // Otherwise a write after the copy: the first one, by binary search (source order).
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation CopyEnd = Copy->getEndLoc();
  auto First = llvm::partition_point(Writes, [&](const DeclRefExpr *W) {
    return !SM.isBeforeInTranslationUnit(CopyEnd, W->getBeginLoc());
  });
  return First != Writes.end();
}

/// A loader batch: a field (`data`, `target`) of LibTorch's torch::data::Example,
/// what torch::data data loaders yield. A user's own struct is not called one,
/// whatever its name.
static bool looksLikeLoaderBatch(const Expr *Source) {
  Source = ignoreWrappers(Source);
  if (const auto *ME = dyn_cast_or_null<MemberExpr>(Source)) {
    QualType Base = ME->getBase()->getType().getNonReferenceType();
    if (const auto *RD = Base->getAsCXXRecordDecl())
      return RD->getName() == "Example" && isInTorchNamespace(RD);
  }
  return false;
}

/// A device that is the CPU only where no GPU exists: `cuda::is_available() ?
/// kCUDA : kCPU` (LibTorch's examples), written at the call or as a variable's
/// initialiser. No tensor can be on a GPU then, so a copy to it never goes from
/// the GPU to the host.
static bool gpuWheneverOneExists(const Expr *Device, DeviceOracle &Oracle, unsigned Depth = 0) {
  if (!Device || Depth > 4)
    return false;
  Device = ignoreWrappers(Device);
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(Device))
    return Construct->getNumArgs() >= 1 &&
           gpuWheneverOneExists(Construct->getArg(0), Oracle, Depth + 1);
  if (const auto *Ref = dyn_cast<DeclRefExpr>(Device)) {
    const auto *Var = dyn_cast<VarDecl>(Ref->getDecl());
    return Var && Var->isLocalVarDecl() &&
           Var->getInit() && gpuWheneverOneExists(Var->getInit(), Oracle, Depth + 1);
  }
  const auto *Choice = dyn_cast<ConditionalOperator>(Device->IgnoreParenImpCasts());
  if (!Choice)
    return false;
  bool AsksForCuda = false;
  std::function<void(const Stmt *)> Visit = [&](const Stmt *S) {
    if (const auto *Call = dyn_cast_or_null<CallExpr>(S))
      if (const FunctionDecl *FD = Call->getDirectCallee())
        if ((FD->getName() == "is_available" || FD->getName() == "device_count") &&
            FD->getQualifiedNameAsString().find("cuda") != std::string::npos)
          AsksForCuda = true;
    if (S)
      for (const Stmt *Child : S->children())
        Visit(Child);
  };
  Visit(Choice->getCond());
  return AsksForCuda && Oracle.devicePlacement(Choice->getTrueExpr()) == Placement::Gpu &&
         Oracle.devicePlacement(Choice->getFalseExpr()) == Placement::Cpu;
}

/// The fill factory of `torch::ones(...).cuda()`-style code, created on the device
/// instead (no copy at all), or nullptr.
static const CallExpr *createThenCopyFactory(const CXXMemberCallExpr *Call, const Expr *DeviceArg,
                                             Placement SourceAt) {
  StringRef Method = calleeName(Call);
  if (Method == "copy_")
    return nullptr;
  const auto *Factory = dyn_cast_or_null<CallExpr>(ignoreWrappers(Call->getImplicitObjectArgument()));
  if (Factory && !isa<CXXMemberCallExpr>(Factory) && !isa<CXXOperatorCallExpr>(Factory) &&
      isInTorchNamespace(Factory->getDirectCallee()) && hasApiTrait(calleeName(Factory), DeterministicFill) &&
      SourceAt == Placement::Cpu && explicitArgCount(Call) == (Method == "cuda" ? 0u : 1u) &&
      (Method == "cuda" || plainDeviceArgument(DeviceArg)))
    return Factory;
  return nullptr;
}

/// The edits that make a blocking copy asynchronous: `cuda()` becomes
/// `to(<cuda>, /*non_blocking=*/true)`, `to`/`copy_` get the flag; empty when the
/// call's form has no place for it. \p Marker (insertedSyncMarker(), or empty)
/// follows the call: the copy stays a wait the tool wrote on purpose.
static std::vector<ASTEdit> nonBlockingEdits(const CXXMemberCallExpr *Call, ASTContext &Ctx,
                                             const std::string &CudaSpelling, const std::string &Marker) {
  std::vector<ASTEdit> Edits;
  if (calleeName(Call) == "cuda") {
    // `cuda()` -> `to(torch::kCUDA, /*non_blocking=*/true)`
    SourceLocation NameLoc = Call->getExprLoc();
    CharSourceRange Range = CharSourceRange::getTokenRange(NameLoc, Call->getRParenLoc());
    Edits.push_back(changeTo(charRange(Range), cat("to(", CudaSpelling, ", /*non_blocking=*/true)", Marker)));
    return Edits;
  }

  int Index = parameterIndex(Call, "non_blocking");
  unsigned Written = explicitArgCount(Call);
  if (Index >= 0 && static_cast<unsigned>(Index) == Written && Written > 0) {
    Edits.push_back(insertAfter(charRange(tokenRange(Call->getArg(Written - 1))),
                                cat(", /*non_blocking=*/true")));
  } else if (Index >= 0 && static_cast<unsigned>(Index) < Written &&
             isa<CXXBoolLiteralExpr>(ignoreWrappers(Call->getArg(Index)))) {
    // Keep an existing `/*non_blocking=*/` comment rather than doubling it.
    const SourceManager &SM = Ctx.getSourceManager();
    SourceLocation PreviousEnd = Lexer::getLocForEndOfToken(
        Call->getArg(Index - 1)->getEndLoc(), 0, SM, Ctx.getLangOpts());
    StringRef Between = Lexer::getSourceText(
        CharSourceRange::getCharRange(PreviousEnd, Call->getArg(Index)->getBeginLoc()), SM,
        Ctx.getLangOpts());
    Edits.push_back(changeTo(charRange(tokenRange(Call->getArg(Index))),
                             cat(Between.contains("non_blocking") ? "true" : "/*non_blocking=*/true")));
  }
  if (!Edits.empty() && !Marker.empty())
    Edits.push_back(insertAfter(
        charRange(CharSourceRange::getTokenRange(Call->getRParenLoc(), Call->getRParenLoc())), cat(Marker)));
  return Edits;
}

void HostToDeviceCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CXXMemberCallExpr>("call");
  const auto *Object = Result.Nodes.getNodeAs<Expr>("object");
  ASTContext &Ctx = *Result.Context;
  DeviceOracle &Oracle = oracle(Ctx);
  StringRef Method = calleeName(Call);
  if (passesNonBlocking(Call, Ctx))
    return;

  const Expr *Source = Object;
  Placement SourceAt = Oracle.tensorPlacement(Object);
  Placement TargetAt = Placement::Gpu;
  const Expr *DeviceArg = nullptr;
  std::string Spelled;
  if (Method == "cuda") {
    Spelled = "`cuda()`";
  } else if (Method == "to") {
    DeviceArg = targetDeviceArgument(Call, Oracle);
    if (!DeviceArg)
      return;
    TargetAt = *Oracle.devicePlacement(DeviceArg);
    // To another tensor's device (`x.to(y.options())`, mostly a dtype change):
    // as for `copy_` below, two tensors of unknown place are as likely on one
    // device; report only when one side is known.
    if (SourceAt == Placement::Unknown && TargetAt == Placement::Unknown &&
        DeviceOracle::deviceDonor(DeviceArg))
      return;
    Spelled = "`to(<GPU>)`";
  } else { // dst.copy_(src)
    if (Call->getNumArgs() < 1)
      return;
    Source = Call->getArg(0);
    SourceAt = Oracle.tensorPlacement(Source);
    TargetAt = Oracle.tensorPlacement(Object);
    // Two tensors of unknown place are as likely GPU-to-GPU: report only when
    // one side is known.
    if (SourceAt == Placement::Unknown && TargetAt == Placement::Unknown)
      return;
    Spelled = "`copy_()`";
  }
  if (!mayBeOnGpu(TargetAt) || !mayBeOnCpu(SourceAt) ||
      (SourceAt == Placement::Gpu && TargetAt == Placement::Gpu))
    return;
  // Moved again to the device it was made on (`m_x = zeros(..).to(*m_device)`,
  // later `zeros_like(m_x).to(*m_device)`): no copy, whichever device that is.
  if (SourceAt == Placement::Unknown && DeviceArg && Oracle.alreadyOnDevice(Source, DeviceArg))
    return;

  // Create-then-copy: a fill factory on the CPU followed by the move.
  if (const CallExpr *Factory = createThenCopyFactory(Call, DeviceArg, SourceAt)) {
    checkCreateThenCopy(Call, Factory, DeviceArg, Result);
    return;
  }

  Pinning SourceMemory = SourceAt == Placement::Cpu ? hostPinning(analysis(Ctx), Source) : Pinning::Unknown;
  std::optional<PinAtCreation> Pin;
  if (SourceMemory == Pinning::Pageable)
    Pin = pinAtCreation(analysis(Ctx), Source, Call, TargetAt == Placement::Gpu);

  UseClassifier &Classifier = classifier(Ctx);
  Finding F;
  F.What = Spelled + " " +
           (SourceAt == Placement::Cpu ? "copies a host tensor" : "may copy a host tensor") +
           " to the GPU and blocks the host until the copy is done";
  F.Use.Kind = Dependency::False;
  F.Use.Reason = "the host does not need to wait for a copy to the GPU";
  F.Use.LoopLine = Classifier.enclosingLoopLine(Call);
  F.Remedy = "pass `non_blocking=true`; " + std::string(PinnedNote);
  if (Pin)
    F.Remedy = "pass `non_blocking=true`; the source is pageable host memory, which keeps the "
               "copy synchronous, so pin " +
               (Pin->Container ? "the elements of `" + Pin->Variable + "` where they are stored"
                               : "`" + Pin->Variable + "` where it is made") +
               " (once, " + Pin->Where + "; " + (Pin->Container ? "they are" : "it is") + " only read)";
  else if (SourceMemory == Pinning::Pageable && !looksLikeLoaderBatch(Source))
    F.Remedy = "pass `non_blocking=true`; the source is pageable host memory, so a large copy "
               "stays synchronous until the source is pinned (`.pin_memory()` where it is made, "
               "or a pinned staging buffer reused across steps)";
  else if (looksLikeLoaderBatch(Source))
    F.Remedy += "; this is a loader batch, made anew every step: for the copy to overlap with "
                "compute, copy it into a pinned staging buffer allocated once and reused (wait on an "
                "event recorded after the copy before refilling it)";
  else
    F.Remedy += ", so pin sources that are large";

  if (sourceWrittenAfter(Source, Call, Ctx, F.Use.LoopLine)) {
    F.Remedy += "; no fix: the source is written after the copy, which would race with an "
                "asynchronous copy from pinned memory";
    report(Call->getExprLoc(), F);
    return;
  }

  // non_blocking only where the copy cannot go GPU -> host (issue 43, item 12):
  // `field.to(device)` with a field and a device of unknown place may be a copy
  // to the host, and an asynchronous one would be read before it is done. A
  // known GPU target, or a known host source (to the host it is no copy; a
  // LibTorch loader's batch is one), is safe, and so is a device that is the CPU
  // only where no GPU exists (`cuda::is_available() ? kCUDA : kCPU`).
  if (TargetAt != Placement::Gpu && SourceAt != Placement::Cpu && !looksLikeLoaderBatch(Source) &&
      !gpuWheneverOneExists(DeviceArg, Oracle)) {
    F.Remedy += "; no fix: neither the source is known to be on the host nor the target to "
                "be a GPU, and a copy from the GPU to the host with `non_blocking` could be read "
                "before it is done";
    report(Call->getExprLoc(), F);
    return;
  }
  if (std::string NoGain = noGainReason(Ctx, {Call}); !NoGain.empty()) {
    F.Remedy += "; no fix: " + NoGain;
    report(Call->getExprLoc(), F);
    return;
  }
  // A source the fix cannot pin keeps the copy staged through the driver:
  // torch-sync-pageable-copy would report the copy the fix just wrote, so the
  // edit carries the tool's marker (the user's own `/*non_blocking=*/true`
  // copies stay reported, issue 43 item 4).
  std::string Marker = !Pin && SourceMemory == Pinning::Pageable
                           ? insertedSyncMarker("non_blocking overlaps only from pinned memory")
                           : std::string();
  std::vector<ASTEdit> Edits = nonBlockingEdits(Call, Ctx, cudaDeviceSpelling(Ctx), Marker);
  if (!Edits.empty() && Pin)
    for (const PinEdit &Edit : Pin->Edits)
      Edits.push_back(changeTo(charRange(Edit.Range), cat(Edit.NewText)));
  std::optional<std::vector<FixItHint>> Fixes;
  if (!Edits.empty())
    Fixes = fixItsFor(Edits, Result);
  report(Call->getExprLoc(), F, Fixes ? *Fixes : std::vector<FixItHint>{});
}

/// Whether factory options may ask for a gradient: creating directly on the GPU
/// would then make a leaf where the original made a non-leaf copy.
static bool mayRequireGrad(const Expr *Options) {
  Options = ignoreWrappers(Options);
  if (const auto *Ref = dyn_cast<DeclRefExpr>(Options)) {
    const auto *VD = dyn_cast<VarDecl>(Ref->getDecl());
    if (!VD || isa<ParmVarDecl>(VD) || !VD->getInit() || !VD->getType().isConstQualified())
      return true; // unseen or reassignable options
    return mayRequireGrad(VD->getInit());
  }
  bool Found = false;
  std::function<void(const Stmt *)> Visit = [&](const Stmt *S) {
    if (!S || Found)
      return;
    if (const auto *Call = dyn_cast<CallExpr>(S))
      if (calleeName(Call) == "requires_grad")
        Found = true;
    if (const auto *Ref = dyn_cast<DeclRefExpr>(S))
      if (isa<VarDecl>(Ref->getDecl()) && !isDeviceType(Ref->getType()) &&
          isTensorOptionsType(Ref->getType()))
        Found = true;
    for (const Stmt *Child : S->children())
      Visit(Child);
  };
  Visit(Options);
  return Found;
}

void HostToDeviceCheck::checkCreateThenCopy(const CXXMemberCallExpr *Call,
                                            const CallExpr *Factory, const Expr *DeviceArg,
                                            const MatchFinder::MatchResult &Result) {
  ASTContext &Ctx = *Result.Context;
  const SourceManager &SM = Ctx.getSourceManager();
  const LangOptions &LO = Ctx.getLangOpts();
  std::string CudaSpelling = cudaDeviceSpelling(Ctx);
  std::string Prefix = namespacePrefix(CudaSpelling);
  std::string DeviceText =
      DeviceArg ? Lexer::getSourceText(tokenRange(plainDeviceArgument(DeviceArg)), SM, LO).str()
                : CudaSpelling;
  std::string FactoryName = calleeName(Factory).str();

  Finding F;
  F.What = "`" + FactoryName + "(...)." + (DeviceArg ? "to(...)" : "cuda()") +
           "` fills the tensor on the host, then copies it to the GPU and blocks the host";
  F.Use.Kind = Dependency::False;
  F.Use.Reason = "the values can be made on the GPU directly";
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Call);
  F.Remedy = "create it on the device: no copy at all";

  const FunctionDecl *FD = Factory->getDirectCallee();
  int OptionsIndex = -1;
  for (unsigned I = 0; I < FD->getNumParams(); ++I)
    if (isTensorOptionsType(FD->getParamDecl(I)->getType()))
      OptionsIndex = static_cast<int>(I);
  unsigned Written = explicitArgCount(Factory);
  std::vector<ASTEdit> Edits;
  if (OptionsIndex >= 0 && static_cast<unsigned>(OptionsIndex) == Written && Written > 0) {
    Edits.push_back(insertAfter(selectRange(tokenRange(Factory->getArg(Written - 1))),
                                cat(", " + Prefix + "device(" + DeviceText + ")")));
  } else if (OptionsIndex >= 0 && static_cast<unsigned>(OptionsIndex) < Written &&
             !mayRequireGrad(Factory->getArg(OptionsIndex))) {
    const Expr *Options = Factory->getArg(OptionsIndex);
    // What the user wrote: `torch::kFloat` rather than its implicit TensorOptions.
    const Expr *Spelled = Options->IgnoreImplicit();
    while (const auto *Converted = dyn_cast<CXXConstructExpr>(Spelled)) {
      if (isa<CXXTemporaryObjectExpr>(Converted) || Converted->getNumArgs() != 1)
        break;
      Spelled = Converted->getArg(0)->IgnoreImplicit();
    }
    std::string Text = Lexer::getSourceText(tokenRange(Spelled), SM, LO).str();
    std::string NewOptions;
    if (isTensorOptionsType(Spelled->getType())) {
      bool Postfix = isa<DeclRefExpr, CallExpr, ParenExpr, MemberExpr>(Spelled);
      NewOptions = (Postfix ? Text : "(" + Text + ")") + ".device(" + DeviceText + ")";
    } else {
      NewOptions = Prefix + "TensorOptions(" + Text + ").device(" + DeviceText + ")";
    }
    Edits.push_back(changeTo(selectRange(tokenRange(Spelled)), cat(NewOptions)));
  }
  std::optional<std::vector<FixItHint>> Fixes;
  if (!Edits.empty()) {
    // Remove `.to(...)` / `.cuda()`: from the end of the factory call to the end of the move.
    SourceLocation AfterFactory =
        Lexer::getLocForEndOfToken(Factory->getEndLoc(), 0, SM, LO);
    Edits.push_back(changeTo(
        selectRange(CharSourceRange::getCharRange(
            AfterFactory, Lexer::getLocForEndOfToken(Call->getEndLoc(), 0, SM, LO))),
        cat("")));
    Fixes = fixItsFor(Edits, Result);
  }
  report(Call->getExprLoc(), F, Fixes ? *Fixes : std::vector<FixItHint>{});
}

TORCH_SYNC_CHECK_FACTORY(HostToDeviceCheck)

} // namespace torch_syncfree
