#include "ApiFacts.h"
#include "CatalogChecks.h"
#include "CopyCalls.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/ParentMapContext.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

ExplicitSyncCheck::ExplicitSyncCheck(StringRef Name, tidy::ClangTidyContext *Context)
    : SyncCheck(Name, Context),
      ExtraFunctionsOption(Options.get("SynchronizeFunctions", "")) {
  for (StringRef Item : llvm::split(ExtraFunctionsOption, ';'))
    if (!Item.trim().empty())
      ExtraFunctions.push_back(Item.trim().str());
}

void ExplicitSyncCheck::storeOptions(tidy::ClangTidyOptions::OptionMap &Opts) {
  SyncCheck::storeOptions(Opts);
  Options.store(Opts, "SynchronizeFunctions", ExtraFunctionsOption);
}

void ExplicitSyncCheck::registerMatchers(MatchFinder *Finder) {
  if (!ExtraFunctions.empty())
    Finder->addMatcher(callExpr(callee(functionDecl(hasAnyName(std::vector<StringRef>(
                                    ExtraFunctions.begin(), ExtraFunctions.end())))),
                                matchers::userCode(hub()))
                           .bind("call"),
                       this);
  // LibTorch's synchronize functions and methods, and the CUDA runtime's waits.
  llvm::ArrayRef<StringRef> Torch = qualifiedNamesWithTrait(Synchronize);
  llvm::ArrayRef<StringRef> Runtime = qualifiedHostNamesWithTrait(RuntimeWait);
  std::vector<StringRef> Synchronizers(Torch.begin(), Torch.end());
  Synchronizers.insert(Synchronizers.end(), Runtime.begin(), Runtime.end());
  Finder->addMatcher(
      callExpr(callee(functionDecl(hasAnyName(Synchronizers))), matchers::userCode(hub())).bind("call"),
      this);
}

/// A function that releases a host buffer it is given, by its name and
/// signature: `stbi_image_free(void *)`, `release_buffer(T *)` (its body is
/// not in this TU).
static bool looksLikeReleaseFunction(const FunctionDecl *FD) {
  std::string Name = FD->getName().lower();
  if (Name.find("free") == std::string::npos && Name.find("release") == std::string::npos &&
      Name.find("dealloc") == std::string::npos)
    return false;
  return llvm::any_of(FD->parameters(),
                      [](const ParmVarDecl *P) { return P->getType()->isPointerType(); });
}

/// Calls that read a clock or free a host buffer: a synchronize next to one of
/// them is a deliberate barrier (timing, buffer lifetime). The program's own
/// wrappers count (`void free_image(unsigned char *p) { std::free(p); }`):
/// their bodies are searched, \p Depth calls deep.
static bool mentionsTimerOrRelease(const Stmt *S, unsigned Depth = 2) {
  if (!S)
    return false;
  if (const auto *Call = dyn_cast<CallExpr>(S)) {
    if (hasHostApiTrait(calleeName(Call), TimerOrRelease))
      return true;
    const FunctionDecl *FD = Call->getDirectCallee();
    if (FD && !FD->isInStdNamespace() && !isInTorchNamespace(FD)) {
      const FunctionDecl *Definition = nullptr;
      if (FD->hasBody(Definition) && Definition && Depth > 0) {
        if (mentionsTimerOrRelease(Definition->getBody(), Depth - 1))
          return true;
      } else if (!FD->hasBody() && looksLikeReleaseFunction(FD)) {
        return true;
      }
    }
  }
  if (isa<CXXDeleteExpr>(S))
    return true;
  for (const Stmt *Child : S->children())
    if (mentionsTimerOrRelease(Child, Depth))
      return true;
  return false;
}

/// Inside \p Body: an asynchronous copy (a LibTorch copy with non_blocking, or
/// cudaMemcpyAsync) and a host write that could touch its host side (copy_ or
/// fill_ into a CPU tensor, memcpy, std::copy). A synchronize in such a loop keeps
/// the buffer from being refilled while the copy still reads it.
static bool refillsAnAsyncCopyBuffer(const Stmt *Body, ASTContext &Ctx, DeviceOracle &Oracle) {
  bool AsyncCopy = false, HostWrite = false;
  std::function<void(const Stmt *)> Visit = [&](const Stmt *S) {
    if (!S || isa<LambdaExpr>(S))
      return;
    if (const auto *Call = dyn_cast<CallExpr>(S)) {
      StringRef Name = calleeName(Call);
      if (Name == "cudaMemcpyAsync" || Name == "cudaMemcpy2DAsync")
        AsyncCopy = true;
      if (const auto *Member = dyn_cast<CXXMemberCallExpr>(Call);
          Member && isTensorType(Member->getImplicitObjectArgument()->getType())) {
        if ((Name == "to" || Name == "copy_") && passesNonBlocking(Call, Ctx))
          AsyncCopy = true;
        if ((Name == "copy_" || Name == "fill_" || Name == "zero_") &&
            Oracle.tensorPlacement(Member->getImplicitObjectArgument()) == Placement::Cpu)
          HostWrite = true;
      }
      if (Name == "memcpy" || Name == "copy" || Name == "fill" || Name == "memset")
        HostWrite = true;
    }
    for (const Stmt *Child : S->children())
      Visit(Child);
  };
  Visit(Body);
  return AsyncCopy && HostWrite;
}

/// A neighbour that ends the program's use of the GPU: `return` from main, exit().
static bool isShutdown(const Stmt *S, ASTContext &Ctx) {
  if (const auto *Return = dyn_cast_or_null<ReturnStmt>(S)) {
    const FunctionDecl *FD = enclosingFunction(Ctx, Return); // null inside a lambda
    return FD && FD->isMain();
  }
  if (const auto *Call = dyn_cast_or_null<CallExpr>(S))
    return calleeName(Call) == "exit" || calleeName(Call) == "quick_exit";
  return false;
}

/// Functions whose effect on host memory the tool knows: LibTorch's (stream
/// ordered), the C++ library's, and the CUDA runtime's asynchronous ones.
static bool knownCallee(const FunctionDecl *FD) {
  if (FD->isInStdNamespace() || isInTorchNamespace(FD))
    return true;
  // C stdio, the CUDA runtime's stream-ordered calls, and its waits themselves
  // (stream-ordered, they leave no host access unordered).
  return (hostApiTraits(FD->getName()) & (StdioOutput | RuntimeStreamOrdered | RuntimeWait)) != 0;
}

/// What the host does after Call, in its function and in the rest of its loop
/// (which runs again), that may depend on the GPU's work: a phrase, or "" when
/// the tool sees nothing that does. Conservative (issue 43, item 1): a wait
/// before `std::memcpy` into a reused pinned staging buffer, or before the host
/// reads managed memory a kernel wrote, was called a false dependency and
/// "remove it" was a data race. Reads or writes through raw pointers, `memcpy`,
/// `data_ptr`/accessor reads, calls the tool cannot see and the return to
/// callers it does not see all count.
static std::string hostWorkAfter(const CallExpr *Call, ASTContext &Ctx, const Stmt *Loop) {
  const FunctionDecl *Function = enclosingCallable(Ctx, Call);
  const Stmt *Body = Function ? Function->getBody() : nullptr;
  if (!Body)
    return "code the tool cannot see";
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation After = SM.getExpansionLoc(Call->getEndLoc());
  auto RunsAfter = [&](const Stmt *S) {
    if (Loop && Loop->getSourceRange().fullyContains(S->getSourceRange()))
      return true;
    return SM.isBeforeInTranslationUnit(After, SM.getExpansionLoc(S->getBeginLoc()));
  };
  // The statement macro the wait is written in (`CHECK(cudaDeviceSynchronize())`,
  // `do { ... } while (0)`): what it does with the wait's status (abort, report)
  // is part of the wait, not host work that needs the GPU's results.
  const Stmt *OwnMacro = nullptr;
  for (DynTypedNode Node = firstParent(Ctx, DynTypedNode::create(*Call)); !Node.get<Decl>();
       Node = firstParent(Ctx, Node)) {
    const auto *S = Node.get<Stmt>();
    if (!S)
      break;
    if (const auto *Do = dyn_cast<DoStmt>(S))
      if (const auto *Never = dyn_cast<IntegerLiteral>(Do->getCond()->IgnoreParenImpCasts());
          Never && Never->getValue() == 0 && Do->getBeginLoc().isMacroID())
        OwnMacro = Do;
  }
  std::string Found;
  std::function<void(const Stmt *)> Visit = [&](const Stmt *S) {
    if (!S || !Found.empty() || S == Call || S == OwnMacro || isa<LambdaExpr>(S))
      return;
    if (const auto *E = dyn_cast<Expr>(S); E && RunsAfter(S)) {
      if (const auto *C = dyn_cast<CallExpr>(E)) {
        StringRef Name = calleeName(C);
        if (Name == "memcpy" || Name == "memmove" || Name == "memcmp" || Name == "copy" ||
            Name == "copy_n" || Name == "fwrite")
          Found = "`" + Name.str() + "` on host memory";
        else if (const auto *M = dyn_cast<CXXMemberCallExpr>(C);
                 M && isTensorType(M->getImplicitObjectArgument()->getType()) &&
                 (Name == "data_ptr" || Name == "data" || Name == "const_data_ptr" ||
                  Name == "mutable_data_ptr" || Name.starts_with("accessor") ||
                  Name.contains("packed_accessor")))
          Found = "a `" + Name.str() + "` read of a tensor's memory";
        else if (const FunctionDecl *FD = C->getDirectCallee();
                 FD && !FD->hasBody() && !knownCallee(FD) && !isa<CXXMethodDecl>(FD) &&
                 !FD->isNoReturn()) // abort, exit, a check's failure: they end, not read
          Found = "a call to `" + FD->getNameAsString() + "`, whose body the tool cannot see";
      } else if (const auto *U = dyn_cast<UnaryOperator>(E);
                 U && U->getOpcode() == UO_Deref && U->getSubExpr()->getType()->isPointerType() &&
                 !U->getSubExpr()->getType()->isFunctionPointerType()) {
        Found = "a read or write through a raw pointer";
      } else if (const auto *A = dyn_cast<ArraySubscriptExpr>(E);
                 A && A->getBase()->IgnoreImpCasts()->getType()->isPointerType()) {
        Found = "a read or write through a raw pointer";
      }
      if (!Found.empty())
        return;
    }
    for (const Stmt *Child : S->children())
      Visit(Child);
  };
  Visit(Body);
  if (Found.empty() && Function && !Function->isMain())
    Found = "the return to callers the tool does not see";
  return Found;
}

void ExplicitSyncCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Call = Result.Nodes.getNodeAs<CallExpr>("call");
  ASTContext &Ctx = *Result.Context;
  StringRef Name = calleeName(Call);
  // A device-to-host cudaMemcpy (or cudaMemcpyDefault) fills host memory:
  // whether the host needs the wait depends on how it uses what arrived.
  std::optional<UseVerdict> Filled;
  if (Name == "cudaMemcpy" && Call->getNumArgs() == 4) {
    // cudaMemcpyDeviceToDevice does not block the host for long; the others do.
    Expr::EvalResult Kind;
    bool KnownKind = Call->getArg(3)->EvaluateAsInt(Kind, Ctx);
    if (KnownKind && Kind.Val.getInt() == 3)
      return;
    if (KnownKind && (Kind.Val.getInt() == 2 || Kind.Val.getInt() == 4)) {
      const Expr *Destination = Call->getArg(0)->IgnoreParenCasts();
      const auto *Address = dyn_cast<UnaryOperator>(Destination);
      const auto *Ref = Address && Address->getOpcode() == UO_AddrOf
                            ? dyn_cast<DeclRefExpr>(Address->getSubExpr()->IgnoreParenImpCasts())
                            : nullptr;
      const auto *Var = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
      if (Var && Var->getType()->isScalarType())
        Filled = classifier(Ctx).classifyFilledVariable(Var, Call);
      else
      {
        Filled = UseVerdict();
        Filled->Kind = Dependency::True;
        Filled->Reason = "the host reads the copied memory";
      }
    }
  }
  // The statement holding the call and its neighbours in the same block.
  const Stmt *Statement = nullptr;
  const CompoundStmt *Block = enclosingBlock(Ctx, Call, &Statement);
  // A statement macro's body (`do { ... } while (0)`: C10_CUDA_CHECK,
  // AT_CUDA_CHECK) is one statement of the block around it.
  while (Block) {
    const auto *Macro = firstParent(Ctx, DynTypedNode::create(*Block)).get<DoStmt>();
    const auto *Never = Macro ? dyn_cast<IntegerLiteral>(Macro->getCond()->IgnoreParenImpCasts()) : nullptr;
    if (!Never || Never->getValue() != 0)
      break;
    Block = enclosingBlock(Ctx, Macro, &Statement);
  }
  bool Intentional = false;
  std::string Why = "it brackets a timer or the release of a buffer";
  if (Block) {
    const Stmt *const *Begin = Block->body_begin(), *const *End = Block->body_end();
    for (const Stmt *const *It = Begin; It != End; ++It)
      if (*It == Statement) {
        for (int Offset : {-2, -1, 1, 2})
          if (It + Offset >= Begin && It + Offset < End)
            Intentional |= mentionsTimerOrRelease(*(It + Offset));
        Intentional |= mentionsTimerOrRelease(Statement) && Statement != Call;
        for (int Offset : {1, 2})
          if (!Intentional && It + Offset < End && isShutdown(*(It + Offset), Ctx)) {
            Intentional = true;
            Why = "it comes right before the program ends";
          }
      }
  }
  // Memory an asynchronous copy reads: the wait keeps it from being refilled.
  if (!Intentional && !Filled)
    if (const Stmt *Loop = analysis(Ctx).enclosingLoop(Call);
        Loop && refillsAnAsyncCopyBuffer(Loop, Ctx, oracle(Ctx))) {
      Intentional = true;
      Why = "it keeps a host buffer that an asynchronous copy in this loop reads from being "
            "refilled before the copy is done";
    }
  // A false dependency only when nothing after it on the host may need the
  // GPU's work; otherwise the wait may protect memory (issue 43, item 1).
  std::string HostWork;
  if (!Intentional && !Filled) {
    HostWork = hostWorkAfter(Call, Ctx, analysis(Ctx).enclosingLoop(Call));
    if (!HostWork.empty()) {
      Intentional = true;
      Why = "the tool cannot show that nothing after it needs the GPU's work (" + HostWork + ")";
    }
  }
  Finding F;
  F.What = "`" + Name.str() + "` blocks the host until the GPU work it covers is done";
  F.Use.LoopLine = classifier(Ctx).enclosingLoopLine(Call);
  if (Filled) {
    unsigned LoopLine = F.Use.LoopLine;
    F.Use = *Filled;
    F.Use.LoopLine = LoopLine;
    F.Remedy = F.Use.Kind == Dependency::True
                   ? "if the host must decide (a size, a branch), keep the decision on the "
                     "device or read the value less often"
                   : "copy with `cudaMemcpyAsync` on the stream and read the value after the step";
  } else if (Intentional) {
    F.Use.Kind = Dependency::Intentional;
    F.Use.Reason = Why;
    if (!HostWork.empty())
      F.Remedy = "keep it unless that does not use the GPU's results; to wait for less, "
                 "record a CUDA event after the work that is needed and wait on that event";
    else if (Why.find("timer") != std::string::npos)
      F.Remedy = "for timing, CUDA events measure without stalling the host";
    else if (Why.find("ends") != std::string::npos)
      F.Remedy = "keep it: it waits once, at the end";
    else
      F.Remedy = "keep it; to overlap more, double-buffer (two staging buffers, each with its own event)";
  } else {
    F.Use.Kind = Dependency::False;
    F.Use.Reason = "nothing after it on the host reads or writes memory the GPU uses, and no "
                   "timer or host-buffer release next to it needs the GPU to be idle";
    F.Remedy = "remove it, or wait on an event for just the work that is needed";
  }
  if (Name == "synchronize" || Name == "cudaDeviceSynchronize")
    F.What += " (PyTorch's sync debug mode does not see this one)";
  report(Call->getBeginLoc(), F);
}

TORCH_SYNC_CHECK_FACTORY(ExplicitSyncCheck)

} // namespace torch_syncfree
