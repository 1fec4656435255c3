// Turns clang-tidy's collected errors into torch-syncfree findings and prints
// them as JSON (text output is clang-tidy's own diagnostic printer).
#ifndef TORCH_SYNCFREE_REPORTING_H
#define TORCH_SYNCFREE_REPORTING_H

#include "clang-tidy/ClangTidyDiagnosticConsumer.h"
#include "llvm/Support/raw_ostream.h"
#include <string>
#include <vector>

namespace torch_syncfree {

struct ReportedReplacement {
  std::string File;
  unsigned Offset = 0, Length = 0;
  std::string Text;
};

struct ReportedFinding {
  std::string Check;
  std::string File;
  unsigned Offset = 0;
  unsigned Line = 0;
  unsigned Column = 0;
  std::string Message;
  std::string Dependency; ///< "false", "true", "intentional"
  bool Fixable = false;
  std::vector<ReportedReplacement> Fix;
  std::string SourceLine; ///< the finding's line, whitespace-normalised (baselines)
};

/// Findings of torch-sync checks (compiler diagnostics are not findings).
/// Makes the paths of a finding, its notes and its fixes absolute (compile
/// databases name files relative to their build directory).
void makePathsAbsolute(clang::tidy::ClangTidyError &Error);

std::vector<ReportedFinding>
collectFindings(const std::vector<clang::tidy::ClangTidyError> &Errors);

void printJson(const std::vector<ReportedFinding> &Findings, llvm::raw_ostream &OS);

/// SARIF 2.1.0: rules and results through clang's SarifDocumentWriter; each fix
/// is added to its result as a SARIF `fix` (clang's writer has no fixes).
void printSarif(const std::vector<ReportedFinding> &Findings, llvm::raw_ostream &OS);

/// Baselines: findings matched by check, file and normalised source line, so edits
/// elsewhere in a file do not bring a baselined finding back.
std::string writeBaseline(const std::vector<ReportedFinding> &Findings, llvm::StringRef Path);
/// Removes findings present in the baseline. Returns an error message or "".
std::string applyBaseline(std::vector<ReportedFinding> &Findings, llvm::StringRef Path,
                          unsigned &Suppressed);

} // namespace torch_syncfree

#endif
