// Device guards: what a test the program makes says about where a tensor or a
// device lives. Code that tests `t.is_cuda()`, `t.device().is_cpu()`,
// `d.type() == torch::kCPU` or `t.get_device() < 0` before using `t` runs the
// use only with the answer the test gave: `if (t.is_cuda()) {..} else {
// t.item(); }`, `TORCH_CHECK(!t.is_cuda(), ..); t.item();`, `if (!t.is_cpu())
// return ..; t.item();` read a CPU tensor. A test holds at a use when the use
// is in the branch it selects (an if, a ?:, the right side of && or ||, a loop
// body) or after a statement that leaves unless it passes (an if whose branch
// returns, throws or calls a noreturn function: TORCH_CHECK and
// TORCH_INTERNAL_ASSERT expand to one), and the value-flow core shows no
// definition of the variable between the test and the use.
//
// Written here rather than on clang's dataflow framework: the facts are about
// one variable's placement at one read, the guards are structured (no goto),
// and the reaching-definitions core already says where the variable changes.
#ifndef TORCH_SYNCFREE_ANALYSIS_DEVICEGUARDS_H
#define TORCH_SYNCFREE_ANALYSIS_DEVICEGUARDS_H

#include "analysis/ValueFlow.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace torch_syncfree {

/// The device tests of one translation unit. Memoises, per block, the
/// statements in it that leave unless their test fails, so that a use far
/// down a long block costs the tests before it, not the statements.
class DeviceGuards {
public:
  explicit DeviceGuards(clang::ASTContext &Ctx) : Ctx(Ctx) {}

  /// Whether a device test before \p Use proves that \p Var (a tensor, a
  /// torch::Device or a DeviceType variable of \p Flow's function) is on the
  /// CPU there. Only CPU and CUDA are told apart: a tensor that is not on
  /// CUDA counts as on the CPU.
  bool onCpu(const FunctionValueFlow &Flow, const clang::VarDecl *Var, const clang::DeclRefExpr *Use);

private:
  /// A statement of a block that leaves unless its condition is false.
  struct ExitTest {
    const clang::Stmt *Statement;
    const clang::Expr *Condition;
  };
  llvm::ArrayRef<ExitTest> exitTests(const clang::CompoundStmt *Block);

  clang::ASTContext &Ctx;
  llvm::DenseMap<const clang::CompoundStmt *, llvm::SmallVector<ExitTest, 2>> ExitTestsOf;
};

} // namespace torch_syncfree

#endif
