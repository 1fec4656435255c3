// What the engine's unit tests share: a TU parsed against the mock LibTorch
// headers, and the arguments of its `probe(...)` calls (the expressions under
// test), in source order.
#ifndef TORCH_SYNCFREE_TEST_UNIT_MOCKPARSE_H
#define TORCH_SYNCFREE_TEST_UNIT_MOCKPARSE_H

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Tooling.h"
#include <memory>
#include <vector>

namespace torch_syncfree {

inline std::unique_ptr<clang::ASTUnit> parseWithMockTorch(llvm::StringRef Prelude, llvm::StringRef Body) {
  return clang::tooling::buildASTFromCodeWithArgs(
      (Prelude + Body).str(), {"-std=c++17", "-isystem", TORCH_SYNCFREE_MOCK_INCLUDE}, "input.cpp");
}

inline bool parsedCleanly(const std::unique_ptr<clang::ASTUnit> &AST) {
  return AST && !AST->getDiagnostics().hasErrorOccurred();
}

inline std::vector<const clang::Expr *> probeArguments(clang::ASTContext &Ctx) {
  struct Finder : clang::RecursiveASTVisitor<Finder> {
    std::vector<const clang::Expr *> Found;
    bool VisitCallExpr(clang::CallExpr *Call) {
      const clang::FunctionDecl *FD = Call->getDirectCallee();
      if (FD && FD->getDeclName().isIdentifier() && FD->getName() == "probe" && Call->getNumArgs() == 1)
        Found.push_back(Call->getArg(0)->IgnoreImpCasts());
      return true;
    }
  } F;
  F.TraverseAST(Ctx);
  return F.Found;
}

} // namespace torch_syncfree

#endif
