// What the engine knows about LibTorch functions by name, in one table
// (ApiFacts.cpp): which calls read a value to the host, which wait, which have
// data-dependent output sizes, which make tensors, move them between devices,
// write them in place, and what element kind or rank their results have. The
// checks and analyses ask here; no other file keeps its own list of names.
// Measured facts (which calls wait on an H200) are in docs/catalog.md and
// ../shared/reference/sync-probe-libtorch-2.11-h200.md.
#ifndef TORCH_SYNCFREE_APIFACTS_H
#define TORCH_SYNCFREE_APIFACTS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace torch_syncfree {

enum ApiTrait : unsigned {
  /// Reads a tensor's value on the host (`item`, `cpu`, `print`): waits.
  ValueRead = 1u << 0,
  /// A tensor op that waits for the GPU (a host decision inside LibTorch).
  WaitingOp = 1u << 1,
  /// The output's size is computed from the data (waits; `where` with one argument too).
  DataDependentShape = 1u << 2,
  /// A device-wide or stream barrier (LibTorch's or the CUDA runtime's).
  Barrier = 1u << 3,
  /// Makes a new tensor from sizes or values, on the CPU unless its options name a device.
  Factory = 1u << 4,
  /// A factory whose contents do not depend on the device it runs on.
  DeterministicFill = 1u << 5,
  /// Moves or copies a tensor to another device (`to`, `cuda`, `cpu`).
  DeviceMove = 1u << 6,
  /// Copies toward the device named by its argument (`to`, `cuda`).
  CopyToDevice = 1u << 7,
  /// The result is a bool tensor (a comparison, a predicate).
  BoolResult = 1u << 8,
  /// The result is an integer tensor (indices, counts).
  IntegerResult = 1u << 9,
  /// Returns (values, indices): `std::get<1>` of it is an integer tensor.
  ValuesAndIndices = 1u << 10,
  /// Keeps the element kind of its input (shape, order and selection ops).
  KindPreserving = 1u << 11,
  /// Called as `x.op()` with no arguments, reduces to a 0-dim tensor.
  FullReduction = 1u << 12,
  /// A loss: with its default reduction (mean) the result is 0-dim.
  Loss = 1u << 13,
  /// The result is floating whatever the input (means, norms, losses, layers).
  FloatingResult = 1u << 14,
  /// The result shares its base's memory (a view: slicing, reshaping).
  View = 1u << 15,
  /// A linear-algebra op that checks its result's info on the host (waits), and
  /// has an `_ex` variant that does not (torch-sync-checked-linalg).
  CheckedLinalg = 1u << 16,
  /// The last trait: the index covers every bit up to it.
  LastApiTrait = CheckedLinalg,
};

/// The traits of a LibTorch function or method name (0 for a name the table lacks).
unsigned apiTraits(llvm::StringRef Name);
inline bool hasApiTrait(llvm::StringRef Name, ApiTrait Trait) {
  return (apiTraits(Name) & Trait) != 0;
}
/// Every name with Trait, in table order (for matchers: `hasAnyName`).
llvm::ArrayRef<llvm::StringRef> namesWithTrait(ApiTrait Trait);

/// LibTorch's convention: an op whose name ends in `_` (`add_`, `copy_`)
/// writes its object in place.
bool isInPlaceName(llvm::StringRef Name);
/// A method that writes the tensor's memory: in place, or by handing out a
/// pointer or accessor to it.
bool mayWriteTensorMemory(llvm::StringRef Name);

} // namespace torch_syncfree

#endif
