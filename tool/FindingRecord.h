// What the standalone tool keeps of each diagnostic of a run: clang-tidy's error
// (check, location, message, notes, fixes) and the typed facts the check attached
// (FindingFacts.h). Every output reads the facts from here: text, JSON, SARIF,
// the language server, the baseline and the results cache.
#ifndef TORCH_SYNCFREE_FINDINGRECORD_H
#define TORCH_SYNCFREE_FINDINGRECORD_H

#include "FindingFacts.h"
#include "clang-tidy/ClangTidyDiagnosticConsumer.h"
#include <optional>
#include <vector>

namespace torch_syncfree {

struct FindingRecord : clang::tidy::ClangTidyError {
  explicit FindingRecord(clang::tidy::ClangTidyError Error,
                         std::optional<FindingFacts> Facts = std::nullopt)
      : clang::tidy::ClangTidyError(std::move(Error)), Facts(Facts) {}
  /// Set for every finding of a torch-sync check; nothing for a compiler
  /// diagnostic.
  std::optional<FindingFacts> Facts;
};

/// clang-tidy's own view (its printer and its YAML export take ClangTidyErrors).
inline std::vector<clang::tidy::ClangTidyError>
asClangTidyErrors(const std::vector<FindingRecord> &Records) {
  return std::vector<clang::tidy::ClangTidyError>(Records.begin(), Records.end());
}

} // namespace torch_syncfree

#endif
