#ifndef TORCH_SYNCFREE_CHECKS_ITEMCHECK_H
#define TORCH_SYNCFREE_CHECKS_ITEMCHECK_H

#include "SyncCheck.h"

namespace torch_syncfree {

/// torch-sync-item: `item<T>()`, `item()` and `_local_scalar_dense` copy one
/// value from a GPU tensor to the host, so the host waits for all queued GPU work.
/// Flags only; the remedy depends on whether the host needs the value.
class ItemCheck : public SyncCheck {
public:
  using SyncCheck::SyncCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder *Finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &Result) override;
};

} // namespace torch_syncfree

#endif
