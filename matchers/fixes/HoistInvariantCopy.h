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

/// A row of a tensor the loop does not change, copied to the host every
/// iteration through elementwise operations with loop-invariant host scalars
/// (`(iou[i] > iou_thr).cpu()` in an NMS-style greedy loop): the same rows of
/// one copy of the whole expression (`(iou > iou_thr).cpu()`) made before the
/// loop hold the same values, with one wait per call. Said as a remedy, not a
/// fix (the copy moves every row, also those the loop skips).
struct InvariantRowCopy {
  std::string Tensor;    ///< `iou`
  std::string Index;     ///< `i`, as spelled
  std::string WholeCopy; ///< `(iou > iou_thr)`, the copied expression with the row taken out
  unsigned LoopLine = 0;
  /// Why the values may differ (empty: nothing in the loop may write the tensor).
  std::string NotProven;
};

/// The row copy \p Copy (`cpu()` or `to(<CPU>)`) is, if any.
std::optional<InvariantRowCopy> invariantRowCopy(TranslationUnitAnalysis &TU,
                                                 const clang::CXXMemberCallExpr *Copy);

/// Element reads of a tensor the loop does not change (`offsets[i].item<int64_t>()`,
/// `offsets[i + 1].item<int64_t>()` every iteration): one copy of the tensor
/// before the loop and reads of the host copy's elements give the same values
/// with one wait per call.
struct InvariantElementReads {
  std::string Tensor;   ///< `offsets`
  std::string HostName; ///< the host copy the fix declares (`offsets_host`)
  const clang::Stmt *Loop = nullptr;
  unsigned LoopLine = 0;
  /// The element reads of Tensor in the loop, in source order; the first one's
  /// fix carries the copy and the rewrite of every read.
  std::vector<const clang::CallExpr *> Reads;
  unsigned FirstLine = 0;
  /// Why the rewrite is not proven to keep behaviour (empty: Edits, on the
  /// first read only).
  std::string NotProven;
  std::vector<clang::transformer::ASTEdit> Edits;
};

/// The element reads \p Item (`x[i].item<T>()`, i a host integer) is one of,
/// when x is a variable whose every definition reaching the reads is made
/// before the innermost loop around them; nullopt otherwise. Proven as
/// invariantHostCopy (nothing in the loop may write x), and the host copy's
/// name is new in the function.
/// \p Includes says which reads are the caller's (the sites its check reports).
std::optional<InvariantElementReads>
invariantElementReads(TranslationUnitAnalysis &TU, const clang::CallExpr *Item,
                      llvm::function_ref<bool(const clang::CallExpr *)> Includes);

/// The same tensor read twice (issue 41): an element read
/// (`csum[-1].item<int64_t>()`, `n.item<T>()`) of a tensor that the same block
/// also copies whole to the host (`auto host = csum.cpu();`). One copy serves
/// both: the read takes its element from the host copy, and when the copy comes
/// after the read, its declaration moves before the read's statement.
struct SharedHostCopy {
  std::string Tensor; ///< `csum`
  std::string Host;   ///< `host`
  unsigned CopyLine = 0;
  /// The copy is made after the read (the fix moves it before the read).
  bool CopyAfter = false;
  /// The read is in a loop the copy is not in: the fix saves a wait per iteration.
  bool PerIteration = false;
  /// Why the rewrite is not proven to keep behaviour (empty: Edits).
  std::string NotProven;
  std::vector<clang::transformer::ASTEdit> Edits;
};

/// The host copy that can serve \p Read, if any: `auto host = x.cpu();` (or
/// `to(<CPU>)`) declared in a block around Read, before Read's statement in
/// it, or directly after it in Read's own block. nullopt for any other shape.
/// Proven when x is the same object at both (no definition of x between),
/// nothing between may write x's memory or the host copy, and, for a copy made
/// after the read, nothing between leaves the block and the host copy's name
/// is not used there.
std::optional<SharedHostCopy> sharedHostCopy(TranslationUnitAnalysis &TU,
                                             const clang::CXXMemberCallExpr *Read);

/// A host value round-tripped through the GPU (issue 41): `auto d = h.to(device);`
/// (or `h.cuda()`) of a CPU tensor h, read back on the host later in the same
/// block (`d.cpu()`, `d.to(<CPU>)`, `d[i].item<T>()`, `d.item<T>()`). The host
/// original holds the same values: the read-back reads h instead, no wait.
struct HostOriginal {
  std::string Device; ///< `d`
  std::string Host;   ///< `h`
  unsigned CopyLine = 0;
  /// Why the rewrite is not proven to keep behaviour (empty: Edits).
  std::string NotProven;
  std::vector<clang::transformer::ASTEdit> Edits;
};

/// The host original \p ReadBack (a blocking copy to the host, or an `item`
/// read) can read instead, if any: d's one definition reaching the read-back is
/// `h.to(<device>)` / `h.cuda()` declared or assigned in a statement of a block
/// around the read-back, with h known to be on the CPU. nullopt for any other
/// shape. Proven when no definition of h or d lies between the copy and the
/// read-back, nothing between may write either's memory, and a copy's result
/// (now h itself) is only read afterwards, through `data_ptr` only when h is
/// known to be contiguous (made by a factory, `clone()` or `contiguous()`).
std::optional<HostOriginal> hostOriginal(TranslationUnitAnalysis &TU,
                                         const clang::CXXMemberCallExpr *ReadBack);

/// Whether one of the restructurings above is proven for the `item` read \p
/// Read (a host original, a host copy already made, element reads of a tensor
/// the loop does not change): a wait a fix of torch-sync-item removes, so a
/// run of reads that holds it is not coalesced around it.
bool restructuringRemovesRead(TranslationUnitAnalysis &TU, const clang::CXXMemberCallExpr *Read);

} // namespace torch_syncfree

#endif
