// The options of one batch run (issue 40): every command-line option's value,
// and what the run resolves from them once (the configuration of --config, the
// profile, the effective line filter, the SARIF root, ...). tool/Main.cpp fills
// the option values from llvm::cl (fromCommandLine) and resolveRunOptions the
// rest; every stage of the run (batch/Batch.h) then reads one RunOptions by
// const reference: there is no other state of the run's options.
//
// How RunOptions reaches a worker process (UnitWorker.h): a worker is started
// with the run's own arguments (RunArguments) after its internal options, and
// its main builds its RunOptions from them through the same fromCommandLine as
// the run, so it re-reads the compile database and the .clang-tidy files
// exactly as the run does. What the run resolved once is not resolved again: it
// travels in the WorkerRequest (the effective line filter, for which --diff and
// --pre-commit ran git; the profile adds) and resolveWorkerOptions puts it in
// place. The values only the run's own output reads (the profile, the SARIF
// root, the --pre-commit diff ref) stay unresolved in a worker.
#ifndef TORCH_SYNCFREE_BATCH_RUNOPTIONS_H
#define TORCH_SYNCFREE_BATCH_RUNOPTIONS_H

#include "ProfileJoin.h"
#include "clang-tidy/ClangTidyOptions.h"
#include <optional>
#include <string>
#include <vector>

namespace torch_syncfree {

struct WorkerRequest;

/// --format.
enum class OutputFormat { Text, Json, Sarif };
/// --fail-on: the dependency classes that make the exit status 1.
enum class FailOnClass { Any, True, False };

struct RunOptions {
  // The command line, as given (tool/Main.cpp has each option's meaning). An
  // optional is an option whose mere presence counts (it overrides the
  // .clang-tidy value, say).
  std::vector<std::string> Sources; ///< the positional sources, then --pre-commit's files
  std::string BuildPath;            ///< -p
  std::string ChecksGlobs;          ///< --checks
  bool ListChecks = false;
  bool ApplyFixes = false; ///< --fix
  bool DryRun = false;
  std::optional<std::string> FormatStyle; ///< --format-style
  bool FixErrors = false;
  std::string ExportFixes;
  OutputFormat Format = OutputFormat::Text;
  unsigned Jobs = 0; ///< -j; 0: the cores
  FailOnClass FailOn = FailOnClass::Any;
  std::string Baseline;
  std::string WriteBaseline;
  std::string LineFilter; ///< --line-filter
  /// --diff; with --pre-commit and neither --diff nor --line-filter, the ref
  /// resolveRunOptions chose (preCommitDiffRef).
  std::string DiffRef;
  bool Quiet = false;
  bool PreCommit = false;
  bool Lsp = false;
  std::string ResourceDir;
  std::string CompileCommandsDir;
  std::string Config;
  std::string Shard;
  /// --summaries: written by a run over the whole database, read by a --shard run.
  std::string Summaries;
  std::string SarifRootOption; ///< --sarif-root
  std::string ConfigFile;
  std::string ProfilePath;          ///< --profile
  std::optional<double> FailOnCost; ///< --fail-on-cost
  bool IgnoreRepoConfig = false;
  std::optional<std::string> HeaderFilter;
  std::optional<std::string> ExcludeHeaderFilter;
  std::optional<bool> SystemHeaders;
  std::optional<std::string> WarningsAsErrors;
  std::optional<bool> UseColor;
  std::vector<std::string> ExtraArgs;
  std::vector<std::string> ExtraArgsBefore;
  std::vector<std::string> RemovedArgs;
  bool DumpConfig = false;
  bool ExplainConfig = false;
  bool VerifyConfig = false;
  bool AllowNoChecks = false;
  bool FixNotes = false;
  bool EnableCheckProfile = false;
  std::string VfsOverlay;
  std::string CacheDir;
  bool NoPch = false;
  unsigned TuTimeout = 600;
  std::vector<std::string> LoadPlugins; ///< --load (refused)
  /// The run's own arguments (after argv[0]), which worker processes get too.
  std::vector<std::string> RunArguments;

  // Resolved once by resolveRunOptions (in a worker: resolveWorkerOptions).
  /// The --config / --config-file configuration, read and parsed once.
  std::optional<clang::tidy::ClangTidyOptions> CommandLineConfig;
  /// The --line-filter / --diff line filter (clang-tidy's JSON format).
  std::string EffectiveLineFilter;
  /// The --profile, read once.
  std::optional<SyncProfile> LoadedProfile;
  /// --profile without ReportIntervalReads (ReportModuleMoves): interval reads
  /// (module moves) are analysed too, to label the syncs they make in the
  /// profile report; they are set aside in postProcess and never reported or
  /// fixed (resolveRunOptions decides).
  bool ProfileAddsIntervalReads = false;
  bool ProfileAddsModuleMoves = false;
  /// The directory SARIF paths are relative to: --sarif-root, else the git
  /// repository root, else the current directory; absolute.
  std::string SarifRoot;
};

/// Validates the options that need more than their parser and resolves the
/// rest of Options (the configuration, the profile, the line filter, ...);
/// nullopt when the run may go on, else its exit status (the error said).
std::optional<int> resolveRunOptions(RunOptions &Options);

/// A worker's side of resolveRunOptions: the --config configuration read again,
/// the values the run resolved taken from its Request; nullopt when the worker
/// may go on.
std::optional<int> resolveWorkerOptions(RunOptions &Options, const WorkerRequest &Request);

} // namespace torch_syncfree

#endif
