//===- analysis/Containers.h - What container operations do ------*- C++ -*-===//
//
// The one model of container operations for the analyses that follow
// tensors through containers (the device oracle, host pinning, the use
// classifier): which std containers hold values the analyses follow, and what
// a member call on one does to its elements. The names are ApiFacts' host
// table's (HostContainer, IndexedSequence, Container* traits). Each analysis decides what a kind
// means for its own fact (an Iterate may write through the iterator: the use
// classifier follows it, the oracle and pinning take it as a read).
//
//===----------------------------------------------------------------------===//
#ifndef TORCH_SYNCFREE_ANALYSIS_CONTAINERS_H
#define TORCH_SYNCFREE_ANALYSIS_CONTAINERS_H

#include "clang/AST/Type.h"
#include "llvm/ADT/StringRef.h"

namespace torch_syncfree {

enum class ContainerOp {
  Add,           ///< push_back, emplace_back, insert, push_front, emplace, assign, resize
  ElementAccess, ///< at, front, back, operator[], value: yields one element
  Inspect,       ///< size, empty, capacity, has_value: no element's value
  Iterate,       ///< begin, end, cbegin, cend, rbegin, rend: iterators to the elements
  Remove,        ///< clear, pop_back, erase, reset, reserve: elements leave, none join
  Unknown,       ///< data, swap and the rest: not followed
};

/// What calling the method \p Name of a std container (or optional) does.
ContainerOp containerOp(llvm::StringRef Name);

/// A std sequence container (vector, deque, array) or, with \p Maps, also
/// list, map and unordered_map; \p Element, when given, receives the element
/// type (a sequence's first template argument).
bool isStdContainer(clang::QualType T, bool Maps, clang::QualType *Element = nullptr);

} // namespace torch_syncfree

#endif
