// The command's outputs behind one interface: text (clang-tidy's printer), JSON
// and SARIF. A formatter sees each unit's findings as the batch reports them,
// then the run's reported findings (after dedup and the baseline) once.
#ifndef TORCH_SYNCFREE_FORMATTERS_H
#define TORCH_SYNCFREE_FORMATTERS_H

#include "FindingRecord.h"
#include "Reporting.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include <memory>
#include <string>
#include <vector>

namespace torch_syncfree {

class FindingFormatter {
public:
  virtual ~FindingFormatter() = default;
  /// One unit's findings, in unit order (Context: the unit's clang-tidy context;
  /// NotCompiled: the unit's file when it does not compile, its findings incomplete).
  virtual void unit(const std::vector<FindingRecord> &Findings, clang::tidy::ClangTidyContext &Context,
                    llvm::StringRef NotCompiled) {}
  /// The run's findings as reported, once, after every unit.
  /// Notices: what the repository's configuration changed (ConfigAudit.h).
  virtual void finish(const std::vector<ReportedFinding> &Reported,
                      llvm::ArrayRef<ConfigNotice> Notices, llvm::raw_ostream &OS) {}
};

/// clang-style diagnostics with snippets; FindingsToStderr when stdout carries
/// something else (a --dry-run diff).
std::unique_ptr<FindingFormatter>
makeTextFormatter(llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> BaseFS,
                  bool FindingsToStderr);
/// One JSON array (docs/ci.md).
std::unique_ptr<FindingFormatter> makeJsonFormatter();
/// SARIF 2.1.0, paths relative to Root.
std::unique_ptr<FindingFormatter> makeSarifFormatter(std::string Root, std::string ToolVersion);

} // namespace torch_syncfree

#endif
