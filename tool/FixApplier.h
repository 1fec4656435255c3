// Applies the fixes of a run to the files on disk: one merged replacement set
// per file, conflicting fixes dropped whole, each file written through a
// temporary file and an atomic rename that keeps its permissions.
#ifndef TORCH_SYNCFREE_FIXAPPLIER_H
#define TORCH_SYNCFREE_FIXAPPLIER_H

#include "clang-tidy/ClangTidyDiagnosticConsumer.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <vector>

namespace torch_syncfree {

struct FixSummary {
  unsigned Applied = 0;  ///< findings whose fix landed
  unsigned Skipped = 0;  ///< findings whose fix conflicted or could not be written
  unsigned FilesChanged = 0;
  bool WriteFailed = false;
};

/// Applies every finding's fix. A file modified after \p ParsedAt is not
/// written (reported on \p Log). With \p DryRun, prints a unified diff instead.
FixSummary applyFixes(const std::vector<clang::tidy::ClangTidyError> &Errors,
                      llvm::sys::TimePoint<> ParsedAt, bool DryRun, llvm::raw_ostream &Out,
                      llvm::raw_ostream &Log);

/// Writes \p Contents to \p Path atomically: a temporary file beside it, then a
/// rename; an existing file keeps its permissions. Returns an error message or "".
std::string writeFileAtomically(llvm::StringRef Path, llvm::StringRef Contents);

} // namespace torch_syncfree

#endif
