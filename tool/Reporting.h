// Turns clang-tidy's collected errors into torch-syncfree findings and prints
// them as JSON (text output is clang-tidy's own diagnostic printer).
#ifndef TORCH_SYNCFREE_REPORTING_H
#define TORCH_SYNCFREE_REPORTING_H

#include "FindingRecord.h"
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

struct ReportedNote {
  std::string File;
  unsigned Offset = 0;
  std::string Message;
};

struct ReportedFinding {
  std::string Check;
  std::string File;
  unsigned Offset = 0;
  unsigned Line = 0;
  unsigned Column = 0;
  std::string Message;
  std::string Dependency; ///< "false", "true", "intentional" (from the record's facts)
  FindingFacts Facts;     ///< the record's facts (FindingFacts.def; defaults for a compiler diagnostic)
  bool Fixable = false;
  bool WarningAsError = false; ///< --warnings-as-errors matched its check
  std::string Level = "warning"; ///< SARIF level: error, warning or note
  std::vector<ReportedNote> Notes;
  std::vector<ReportedReplacement> Fix;
  std::string SourceLine; ///< the finding's line, whitespace-normalised (baselines)
  /// Analysed for --profile only (an interval read without ReportIntervalReads,
  /// a module move without ReportModuleMoves):
  /// joined with the profile and labelled, never reported as a finding.
  bool ProfileOnly = false;
  /// With --profile: the syncs measured at this finding (ProfileJoin.h).
  bool Profiled = false;
  uint64_t MeasuredCount = 0;
  double MeasuredWaitMs = 0;
  double MeasuredPerStep = 0; ///< count per marked step (0 without step markers)
};

/// A configuration file of the repository that narrows or changes the checks
/// (a .clang-tidy that disables checks or sets their options).
struct ConfigNotice {
  std::string File;    ///< the configuration file
  std::string Message; ///< what it does: "disables ...", "sets ..."
  /// How a CI run pins it (appended on stderr, in parentheses).
  std::string Remedy = "--ignore-repo-config or --config-file pins the checks";
};

/// Findings of torch-sync checks (compiler diagnostics are not findings).
/// Problems of a configuration: check globs that match no check, options of
/// unknown checks. One line each.
std::vector<std::string> configProblems(const clang::tidy::ClangTidyOptions &Options);

/// Makes the paths of a finding, its notes and its fixes absolute (compile
/// databases name files relative to their build directory).
void makePathsAbsolute(clang::tidy::ClangTidyError &Error);

std::vector<ReportedFinding>
collectFindings(const std::vector<FindingRecord> &Errors);

void printJson(const std::vector<ReportedFinding> &Findings, llvm::raw_ostream &OS);

/// SARIF 2.1.0: rules and results through clang's SarifDocumentWriter; each fix
/// is added to its result as a SARIF `fix` (clang's writer has no fixes).
/// SARIF 2.1.0 as GitHub code scanning reads it: paths relative to Root
/// (%SRCROOT%), rules with help from the check pages, fingerprints.
void printSarif(const std::vector<ReportedFinding> &Findings, llvm::StringRef Root,
                llvm::StringRef ToolVersion, llvm::raw_ostream &OS,
                llvm::ArrayRef<ConfigNotice> Notices = {});

/// The default --sarif-root: the nearest directory above Cwd with a .git, else Cwd.
std::string sarifRootFor(llvm::StringRef Cwd);

/// The URL of a check's documentation page ("" for an unknown check).
std::string checkDocsUrl(llvm::StringRef Check);


/// Baselines: findings matched by check, file and normalised source line, so edits
/// elsewhere in a file do not bring a baselined finding back.
std::string writeBaseline(const std::vector<ReportedFinding> &Findings, llvm::StringRef Path);
/// Removes findings present in the baseline (read through the bounded reader:
/// a regular file of at most 64 MiB). Returns an error message or "".
/// \p BaseText: the same baseline as it was at the ref under review (--diff),
/// "" when it did not exist there; entries it lacks that suppress a finding
/// now (a change that baselines its own findings) are listed in \p Gained as
/// "file:line [check]". Not given: nothing is compared.
std::string applyBaseline(std::vector<ReportedFinding> &Findings, llvm::StringRef Path,
                          unsigned &Suppressed,
                          const std::optional<std::string> &BaseText = std::nullopt,
                          std::vector<std::string> *Gained = nullptr);

/// clang's first error as a "does not compile" message may quote it: its first
/// line, at most 240 bytes, and without a static_assert's evaluated message
/// (C++26 lets it be built from `#embed`ed data: any readable file, printed
/// in CI logs that are often public).
std::string quotableCompileError(llvm::StringRef Message);

/// "file:line:col" of a byte offset of a file (1-based, as clang prints), or
/// the path alone when the file cannot be read.
std::string fileLineColumn(llvm::StringRef File, unsigned Offset);

/// While alive, what is written to stdout (fd 1, llvm::outs()) goes to stderr:
/// clang-tidy's text printer writes to stdout only, and a --dry-run diff owns
/// stdout. Used by the front end's main thread only, with no worker running.
class StdoutToStderr {
public:
  StdoutToStderr();
  ~StdoutToStderr();
  StdoutToStderr(const StdoutToStderr &) = delete;
  StdoutToStderr &operator=(const StdoutToStderr &) = delete;

private:
  int Saved = -1;
};

} // namespace torch_syncfree

#endif
