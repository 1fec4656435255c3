//===- StableOrder.h - A stable sort without a temporary buffer ----------===//
//
// std::stable_sort (and llvm::stable_sort) instantiate libstdc++ 12's
// std::get_temporary_buffer, deprecated in C++17, and clang 22 reports that
// deprecation from inside the system header (libstdc++'s own
// `#pragma GCC diagnostic` does not silence it), which breaks a build with
// warnings as errors. This sorts positions, ties broken by position, and moves
// the elements once: the same order as a stable sort.
//
//===----------------------------------------------------------------------===//
#ifndef TORCH_SYNCFREE_TOOL_STABLEORDER_H
#define TORCH_SYNCFREE_TOOL_STABLEORDER_H

#include "llvm/ADT/STLExtras.h"

#include <numeric>
#include <utility>
#include <vector>

namespace torch_syncfree {

template <typename T, typename Less> void stableSort(std::vector<T> &Values, Less IsLess) {
  std::vector<size_t> Order(Values.size());
  std::iota(Order.begin(), Order.end(), size_t(0));
  llvm::sort(Order, [&](size_t A, size_t B) {
    if (IsLess(Values[A], Values[B]))
      return true;
    if (IsLess(Values[B], Values[A]))
      return false;
    return A < B;
  });
  std::vector<T> Sorted;
  Sorted.reserve(Values.size());
  for (size_t Index : Order)
    Sorted.push_back(std::move(Values[Index]));
  Values = std::move(Sorted);
}

} // namespace torch_syncfree

#endif
