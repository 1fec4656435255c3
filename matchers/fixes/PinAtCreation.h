//===- PinAtCreation.h - pin a copy's source where it is made --*- C++ -*-===//
//
// The shared fix builder of torch-sync-host-to-device and
// torch-sync-pageable-copy: a non_blocking copy from pageable memory is still
// synchronous, so the source is pinned once where it is stored (the storage
// model is TensorStorage.h, the pinning facts PinnedMemory.h).
//
//===----------------------------------------------------------------------===//
#ifndef TORCH_SYNCFREE_FIXES_PINATCREATION_H
#define TORCH_SYNCFREE_FIXES_PINATCREATION_H

#include "TranslationUnitAnalysis.h"
#include "clang/AST/Expr.h"
#include "clang/Basic/SourceLocation.h"
#include <optional>
#include <string>
#include <vector>

namespace torch_syncfree {

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
