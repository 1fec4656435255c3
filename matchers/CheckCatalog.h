// The catalog of torch-syncfree checks (built from Checks.def): names, one-line
// summaries, docs pages and SARIF levels, for `--list-checks` and SARIF rules.
#ifndef TORCH_SYNCFREE_CHECKCATALOG_H
#define TORCH_SYNCFREE_CHECKCATALOG_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace torch_syncfree {

struct CheckInfo {
  llvm::StringRef Name;    ///< e.g. "torch-sync-item"
  llvm::StringRef Summary; ///< one line, for --list-checks and SARIF rules
  llvm::StringRef DocPath; ///< relative to the repository root
  llvm::StringRef DefaultLevel = "warning"; ///< "error" for checks that report errors
};

llvm::ArrayRef<CheckInfo> checkCatalog();
const CheckInfo *findCheck(llvm::StringRef Name);

} // namespace torch_syncfree

#endif
