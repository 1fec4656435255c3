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

} // namespace torch_syncfree

#endif
