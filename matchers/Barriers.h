// Why an explicit wait for the GPU (a synchronize call, a loop polling a
// completion query) is a deliberate barrier: a timer or a buffer release next
// to it, the program's end, a host buffer an asynchronous copy reads, or host
// work after it that may need the GPU's results (issue 43, item 1). One
// answer for the checks that meet such a wait: torch-sync-explicit reports it,
// torch-sync-call-in-loop cites a callee's waits by it.
#ifndef TORCH_SYNCFREE_BARRIERS_H
#define TORCH_SYNCFREE_BARRIERS_H

#include "TranslationUnitAnalysis.h"
#include "clang/AST/Stmt.h"
#include <string>

namespace torch_syncfree {

/// Why a wait at \p Site is an intentional barrier, or "" when the tool sees no
/// reason (a false dependency). \p HostWork receives what after it may need
/// the GPU's work ("" when nothing).
std::string barrierReason(const clang::Stmt *Site, TranslationUnitAnalysis &TU, std::string &HostWork);

} // namespace torch_syncfree

#endif
