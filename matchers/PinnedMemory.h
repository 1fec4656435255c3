// Whether a host tensor lives in pinned (page-locked) memory, from how it was
// made, as DeviceInference answers where a tensor lives. A non_blocking copy
// between the GPU and pageable memory is still synchronous: the driver stages it
// through its own pinned buffer and the host waits (sync debug mode does not see
// it). Used by torch-sync-pageable-copy and torch-sync-host-to-device.
#ifndef TORCH_SYNCFREE_PINNEDMEMORY_H
#define TORCH_SYNCFREE_PINNEDMEMORY_H

#include "TranslationUnitAnalysis.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include <optional>
#include <string>
#include <vector>

namespace torch_syncfree {

enum class Pinning { Pinned, Pageable, Unknown };

/// The pinning of the host tensor \p E evaluates to: `pin_memory()` and
/// factories with `pinned_memory(true)` are pinned; other factories, `from_blob`,
/// `cpu()`/`to(kCPU)` results, results of LibTorch ops that allocate and
/// torch::data loader batches are pageable; views (narrow, slice, select, [i],
/// view, reshape, detach) keep their base's; local variables join every value
/// stored into them; parameters and calls of unseen code are unknown.
Pinning hostPinning(TranslationUnitAnalysis &TU, const clang::Expr *E);

/// Whether the view chain from \p E down to its base may be non-contiguous
/// (`t()`, `transpose`, `permute`, `expand`, a non-zero `narrow`/`slice`/`select`
/// dimension): a non_blocking copy of a non-contiguous pinned tensor goes
/// through a pageable contiguous copy first.
bool mayBeNonContiguousView(const clang::Expr *E);

/// Where the source of a copy in a loop can be pinned once, where it is made: the
/// local variable the copied expression views, declared outside the innermost
/// loop around \p Copy with a LibTorch call as its initialiser, never assigned,
/// written in place or passed to code that may write it. Text: the initialiser
/// with `.pin_memory()` (guarded by `torch::cuda::is_available()` unless
/// \p TargetIsGpu).
/// A copy source read from a local container (`batches[b]`, `batches.at(b)`, a
/// range-for element) is pinned where each element is stored instead
/// (`batches.push_back(x)` -> `batches.push_back(x.pin_memory())`), when every
/// store is before the loop and the container is only read afterwards.
/// A field of the program's own class (a tensor or a container of tensors) is
/// pinned where the constructors store it, when every store is in a
/// constructor, no object of the class is built in a loop, and the field is
/// only read elsewhere.
struct PinEdit {
  clang::CharSourceRange Range;
  std::string NewText;
};
struct PinAtCreation {
  std::vector<PinEdit> Edits;
  std::string Variable; ///< the variable, container or field pinned
  bool Container = false;
  std::string Where = "before the loop"; ///< when the pinning runs once
};
std::optional<PinAtCreation> pinAtCreation(TranslationUnitAnalysis &TU, const clang::Expr *Source,
                                           const clang::Stmt *Copy, bool TargetIsGpu);

} // namespace torch_syncfree

#endif
