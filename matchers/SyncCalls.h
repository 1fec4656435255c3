// Which calls make the host wait for the GPU, by name, in one place: the checks
// that look for syncs anywhere (inside CUDA graph capture, inside functions called
// from a loop) ask here. The per-pattern checks refine the same knowledge with
// their own conditions (an explicit histc range, output_size, ...).
#ifndef TORCH_SYNCFREE_SYNCCALLS_H
#define TORCH_SYNCFREE_SYNCCALLS_H

#include "clang/AST/Expr.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <optional>

namespace torch_syncfree {

struct SyncCall {
  llvm::StringRef Api;         ///< e.g. "item", "nonzero", "cudaDeviceSynchronize"
  const clang::Expr *Tensor;   ///< the tensor whose device decides; nullptr for barriers
  bool ReadsValue;             ///< the host receives the tensor's value (item, cpu, print)
};

/// The catalog's sync-inducing call \p Call is, if any.
std::optional<SyncCall> asSyncCall(const clang::CallExpr *Call);

} // namespace torch_syncfree

#endif
