// Turns clang-tidy's collected errors into torch-syncfree findings and prints
// them as JSON (text output is clang-tidy's own diagnostic printer).
#ifndef TORCH_SYNCFREE_REPORTING_H
#define TORCH_SYNCFREE_REPORTING_H

#include "clang-tidy/ClangTidyDiagnosticConsumer.h"
#include "llvm/Support/raw_ostream.h"
#include <string>
#include <vector>

namespace torch_syncfree {

struct ReportedFinding {
  std::string Check;
  std::string File;
  unsigned Line = 0;
  unsigned Column = 0;
  std::string Message;
  std::string Dependency; ///< "false", "true", "intentional"
  bool Fixable = false;
};

/// Findings of torch-sync checks (compiler diagnostics are not findings).
std::vector<ReportedFinding>
collectFindings(const std::vector<clang::tidy::ClangTidyError> &Errors);

void printJson(const std::vector<ReportedFinding> &Findings, llvm::raw_ostream &OS);

} // namespace torch_syncfree

#endif
