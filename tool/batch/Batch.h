// The batch run as a library (issue 40): the command's front end in stages,
// each a function over one Batch record (the stages' own data) and the run's
// RunOptions (read only). runBatch calls them in order:
//   runConfigCommands  --list-checks and kin (Config.cpp)
//   loadInputs         the database, the files, shards (Inputs.cpp)
//   analyseUnits       the thread pool, workers, shared PCHs, the results cache (Analyse.cpp)
//   postProcess        project summaries joined (ProjectSummaries.cpp), compile errors,
//                      one report per place, baselines (PostProcess.cpp)
//   printFindings, exportAndFix, printSummary, exitStatus (Output.cpp)
// A worker process analyses one unit of a run (runWorker, Worker.cpp). There is
// no mutable state here but the Batch a run owns.
#ifndef TORCH_SYNCFREE_BATCH_BATCH_H
#define TORCH_SYNCFREE_BATCH_BATCH_H

#include "CacheAuth.h"
#include "CompileCommandSanitizer.h"
#include "FindingRecord.h"
#include "FixApplier.h"
#include "Formatters.h"
#include "Reporting.h"
#include "ResultsCache.h"
#include "SafeFileSystem.h"
#include "SharedPch.h"
#include "UnitSelection.h"
#include "batch/RunOptions.h"

#include "clang-tidy/ClangTidyDiagnosticConsumer.h"
#include "clang-tidy/ClangTidyOptions.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/VirtualFileSystem.h"
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace torch_syncfree {

constexpr int ExitClean = 0, ExitFindings = 1, ExitUsage = 2;

/// Says Message as the command's error; the exit status of a usage error.
int usageError(const llvm::Twine &Message);

/// "1 finding", "2 findings".
std::string counted(size_t N, llvm::StringRef Noun);

/// The result of analysing one translation unit.
struct UnitResult {
  std::unique_ptr<clang::tidy::ClangTidyContext> Context;
  std::vector<FindingRecord> Findings;
  std::string CompileError;
  bool CannotAnalyse = false; ///< no usable compile command (CompileError says why)
};

/// One batch run, stage by stage: the inputs (database, files), the analysis
/// (units, caches, counters), the post-processed findings and the fixes.
struct Batch {
  // Inputs.
  std::unique_ptr<SanitizedDatabase> Compilations;
  std::vector<std::string> Files;      ///< the files asked for, absolute
  std::vector<std::string> ParseFiles; ///< per file, the TU parsed for it
  bool Interpolate = false;
  // Analysis.
  std::chrono::steady_clock::time_point Clock;
  llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> BaseFS =
      llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
  std::vector<UnitResult> Units;
  std::unique_ptr<clang::tidy::ClangTidyOptionsProvider> PchOptions;
  std::optional<CacheAuthenticator> UserKey;
  std::unique_ptr<SharedPchCache> Pch;
  std::string PchDirectory;
  std::unique_ptr<UnitSelection> Selection;
  std::unique_ptr<ResultsCache> Results;
  std::atomic<unsigned> NotSelected{0};
  std::atomic<unsigned> PlainRetries{0}; ///< units that compiled only without the shortcuts
  bool ShowProgress = false;
  unsigned Threads = 1;
  std::atomic<unsigned> Crashed{0}; ///< units whose analysis crashed (recovered)
  // Post-processing and output.
  std::unique_ptr<FindingFormatter> Formatter;
  std::vector<ConfigNotice> ConfigNotices; ///< what .clang-tidy files changed
  std::vector<FindingRecord> AllFindings;
  /// --profile: interval reads and module moves analysed only to label their
  /// syncs (never reported).
  std::vector<FindingRecord> ProfileOnly;
  std::vector<ReportedFinding> Reported;
  /// Why the project-wide judgements (uncalled, a returned value's class from
  /// its callers) were not made; empty when made or when no unit said a record.
  std::string ProjectJudgementsSkipped;
  unsigned Baselined = 0;
  bool CompileFailed = false;
  FixSummary Fixes;
};

/// The whole batch run over the inputs (Fixed: the flags after `--`, if any);
/// its exit status. Options are resolved (resolveRunOptions).
int runBatch(const RunOptions &Options, std::unique_ptr<clang::tooling::CompilationDatabase> Fixed);

/// A worker process of a batch run (UnitWorker.h): analyses the one unit its
/// request (at RequestPath) names, as the run would in-process, and writes the
/// findings back to ResponsePath. Options: the run's, as parsed (fromCommandLine).
int runWorker(RunOptions Options, llvm::StringRef RequestPath, llvm::StringRef ResponsePath,
              std::unique_ptr<clang::tooling::CompilationDatabase> Fixed);

// Config.cpp.
/// The options of the run's checks: the defaults, the .clang-tidy files (or
/// --config, or nothing with --ignore-repo-config) and the command line.
/// \p LanguageServer: the editor applies one quick fix at a time, so a fix that
/// relies on a definition another fix adds carries its own (guarded) copy.
/// The line filter and the configuration were validated by resolveRunOptions.
std::unique_ptr<clang::tidy::ClangTidyOptionsProvider> makeOptionsProvider(const RunOptions &Options,
                                                                           bool LanguageServer = false);
/// --list-checks, --dump-config, --explain-config, --verify-config, and the
/// refusal to run with no check enabled; nullopt when the run may go on.
std::optional<int> runConfigCommands(const RunOptions &Options);

// Git.cpp.
/// The output of a git command run in the current directory (nullopt when it fails).
std::optional<std::string> gitOutput(llvm::ArrayRef<llvm::StringRef> Arguments);
/// --pre-commit without --diff: the git ref whose changed lines count ("" for every line).
std::string preCommitDiffRef(const RunOptions &Options);
/// Lines changed since a git ref, as a clang-tidy line filter (JSON). Runs
/// `git diff -U0 <ref>` in the current directory; returns an error message in Error.
std::string lineFilterFromGitDiff(llvm::StringRef Ref, std::string &Error);

// Inputs.cpp.
/// The compilation database of the run (a worker process loads it too).
std::optional<int> loadDatabase(const RunOptions &Options,
                                std::unique_ptr<clang::tooling::CompilationDatabase> Fixed, Batch &B);
/// The compilation database and the files to analyse (each with the TU parsed
/// for it); an exit status when there is nothing to do or the input is bad.
std::optional<int> loadInputs(const RunOptions &Options,
                              std::unique_ptr<clang::tooling::CompilationDatabase> Fixed, Batch &B);
/// The file system one unit is parsed through: the safe one (SafeFileSystem.h)
/// under --vfsoverlay; null, with Error set, when the overlay cannot be read.
llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem>
makeUnitFileSystem(const RunOptions &Options, std::string &Error,
                   std::shared_ptr<LookupMisses> Misses = nullptr);
/// The project as the user's run names it (#embed and --fix stay under it).
std::vector<std::string> userProjectRoots(const RunOptions &Options);

// Analyse.cpp.
/// Analyses every translation unit, in parallel (clang's thread pool); each
/// unit's result lands in its slot, so the output order is the input order.
void analyseUnits(const RunOptions &Options, Batch &B);

// PostProcess.cpp.
/// --diff, --line-filter, applied as clang-tidy applies a line filter (a
/// finding stays when its line or one of its notes' lines is named; a file
/// the filter does not name keeps nothing; compiler diagnostics stay), but by
/// the batch, after the units' project summary records are taken out: clang-
/// tidy's would drop those on lines it does not name.
class ChangedLines {
public:
  explicit ChangedLines(llvm::StringRef LineFilter);
  /// Whether a finding at File:Offset is on a named line (always, with no filter).
  bool shows(llvm::StringRef File, unsigned Offset);
  /// Drops from every unit the torch-sync findings neither whose place nor
  /// whose notes' places are shown.
  void filter(Batch &B);

private:
  bool Active = false;
  std::vector<clang::tidy::FileFilter> Filter;
  std::map<std::string, std::vector<size_t>> LineStarts; ///< per file read
};

/// Compile errors, one report per finding place (conflicting fixes from two
/// units dropped), the baseline written or applied.
std::optional<int> postProcess(const RunOptions &Options, Batch &B);
/// Joins the units' project summaries (issue 42: a call in a loop to a function
/// another unit defines; over every unit of the database, values returned to
/// the project's callers and functions nothing calls) and removes their
/// records; writes or reads --summaries (ProjectSummaries.cpp). An exit status
/// when the summaries file cannot be read or written.
std::optional<int> joinProjectSummaries(const RunOptions &Options, Batch &B);

// Output.cpp.
/// The formatter of --format.
std::unique_ptr<FindingFormatter> makeFormatter(const RunOptions &Options, const Batch &B);
/// Each unit's findings, then the reported ones, through the formatter.
void printFindings(const RunOptions &Options, Batch &B);
/// --export-fixes, then --fix (or its --dry-run diff).
std::optional<int> exportAndFix(const RunOptions &Options, Batch &B);
/// The closing summary on stderr.
void printSummary(const RunOptions &Options, const Batch &B);
/// The exit status of the run.
int exitStatus(const RunOptions &Options, const Batch &B);

} // namespace torch_syncfree

#endif
