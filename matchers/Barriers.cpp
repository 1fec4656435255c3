#include "Barriers.h"

#include "ApiFacts.h"
#include "CopyCalls.h"
#include "DeviceInference.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"

using namespace clang;

namespace torch_syncfree {

/// A function that releases a host buffer it is given, by its name and
/// signature: `stbi_image_free(void *)`, `release_buffer(T *)` (its body is
/// not in this TU).
static bool looksLikeReleaseFunction(const FunctionDecl *FD) {
  std::string Name = FD->getName().lower();
  if (Name.find("free") == std::string::npos && Name.find("release") == std::string::npos &&
      Name.find("dealloc") == std::string::npos)
    return false;
  return llvm::any_of(FD->parameters(), [](const ParmVarDecl *P) { return P->getType()->isPointerType(); });
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
  return (hostApiTraits(FD->getName()) & (StdioOutput | RuntimeStreamOrdered | RuntimeWait | RuntimeQuery)) !=
         0;
}

/// What the host does after Call, in its function and in the rest of its loop
/// (which runs again), that may depend on the GPU's work: a phrase, or "" when
/// the tool sees nothing that does. Conservative (issue 43, item 1): a wait
/// before `std::memcpy` into a reused pinned staging buffer, or before the host
/// reads managed memory a kernel wrote, was called a false dependency and
/// "remove it" was a data race. Reads or writes through raw pointers, `memcpy`,
/// `data_ptr`/accessor reads, calls the tool cannot see and the return to
/// callers it does not see all count.
static std::string hostWorkAfter(const Stmt *Site, ASTContext &Ctx, const Stmt *Loop) {
  const FunctionDecl *Function = enclosingCallable(Ctx, Site);
  const Stmt *Body = Function ? Function->getBody() : nullptr;
  if (!Body)
    return "code the tool cannot see";
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation After = SM.getExpansionLoc(Site->getEndLoc());
  auto RunsAfter = [&](const Stmt *S) {
    if (Loop && Loop->getSourceRange().fullyContains(S->getSourceRange()))
      return true;
    return SM.isBeforeInTranslationUnit(After, SM.getExpansionLoc(S->getBeginLoc()));
  };
  // The statement macro the wait is written in (`CHECK(cudaDeviceSynchronize())`,
  // `do { ... } while (0)`): what it does with the wait's status (abort, report)
  // is part of the wait, not host work that needs the GPU's results.
  const Stmt *OwnMacro = nullptr;
  for (DynTypedNode Node = firstParent(Ctx, DynTypedNode::create(*Site)); !Node.get<Decl>();
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
    if (!S || !Found.empty() || S == Site || S == OwnMacro || isa<LambdaExpr>(S))
      return;
    if (const auto *E = dyn_cast<Expr>(S); E && RunsAfter(S)) {
      if (const auto *C = dyn_cast<CallExpr>(E)) {
        StringRef Name = calleeName(C);
        if (Name == "memcpy" || Name == "memmove" || Name == "memcmp" || Name == "copy" || Name == "copy_n" ||
            Name == "fwrite")
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

/// Why a wait at \p Site (a synchronize call, or a loop that polls a query) is
/// an intentional barrier, or "" when the tool sees no reason (a false
/// dependency). \p HostWork receives what after it may need the GPU's work.
std::string barrierReason(const Stmt *Site, TranslationUnitAnalysis &TU, std::string &HostWork) {
  ASTContext &Ctx = TU.context();
  // The statement holding the site and its neighbours in the same block.
  const Stmt *Statement = nullptr;
  const CompoundStmt *Block = enclosingBlock(Ctx, Site, &Statement);
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
        Intentional |= mentionsTimerOrRelease(Statement) && Statement != Site;
        for (int Offset : {1, 2})
          if (!Intentional && It + Offset < End && isShutdown(*(It + Offset), Ctx)) {
            Intentional = true;
            Why = "it comes right before the program ends";
          }
      }
  }
  if (Intentional)
    return Why;
  // Memory an asynchronous copy reads: the wait keeps it from being refilled.
  const Stmt *Loop = TU.enclosingLoop(Site);
  if (Loop && refillsAnAsyncCopyBuffer(Loop, Ctx, TU.oracle()))
    return "it keeps a host buffer that an asynchronous copy in this loop reads from being "
           "refilled before the copy is done";
  // A false dependency only when nothing after it on the host may need the
  // GPU's work; otherwise the wait may protect memory (issue 43, item 1).
  HostWork = hostWorkAfter(Site, Ctx, Loop);
  if (!HostWork.empty())
    return "the tool cannot show that nothing after it needs the GPU's work (" + HostWork + ")";
  return "";
}

} // namespace torch_syncfree
