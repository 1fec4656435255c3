#include "DeviceToHostCheck.h"
#include "ApiFacts.h"
#include "CopyCalls.h"
#include "TorchApi.h"
#include "analysis/ValueFlow.h"
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

namespace {
/// A host loop over a copied mask that only writes the rows it selects.
struct MaskedRowWrites {
  std::string Mask;   ///< the copied expression, as spelled: `(bag_len == 0)`
  std::string Target; ///< the written tensor: `out`
  std::string Value;  ///< what a row is set to, as spelled (`default_row`; "0" for zero_())
  bool Fill = false;  ///< `fill_`/`zero_` (a scalar), not `copy_`/`=`
  unsigned LoopLine = 0;
};
} // namespace

/// `auto m_h = mask.cpu(); [auto m = m_h.accessor<bool, 1>();] for (b ..) { if (m[b])
/// out[b].copy_(v); }`: every read of the copy decides an `if` whose only
/// statement writes a row of a tensor (`copy_`, `fill_`, `zero_`, `= v`) in a
/// loop that does nothing else. `torch::where` on the device gives the same rows
/// with no copy (issue 41's host loops over a copied mask).
static std::optional<MaskedRowWrites> maskedRowWrites(TranslationUnitAnalysis &TU,
                                                      const CXXMemberCallExpr *Copy) {
  ASTContext &Ctx = TU.context();
  const VarDecl *Host = initialisedVariable(Ctx, Copy);
  const auto *FD = Host ? dyn_cast_or_null<FunctionDecl>(Host->getParentFunctionOrMethod()) : nullptr;
  if (!Host || !FD || !FD->getBody() || Copy->getBeginLoc().isMacroID())
    return std::nullopt;
  // The variables the mask is read through: the copy, and accessors of it.
  std::vector<const VarDecl *> Readers{Host};
  std::vector<const DeclRefExpr *> Reads;
  for (size_t I = 0; I < Readers.size(); ++I)
    for (const DeclRefExpr *Ref : TU.referencesTo(*FD->getBody(), Readers[I])) {
      DynTypedNode Parent = ancestorSkipping<ImplicitCastExpr, ParenExpr>(Ctx, Ref);
      if (const auto *Member = Parent.get<MemberExpr>(); Member && I == 0) {
        const auto *Call =
            ancestorSkipping<ImplicitCastExpr, ParenExpr>(Ctx, Member).get<CXXMemberCallExpr>();
        const VarDecl *Accessor = Call ? initialisedVariable(Ctx, Call) : nullptr;
        if (!Accessor || calleeName(Call) != "accessor")
          return std::nullopt;
        Readers.push_back(Accessor);
        continue;
      }
      Reads.push_back(Ref);
    }
  std::optional<MaskedRowWrites> Found;
  for (const DeclRefExpr *Ref : Reads) {
    // `m[b]` deciding an `if` with one statement, alone in a loop's body.
    const auto *Subscript =
        ancestorSkipping<ImplicitCastExpr, ParenExpr>(Ctx, Ref).get<CXXOperatorCallExpr>();
    if (!Subscript || Subscript->getOperator() != OO_Subscript)
      return std::nullopt;
    const Expr *Condition = Subscript;
    DynTypedNode Up = ancestorSkipping<ImplicitCastExpr, ParenExpr, MaterializeTemporaryExpr,
                                       CXXBindTemporaryExpr, ExprWithCleanups>(Ctx, Subscript);
    // `m_h[b].item<bool>()` of the copied tensor itself.
    if (const auto *Member = Up.get<MemberExpr>()) {
      const auto *Item = ancestorSkipping<ImplicitCastExpr, ParenExpr>(Ctx, Member).get<CXXMemberCallExpr>();
      if (!Item || calleeName(Item) != "item")
        return std::nullopt;
      Condition = Item;
      Up = ancestorSkipping<ImplicitCastExpr, ParenExpr, ExprWithCleanups>(Ctx, Item);
    }
    const auto *If = Up.get<IfStmt>();
    if (!If || If->getCond()->IgnoreImplicit()->IgnoreParens() != Condition || If->getElse() ||
        If->getInit() || If->getConditionVariable())
      return std::nullopt;
    const Stmt *Then = If->getThen();
    if (const auto *Block = dyn_cast<CompoundStmt>(Then); Block && Block->size() == 1)
      Then = Block->body_front();
    if (const auto *Statement = dyn_cast<Expr>(Then))
      Then = Statement->IgnoreImplicit();
    const Stmt *Loop = TU.enclosingLoop(If);
    const Stmt *Body = Loop ? loopBody(Loop) : nullptr;
    const auto *BodyBlock = dyn_cast_or_null<CompoundStmt>(Body);
    if (!Body || !(Body == If || (BodyBlock && BodyBlock->size() == 1 && BodyBlock->body_front() == If)))
      return std::nullopt;
    // The write: `t[i].copy_(v)`, `.fill_(v)`, `.zero_()`, or `t[i] = v`.
    const Expr *Row = nullptr, *Value = nullptr;
    bool Fill = false;
    if (const auto *Write = dyn_cast<CXXMemberCallExpr>(Then);
        Write &&
        llvm::is_contained({StringRef("copy_"), StringRef("fill_"), StringRef("zero_")}, calleeName(Write))) {
      Row = Write->getImplicitObjectArgument();
      Fill = calleeName(Write) != "copy_";
      Value = Write->getNumArgs() ? Write->getArg(0) : nullptr;
    } else if (const auto *Assign = dyn_cast<CXXOperatorCallExpr>(Then);
               Assign && Assign->getOperator() == OO_Equal && Assign->getNumArgs() == 2) {
      Row = Assign->getArg(0);
      Value = Assign->getArg(1);
      Fill = !isTensorType(Value->IgnoreImplicit()->getType());
    }
    const auto *RowOp =
        dyn_cast_or_null<CXXOperatorCallExpr>(Row ? Row->IgnoreImplicit()->IgnoreParens() : nullptr);
    const auto *Target = RowOp && RowOp->getOperator() == OO_Subscript && RowOp->getNumArgs() == 2
                             ? dyn_cast<DeclRefExpr>(ignoreWrappers(RowOp->getArg(0)))
                             : nullptr;
    if (!Target || !isTensorType(Target->getType()))
      return std::nullopt;
    MaskedRowWrites This;
    This.Mask = spelledText(Ctx, Copy->getImplicitObjectArgument());
    This.Target = Target->getDecl()->getNameAsString();
    This.Fill = Fill;
    This.Value = Value ? spelledText(Ctx, Value->IgnoreImplicit()) : "0";
    if (This.Value.empty())
      return std::nullopt;
    This.LoopLine = Ctx.getSourceManager().getExpansionLineNumber(Loop->getBeginLoc());
    if (This.Mask.empty() || (Found && (Found->Target != This.Target || Found->LoopLine != This.LoopLine)))
      return std::nullopt;
    Found = This;
  }
  return Found;
}

namespace {
/// A function this one passes the copied tensor to, which copies it to the host too.
struct CopiedByCallee {
  std::string Callee;
  unsigned CallLine = 0, CopyLine = 0;
};
} // namespace

/// `auto h = t.cpu(); ... helper(t);` where `helper(const Tensor &p)` copies
/// `p.cpu()` too (issue 41, "a caller and its callee each copying the same
/// tensor"): the same tensor object (the value-flow core: one definition of
/// `t` reaches both, or a parameter never reassigned), a callee whose body
/// this unit has. A remedy: the callee's interface changes.
static std::optional<CopiedByCallee> copiedByCallee(TranslationUnitAnalysis &TU, DeviceOracle &Oracle,
                                                    const CXXMemberCallExpr *Copy) {
  ASTContext &Ctx = TU.context();
  const SourceManager &SM = Ctx.getSourceManager();
  const auto *Copied = dyn_cast_or_null<DeclRefExpr>(ignoreWrappers(Copy->getImplicitObjectArgument()));
  const auto *Tensor = Copied ? dyn_cast<VarDecl>(Copied->getDecl()) : nullptr;
  const FunctionDecl *FD = Tensor ? enclosingFunction(Ctx, Copy) : nullptr;
  const FunctionValueFlow *Flow = FD ? TU.valueFlow(FD) : nullptr;
  if (!Flow || !FD->getBody())
    return std::nullopt;
  bool NeverAssigned = isa<ParmVarDecl>(Tensor) && llvm::none_of(Flow->definitions(), [&](const auto &D) {
                         return D.Variable == Tensor;
                       });
  for (const TranslationUnitAnalysis::CallSite &Site : TU.callSitesUnder(*FD->getBody())) {
    const CallExpr *Call = Site.Call;
    if (Site.InLambda || Call == Copy)
      continue;
    const FunctionDecl *Callee = Call->getDirectCallee();
    const FunctionDecl *Definition = nullptr;
    if (!Callee || !Callee->hasBody(Definition) || !Definition || isInTorchNamespace(Definition) ||
        Definition->isInStdNamespace() || SM.isInSystemHeader(Definition->getLocation()) || Definition == FD)
      continue;
    unsigned Offset = isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(Definition) ? 1 : 0;
    for (unsigned I = 0; I < Definition->getNumParams() && I + Offset < Call->getNumArgs(); ++I) {
      const auto *Arg = dyn_cast<DeclRefExpr>(ignoreWrappers(Call->getArg(I + Offset)));
      const ParmVarDecl *Param = Definition->getParamDecl(I);
      if (!Arg || Arg->getDecl() != Tensor || !isTensorType(Param->getType()) ||
          !(NeverAssigned || Flow->sameDefinition(Copied, Arg)))
        continue;
      // The callee's own copy of that parameter.
      for (const TranslationUnitAnalysis::CallSite &Inner : TU.callSitesUnder(*Definition->getBody())) {
        const auto *InnerCopy = dyn_cast<CXXMemberCallExpr>(Inner.Call);
        const auto *Of = InnerCopy
                             ? dyn_cast<DeclRefExpr>(ignoreWrappers(InnerCopy->getImplicitObjectArgument()))
                             : nullptr;
        if (Inner.InLambda || !Of || Of->getDecl() != Param ||
            !(calleeName(InnerCopy) == "cpu" || isBlockingCopyToHost(InnerCopy, Oracle, Ctx)))
          continue;
        CopiedByCallee Found;
        Found.Callee = Definition->getNameAsString();
        Found.CallLine = SM.getExpansionLineNumber(Call->getBeginLoc());
        Found.CopyLine = SM.getExpansionLineNumber(InnerCopy->getExprLoc());
        return Found;
      }
    }
  }
  return std::nullopt;
}

/// Whether \p Record is a LibTorch optimizer (derives from torch::optim::Optimizer).
static bool isOptimizer(const CXXRecordDecl *Record) {
  if (!Record || !Record->hasDefinition())
    return false;
  if (Record->getQualifiedNameAsString() == "torch::optim::Optimizer")
    return true;
  return llvm::any_of(Record->bases(), [](const CXXBaseSpecifier &Base) {
    return isOptimizer(Base.getType()->getAsCXXRecordDecl());
  });
}

/// Whether the options an SGD is built with leave momentum at 0 (then it keeps
/// no state tensors): a learning rate (`SGD(params, lr)`), or `SGDOptions(lr)`
/// whose chained setters do not set a non-zero momentum. False when unknown
/// (options from a variable, a forwarding call).
static bool sgdOptionsWithoutMomentum(const Expr *Options, ASTContext &Ctx) {
  Options = ignoreWrappers(Options);
  if (!Options)
    return false;
  if (Options->getType()->isRealFloatingType() || Options->getType()->isIntegerType())
    return true; // the learning rate, converted to SGDOptions
  if (const auto *Setter = dyn_cast<CXXMemberCallExpr>(Options)) {
    StringRef Name = calleeName(Setter);
    if (Name == "momentum") {
      llvm::APFloat Momentum(0.0);
      if (Setter->getNumArgs() != 1 || Setter->getArg(0)->isValueDependent() ||
          !Setter->getArg(0)->EvaluateAsFloat(Momentum, Ctx) || !Momentum.isZero())
        return false;
    }
    return sgdOptionsWithoutMomentum(Setter->getImplicitObjectArgument(), Ctx);
  }
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(Options)) {
    const CXXRecordDecl *Record = Construct->getConstructor()->getParent();
    if (Record->getName() != "SGDOptions")
      return Construct->getNumArgs() == 1 && sgdOptionsWithoutMomentum(Construct->getArg(0), Ctx);
    return llvm::all_of(Construct->arguments(), [](const Expr *Argument) {
      return Argument->getType()->isRealFloatingType() || Argument->getType()->isIntegerType();
    });
  }
  return false;
}

/// Whether every `torch::optim::SGD` the unit builds (at least one) keeps no
/// state: momentum 0 (SGD's step makes a momentum buffer only otherwise).
static bool everySgdWithoutMomentum(ASTContext &Ctx) {
  auto Builds =
      match(traverse(TK_AsIs,
                     findAll(cxxConstructExpr(hasType(hasUnqualifiedDesugaredType(recordType(hasDeclaration(
                                                  cxxRecordDecl(hasName("::torch::optim::SGD")))))))
                                 .bind("build"))),
            Ctx);
  if (Builds.empty())
    return false;
  return llvm::all_of(Builds, [&](const BoundNodes &Nodes) {
    const auto *Build = Nodes.getNodeAs<CXXConstructExpr>("build");
    // A copy or move of an optimizer, or one built inside std::make_shared
    // from forwarded arguments, says nothing about the options: unknown.
    return Build->getNumArgs() == 2 && sgdOptionsWithoutMomentum(Build->getArg(1), Ctx);
  });
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
  // A standard container holds tensors; an optimizer its state (moments,
  // momentum buffers; not the parameters); anything else torch::save takes is
  // a module.
  const CXXRecordDecl *Record = Saved->getType()->getAsCXXRecordDecl();
  bool Optimizer = !Tensor && isOptimizer(Record);
  // An SGD without momentum keeps no state: its save copies no tensor.
  if (Optimizer && Record->getQualifiedNameAsString() == "torch::optim::SGD" && everySgdWithoutMomentum(Ctx))
    return;
  bool Module = !Tensor && !Optimizer &&
                !(Record && Record->isInStdNamespace() && Record->getDeclName().isIdentifier() &&
                  hasHostApiTrait(Record->getName(), HostContainer));
  Finding F;
  F.Subject = Where == Placement::Unknown ? Saved : nullptr;
  F.What = "`torch::save` of " +
           (Tensor      ? tensorPhrase(Where)
            : Optimizer ? std::string("an optimizer whose state ") +
                              (Where == Placement::Gpu ? "is on the GPU" : "may be on the GPU")
                        : std::string(Module ? "a module" : "tensors") +
                              (Where == Placement::Gpu ? " on the GPU" : " that may be on the GPU")) +
           " copies " +
           (Tensor      ? "it"
            : Optimizer ? "every state tensor"
            : Module    ? "every parameter and buffer"
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
  F.Subject = Where == Placement::Unknown ? Object : nullptr;
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
  if (F.Use.Kind != Dependency::Intentional && !F.Use.IntervalLine)
    if (std::optional<MaskedRowWrites> Rows = maskedRowWrites(analysis(Ctx), Call)) {
      // The mask is reshaped to broadcast over the rows (`.unsqueeze(1)` for a
      // matrix): said, since the tool does not know the rank.
      std::string Mask = "<" + Rows->Mask + " reshaped to broadcast over the rows>";
      F.Remedy = "the host loop at line " + std::to_string(Rows->LoopLine) + " only writes the rows of `" +
                 Rows->Target + "` that `" + Rows->Mask + "` selects: on the device, `" +
                 (Rows->Fill ? Rows->Target + ".masked_fill_(" + Mask + ", " + Rows->Value + ")"
                             : Rows->Target + ".copy_(torch::where(" + Mask + ", " + Rows->Value + ", " +
                                   Rows->Target + "))") +
                 "` writes the same rows with no copy and no wait (`.unsqueeze(1)` for a matrix)";
      report(Call->getExprLoc(), F);
      return;
    }
  if (F.Use.Kind != Dependency::Intentional && !F.Use.IntervalLine)
    if (std::optional<CopiedByCallee> Twice = copiedByCallee(analysis(Ctx), Oracle, Call)) {
      F.Remedy += "; `" + Twice->Callee + "` (called at line " + std::to_string(Twice->CallLine) +
                  ") copies the same tensor to the host again (line " + std::to_string(Twice->CopyLine) +
                  "): give it this copy (a host-tensor parameter) and one wait per call goes";
      report(Call->getExprLoc(), F);
      return;
    }
  // A row of an invariant tensor copied every iteration (NMS-style greedy
  // loops): one copy of the whole before the loop; a remedy, not a fix.
  if (F.Use.Kind != Dependency::Intentional && !F.Use.IntervalLine)
    if (std::optional<InvariantRowCopy> Rows = invariantRowCopy(analysis(Ctx), Call)) {
      F.Remedy = "row `" + Rows->Index + "` of `" + Rows->Tensor + "` is copied every iteration, and `" +
                 Rows->Tensor + "` does not change in the loop at line " + std::to_string(Rows->LoopLine) +
                 ": copy `" + Rows->WholeCopy + "` to the host once before the loop and read its row `" +
                 Rows->Index +
                 "` there (one wait per call instead of one per iteration; the copy moves every row)";
      if (!Rows->NotProven.empty())
        F.Remedy += "; not proven: " + Rows->NotProven;
    }
  report(Call->getExprLoc(), F);
}

TORCH_SYNC_CHECK_FACTORY(DeviceToHostCheck)

} // namespace torch_syncfree
