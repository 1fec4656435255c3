// torch-sync-graph-capture: a sync between `graph.capture_begin()` and
// `graph.capture_end()` of an at::cuda::CUDAGraph breaks the capture at run time
// (synchronising a capturing stream is an error), so it is an error-level finding,
// also when the sync is inside a function of this TU called during the capture.
#include "CatalogChecks.h"
#include "FindingFacts.h"
#include "SyncCalls.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/ParentMapContext.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

void GraphCaptureCheck::registerMatchers(MatchFinder *Finder) {
  Finder->addMatcher(
      cxxMemberCallExpr(callee(cxxMethodDecl(hasName("capture_begin"),
                                             ofClass(hasName("CUDAGraph")))),
                        matchers::userCode(hub()))
          .bind("begin"),
      this);
}

/// Every sync call under S, following calls into functions defined in this TU
/// (and lambdas: inside a capture whatever runs is captured).
static void collectSyncs(TranslationUnitAnalysis &TU, const Stmt *S,
                         std::vector<std::pair<const CallExpr *, const FunctionDecl *>> &Out,
                         llvm::SmallPtrSetImpl<const FunctionDecl *> &Visited, const FunctionDecl *Via) {
  if (!S)
    return;
  for (const TranslationUnitAnalysis::CallSite &Site : TU.callSitesUnder(*S)) {
    // Inside a capture every tensor is on the capturing device: any catalog sync counts.
    if (Site.Sync) {
      Out.push_back({Site.Call, Via});
      continue;
    }
    if (const FunctionDecl *Callee = Site.Call->getDirectCallee())
      if (const FunctionDecl *Definition = Callee->getDefinition())
        if (!isInTorchNamespace(Definition) && Definition->getBody() &&
            !Definition->getASTContext().getSourceManager().isInSystemHeader(Definition->getLocation()) &&
            Visited.insert(Definition).second)
          collectSyncs(TU, Definition->getBody(), Out, Visited, Via ? Via : Definition);
  }
}

void GraphCaptureCheck::check(const MatchFinder::MatchResult &Result) {
  const auto *Begin = Result.Nodes.getNodeAs<CXXMemberCallExpr>("begin");
  ASTContext &Ctx = *Result.Context;
  const auto *Graph = dyn_cast_or_null<DeclRefExpr>(ignoreWrappers(Begin->getImplicitObjectArgument()));
  // The statement holding capture_begin, in its block; the capture runs until a
  // later statement of the block calls capture_end on the same graph.
  const Stmt *Statement = nullptr;
  const CompoundStmt *Block = enclosingBlock(Ctx, Begin, &Statement);
  if (!Block || !Statement)
    return;
  auto EndsCapture = [&](const Stmt *S) {
    bool Ends = false;
    std::function<void(const Stmt *)> Visit = [&](const Stmt *Node) {
      if (!Node || Ends)
        return;
      if (const auto *Call = dyn_cast<CXXMemberCallExpr>(Node))
        if (calleeName(Call) == "capture_end") {
          const auto *Object = dyn_cast_or_null<DeclRefExpr>(ignoreWrappers(Call->getImplicitObjectArgument()));
          Ends = !Graph || (Object && Object->getDecl() == Graph->getDecl());
        }
      for (const Stmt *Child : Node->children())
        Visit(Child);
    };
    Visit(S);
    return Ends;
  };
  bool Inside = false;
  llvm::SmallPtrSet<const FunctionDecl *, 8> Visited;
  for (const Stmt *S : Block->body()) {
    if (S == Statement) {
      Inside = true;
      continue;
    }
    if (!Inside)
      continue;
    if (EndsCapture(S))
      break;
    std::vector<std::pair<const CallExpr *, const FunctionDecl *>> Syncs;
    collectSyncs(analysis(Ctx), S, Syncs, Visited, nullptr);
    for (const auto &[Call, Via] : Syncs) {
      std::string Message =
          "`" + calleeName(Call).str() +
          "` makes the host wait inside CUDA graph capture, which breaks the capture at run "
          "time; move it out of the captured region or keep the value on the device";
      // Each builder is emitted at the end of its statement: the error first, so the
      // note attaches to it.
      // A true dependency: the captured graph cannot replay a host wait.
      attachFacts(diag(Call->getBeginLoc(), "%0", DiagnosticIDs::Error) << Message,
                  FindingFacts{Dependency::True, 0});
      if (Via)
        diag(Begin->getBeginLoc(), "captured through a call to `%0` here", DiagnosticIDs::Note)
            << Via->getNameAsString();
    }
  }
}

TORCH_SYNC_CHECK_FACTORY(GraphCaptureCheck)

} // namespace torch_syncfree
