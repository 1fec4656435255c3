//===- HoistInvariantCopy.h - one host copy before the loop -----*- C++ -*-===//
//
// Issue 41's first restructuring of a true dependency: a host copy made in
// every iteration of a tensor the loop does not change (`auto host =
// lengths.cpu();`) gives the same values when made once before the loop: one
// wait per call instead of one per iteration. Built on the value-flow core
// (loop invariance) and the TU's call-site index (what the loop writes).
//
//===----------------------------------------------------------------------===//
#ifndef TORCH_SYNCFREE_FIXES_HOISTINVARIANTCOPY_H
#define TORCH_SYNCFREE_FIXES_HOISTINVARIANTCOPY_H

#include "TranslationUnitAnalysis.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Tooling/Transformer/RewriteRule.h"
#include <optional>
#include <string>
#include <vector>

namespace torch_syncfree {

struct InvariantCopy {
  std::string Tensor;      ///< the copied variable, as spelled (`lengths`)
  std::string Variable;    ///< the host copy's variable (`host`)
  std::string Declaration; ///< the declaration as written (`auto host = lengths.cpu();`)
  const clang::Stmt *Loop = nullptr;
  unsigned LoopLine = 0;
  /// Why moving the declaration is not proven to keep behaviour (empty: it
  /// is, and Edits move it).
  std::string NotProven;
  /// Remove the declaration from the loop; insert it, marked as the tool's own
  /// read, before the loop.
  std::vector<clang::transformer::ASTEdit> Edits;
};

/// The loop-invariant host copy \p Copy (a blocking copy to the host, `cpu()` or
/// `to(<CPU>)`) is, if any: the initialiser of a variable declared directly in
/// the body of the innermost loop around it, copying a variable whose every
/// definition reaching the copy is made outside the loop. nullopt for any other
/// shape. The move is proven when, inside the loop, nothing may write the copied
/// tensor's memory (in-place ops and out= calls on tensors not made in the loop,
/// calls of code that is not LibTorch's, LibTorch calls that write tensors they
/// are not given: backward, an optimizer's step, a module's forward), the host
/// copy is only read, and its name is declared nowhere else in the function.
std::optional<InvariantCopy> invariantHostCopy(TranslationUnitAnalysis &TU,
                                               const clang::CXXMemberCallExpr *Copy);

} // namespace torch_syncfree

#endif
