// The typed facts of a finding travel with its diagnostic, not in its text.
//
// A check emits its finding through clang's diagnostic engine (so NOLINT, the
// header filter, clang-tidy's printer and its fix merging all apply). The
// rendered message is for people; the facts a front end needs (the dependency
// class, the loop line) ride along as integer arguments after the ones the
// format string uses. clang's formatter ignores arguments the format does not
// name, so the clang-tidy plugin prints the same text, and the standalone
// tool's runner reads the facts back from the Diagnostic (CheckRunner) into the
// finding record every output reads. Nothing recovers a class from message text.
#ifndef TORCH_SYNCFREE_FINDINGFACTS_H
#define TORCH_SYNCFREE_FINDINGFACTS_H

#include "UseClassifier.h"
#include "clang/Basic/Diagnostic.h"
#include <optional>

namespace torch_syncfree {

struct FindingFacts {
  Dependency Class = Dependency::True;
  unsigned LoopLine = 0; ///< the loop the sync repeats in (0: none)
  /// Read once every N iterations (`if (step % N == 0)`): reported only with
  /// ReportIntervalReads; --profile analyses them to label the syncs they make.
  bool IntervalRead = false;
  /// A module's parameters moved to a device (`model->to(device)`, setup):
  /// reported only with ReportModuleMoves; --profile analyses them likewise.
  bool ModuleMove = false;
};

/// Appends the facts to a diagnostic whose format string names only %0.
void attachFacts(const clang::DiagnosticBuilder &Diag, const FindingFacts &Facts);
/// The facts a check attached, or nothing (a compiler diagnostic, a note).
std::optional<FindingFacts> factsOf(const clang::Diagnostic &Info);

} // namespace torch_syncfree

#endif
