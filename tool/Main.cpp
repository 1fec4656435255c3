// torch-syncfree: the standalone front end, shaped like clang-tidy.
//   torch-syncfree [options] <source>... [-- <compiler flags>]
//   torch-syncfree [options] -p <build dir> [<source>...]
// It drives the same check classes as the plugin through clang-tidy's own
// driver (ClangTidyASTConsumerFactory, see CheckRunner.h), so NOLINT, .clang-tidy files and system-header
// filtering behave exactly as in clang-tidy. This file holds the command line
// (llvm::cl) and its conversion into one RunOptions; the batch run is the
// library in batch/ (batch/Batch.h), the language server the one in lsp/.
#include "CheckRunner.h"
#include "CompileCommandSanitizer.h"
#include "UnitWorker.h"
#include "batch/Batch.h"
#include "batch/ProjectSummaries.h"
#include "batch/RunOptions.h"
#include "lsp/LspServer.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#ifndef TORCH_SYNCFREE_VERSION
#define TORCH_SYNCFREE_VERSION "0.0.0"
#endif

using namespace clang;
using namespace llvm;
using namespace torch_syncfree;

namespace {

cl::OptionCategory Category("torch-syncfree options");

cl::list<std::string> Sources(cl::Positional, cl::desc("<source>..."), cl::cat(Category));
cl::opt<std::string> BuildPath("p", cl::desc("Build directory holding compile_commands.json"),
                               cl::value_desc("build dir"), cl::cat(Category));
cl::opt<std::string> ChecksGlobs("checks",
                                 cl::desc("Comma-separated globs of checks to run "
                                          "(default: torch-sync-*, or the .clang-tidy Checks)"),
                                 cl::cat(Category));
cl::opt<bool> ListChecks("list-checks", cl::desc("List the enabled checks and exit"),
                         cl::cat(Category));
cl::opt<bool> ApplyFixes("fix", cl::desc("Apply the suggested fixes to the files"),
                         cl::cat(Category));
cl::opt<bool> DryRun("dry-run", cl::desc("With --fix: print a unified diff, write nothing"),
                     cl::cat(Category));
cl::opt<std::string> FormatStyleOption(
    "format-style",
    cl::desc("With --fix: format the lines each fix changes as clang-tidy does: file (the fixed "
             "file's .clang-format; nothing when it has none), none, llvm, google, ... or "
             "{key: value, ...}; default: the .clang-tidy FormatStyle, else file (none with "
             "--ignore-repo-config)"),
    cl::value_desc("style"), cl::cat(Category));
cl::opt<bool> FixErrors("fix-errors",
                        cl::desc("Apply fixes even to translation units that do not compile"),
                        cl::cat(Category));
cl::opt<std::string> ExportFixes("export-fixes",
                                 cl::desc("Write the fixes as clang-apply-replacements YAML"),
                                 cl::value_desc("file.yaml"), cl::cat(Category));
cl::opt<OutputFormat> Format("format", cl::desc("Output format"),
                             cl::values(clEnumValN(OutputFormat::Text, "text", "clang-style diagnostics"),
                                        clEnumValN(OutputFormat::Json, "json", "one JSON array of findings"),
                                        clEnumValN(OutputFormat::Sarif, "sarif", "SARIF 2.1.0 (GitHub code scanning)")),
                             cl::init(OutputFormat::Text), cl::cat(Category));
cl::opt<unsigned> Jobs("j", cl::desc("Translation units analysed in parallel (default: the cores); "
                                     "-j N, -jN and -j=N"),
                       cl::init(0), cl::Prefix, cl::cat(Category));
cl::opt<FailOnClass> FailOn("fail-on",
                            cl::desc("Dependency classes that make the exit status 1 (default any)"),
                            cl::values(clEnumValN(FailOnClass::Any, "any", "every finding"),
                                       clEnumValN(FailOnClass::True, "true", "true dependencies"),
                                       clEnumValN(FailOnClass::False, "false", "false dependencies")),
                            cl::init(FailOnClass::Any), cl::cat(Category));
cl::opt<std::string> Baseline("baseline",
                              cl::desc("Report only findings not in this baseline file"),
                              cl::value_desc("file"), cl::cat(Category));
cl::opt<std::string> WriteBaseline("write-baseline",
                                   cl::desc("Write the current findings as a baseline file"),
                                   cl::value_desc("file"), cl::cat(Category));
cl::opt<std::string> LineFilter("line-filter",
                                cl::desc("Report only on these lines, as clang-tidy's "
                                         "--line-filter: [{\"name\":\"file.cpp\",\"lines\":[[1,9]]}]"),
                                cl::cat(Category));
cl::opt<std::string> DiffRef("diff",
                             cl::desc("Report only on lines changed since this git ref"),
                             cl::value_desc("git ref"), cl::cat(Category));
cl::opt<bool> Quiet("quiet", cl::desc("No progress lines or summary"), cl::cat(Category));
cl::opt<bool> PreCommit(
    "pre-commit",
    cl::desc("Run as pre-commit's hook: the file names follow `--` (never read as options); "
             "without --diff, only the lines a commit changes count when every file is staged, "
             "every line otherwise (--all-files, --files), the lines since "
             "$PRE_COMMIT_FROM_REF with --from-ref"),
    cl::cat(Category));
cl::opt<bool> Lsp("lsp", cl::desc("Serve the Language Server Protocol on stdin/stdout"),
                  cl::cat(Category));
cl::opt<std::string> ResourceDir("resource-dir",
                                cl::desc("clang's resource directory (builtin headers); "
                                         "default: the one of the clang the tool was built with"),
                                cl::cat(Category));
cl::opt<std::string> CompileCommandsDir(
    "compile-commands-dir",
    cl::desc("With --lsp: read compile_commands.json from this directory only (default: "
             "the file's directory or a parent, or a build*/ directory beside one)"),
    cl::cat(Category));
cl::opt<std::string> Config("config", cl::desc("A .clang-tidy configuration as YAML text"),
                            cl::cat(Category));
// clang-tidy's own options, with clang-tidy's meaning (docs/ci.md).
cl::opt<std::string> Shard("shard",
                           cl::desc("K/N: analyse only every N-th translation unit of the "
                                    "database, starting with the K-th (in path order)"),
                           cl::value_desc("K/N"), cl::cat(Category));
// NOLINTBEGIN(bugprone-throwing-static-initialization): as every option here, LLVM's registry
cl::opt<std::string>
    Summaries("summaries",
              cl::desc("Project summaries (what each unit defines and calls): a run over the whole "
                       "database writes them to this file; a run over part of it (--shard, --diff, "
                       "listed files) or the language server (--lsp) reads them, so its findings see "
                       "the other units"),
              cl::value_desc("file"), cl::cat(Category));
// NOLINTEND(bugprone-throwing-static-initialization)
cl::opt<std::string> SarifRootOption("sarif-root",
                                     cl::desc("Directory SARIF paths are relative to (%SRCROOT%); "
                                              "default: the git repository root, else the "
                                              "current directory"),
                                     cl::value_desc("dir"), cl::cat(Category));
cl::opt<std::string> ConfigFile("config-file",
                                cl::desc("Read the configuration from this .clang-tidy-style file"),
                                cl::value_desc("file"), cl::cat(Category));
cl::opt<std::string> ProfilePath(
    "profile",
    cl::desc("Join a sync profile of the program (the probe library's JSON, docs/profiles.md) "
             "with the findings: measured counts and waits, missed syncs, findings never run"),
    cl::value_desc("file"), cl::cat(Category));
cl::opt<double> FailOnCost(
    "fail-on-cost",
    cl::desc("With --profile: only findings whose measured host wait is at least this percent "
             "of a step fail the run"),
    cl::value_desc("percent"), cl::init(0), cl::cat(Category));
cl::opt<bool> IgnoreRepoConfig(
    "ignore-repo-config",
    cl::desc("Ignore the repository's .clang-tidy files: the defaults and this command line "
             "decide the checks and their options (for CI on untrusted code)"),
    cl::cat(Category));
cl::opt<std::string> HeaderFilter("header-filter",
                                  cl::desc("Regular expression of the headers whose findings are "
                                           "shown (default: every non-system header)"),
                                  cl::cat(Category));
cl::opt<std::string> ExcludeHeaderFilter("exclude-header-filter",
                                         cl::desc("Regular expression of headers whose findings "
                                                  "are not shown"),
                                         cl::cat(Category));
cl::opt<bool> SystemHeaders("system-headers", cl::desc("Show findings in system headers too"),
                            cl::cat(Category));
cl::opt<std::string> WarningsAsErrors("warnings-as-errors",
                                      cl::desc("Globs of checks whose findings are errors; any "
                                               "such finding makes the exit status 1"),
                                      cl::cat(Category));
cl::list<std::string> ExtraArgs("extra-arg", cl::desc("Argument appended to every compile command"),
                                cl::cat(Category));
cl::list<std::string> ExtraArgsBefore("extra-arg-before",
                                      cl::desc("Argument prepended to every compile command"),
                                      cl::cat(Category));
cl::list<std::string> RemovedArgs("removed-arg",
                                  cl::desc("Argument removed from every compile command"),
                                  cl::cat(Category));
cl::opt<bool> DumpConfig("dump-config", cl::desc("Print the effective configuration and exit"),
                         cl::cat(Category));
cl::opt<bool> ExplainConfig("explain-config",
                            cl::desc("For each enabled check, say where it was enabled, and exit"),
                            cl::cat(Category));
cl::opt<bool> VerifyConfig("verify-config",
                           cl::desc("Check the configuration (unknown checks and options) and exit"),
                           cl::cat(Category));
cl::opt<bool> UseColor("use-color", cl::desc("Colours in text diagnostics (default: when a "
                                             "terminal)"),
                       cl::cat(Category));
cl::opt<std::string> VfsOverlay("vfsoverlay",
                                cl::desc("Overlay the file system described by this YAML file"),
                                cl::value_desc("file"), cl::cat(Category));
cl::opt<bool> AllowNoChecks("allow-no-checks",
                            cl::desc("No enabled check is not an error (exit 0)"),
                            cl::cat(Category));
cl::opt<bool> FixNotes("fix-notes",
                       cl::desc("With --fix: when a finding has no fix but exactly one of its "
                                "notes has one, apply that"),
                       cl::cat(Category));
cl::opt<bool> EnableCheckProfile("enable-check-profile",
                                 cl::desc("Print the time each check took"), cl::cat(Category));
cl::opt<std::string> CacheDir(
    "cache-dir",
    cl::desc("Directory of the shared precompiled headers and, when given, of the results "
             "cache (default for the headers: <build dir>/.torch-syncfree-cache with -p, else "
             "$XDG_CACHE_HOME/torch-syncfree)"),
    cl::value_desc("dir"), cl::cat(Category));
cl::opt<bool> NoPch("no-pch",
                    cl::desc("Parse every translation unit in full (no shared precompiled "
                             "headers)"),
                    cl::cat(Category));
cl::opt<unsigned> TuTimeout(
    "tu-timeout",
    cl::desc("Seconds one translation unit may take; each is analysed in a process of its "
             "own, so a crash or a hang is that unit's error (0: no limit, analysed in this "
             "process; default 600)"),
    cl::init(600), cl::value_desc("seconds"), cl::cat(Category));
// A batch run's worker process (UnitWorker.h): not for users.
cl::opt<std::string> WorkerRequestPath("internal-worker-request", cl::ReallyHidden,
                                       cl::cat(Category));
cl::opt<std::string> PchRequestPath("internal-pch-request", cl::ReallyHidden,
                                    cl::desc("A shared PCH build's worker process: not for users"));
cl::opt<std::string> WorkerResponsePath("internal-worker-response", cl::ReallyHidden,
                                        cl::cat(Category));
cl::list<std::string> LoadPlugins("load", cl::desc("Not supported: the checks are built in "
                                                   "(load the plugin into clang-tidy instead)"),
                                  cl::cat(Category));

/// The command line as one RunOptions (the run and its workers alike:
/// batch/RunOptions.h). RunArguments: the run's own arguments (after argv[0]).
RunOptions fromCommandLine(std::vector<std::string> RunArguments) {
  RunOptions O;
  O.Sources.assign(Sources.begin(), Sources.end());
  O.BuildPath = BuildPath;
  O.ChecksGlobs = ChecksGlobs;
  O.ListChecks = ListChecks;
  O.ApplyFixes = ApplyFixes;
  O.DryRun = DryRun;
  if (FormatStyleOption.getNumOccurrences())
    O.FormatStyle = FormatStyleOption;
  O.FixErrors = FixErrors;
  O.ExportFixes = ExportFixes;
  O.Format = Format;
  O.Jobs = Jobs;
  O.FailOn = FailOn;
  O.Baseline = Baseline;
  O.WriteBaseline = WriteBaseline;
  O.LineFilter = LineFilter;
  O.DiffRef = DiffRef;
  O.Quiet = Quiet;
  O.PreCommit = PreCommit;
  O.Lsp = Lsp;
  O.ResourceDir = ResourceDir;
  O.CompileCommandsDir = CompileCommandsDir;
  O.Config = Config;
  O.Shard = Shard;
  O.Summaries = Summaries;
  O.SarifRootOption = SarifRootOption;
  O.ConfigFile = ConfigFile;
  O.ProfilePath = ProfilePath;
  if (FailOnCost.getNumOccurrences())
    O.FailOnCost = FailOnCost;
  O.IgnoreRepoConfig = IgnoreRepoConfig;
  if (HeaderFilter.getNumOccurrences())
    O.HeaderFilter = HeaderFilter;
  if (ExcludeHeaderFilter.getNumOccurrences())
    O.ExcludeHeaderFilter = ExcludeHeaderFilter;
  if (SystemHeaders.getNumOccurrences())
    O.SystemHeaders = SystemHeaders;
  if (WarningsAsErrors.getNumOccurrences())
    O.WarningsAsErrors = WarningsAsErrors;
  if (UseColor.getNumOccurrences())
    O.UseColor = UseColor;
  O.ExtraArgs.assign(ExtraArgs.begin(), ExtraArgs.end());
  O.ExtraArgsBefore.assign(ExtraArgsBefore.begin(), ExtraArgsBefore.end());
  O.RemovedArgs.assign(RemovedArgs.begin(), RemovedArgs.end());
  O.DumpConfig = DumpConfig;
  O.ExplainConfig = ExplainConfig;
  O.VerifyConfig = VerifyConfig;
  O.AllowNoChecks = AllowNoChecks;
  O.FixNotes = FixNotes;
  O.EnableCheckProfile = EnableCheckProfile;
  O.VfsOverlay = VfsOverlay;
  O.CacheDir = CacheDir;
  O.NoPch = NoPch;
  O.TuTimeout = TuTimeout;
  O.LoadPlugins.assign(LoadPlugins.begin(), LoadPlugins.end());
  O.RunArguments = std::move(RunArguments);
  return O;
}

} // namespace

int main(int argc, const char **argv) {
  InitLLVM X(argc, argv);
  cl::SetVersionPrinter([](raw_ostream &OS) {
    OS << "torch-syncfree " << TORCH_SYNCFREE_VERSION << "\n"
       << "  LLVM/Clang " << LLVM_VERSION_STRING << " (clang-tidy libraries)\n";
  });
  torch_syncfree::scrubCompilerEnvironment();
  cl::HideUnrelatedOptions(Category);
  // Signal handlers that turn a crash on a worker thread into that unit's error
  // (analyseUnits); without a recovery context on the thread, crashes behave as before.
  CrashRecoveryContext::Enable();
  torch_syncfree::prepareClangForThreads();

  std::vector<std::string> RunArguments(argv + 1, argv + argc);
  // --pre-commit: pre-commit appends the staged file names to the hook's
  // arguments; a file named `--write-baseline=x.cpp` or `@opts.cpp` must be a
  // file, never an option or a response file (issue 38). They follow `--`,
  // and are taken off before llvm::cl (which expands @files) sees them.
  std::vector<std::string> HookFiles;
  {
    int Separator = 1;
    while (Separator < argc && StringRef(argv[Separator]) != "--")
      ++Separator;
    bool Hook = llvm::any_of(ArrayRef<const char *>(argv + 1, argv + Separator),
                             [](const char *A) { return StringRef(A) == "--pre-commit"; });
    if (Hook) {
      if (Separator == argc)
        return usageError("--pre-commit: the file names must follow `--` (keep \"--\" last in "
                          "the hook's args)");
      HookFiles.assign(argv + Separator + 1, argv + argc);
      argc = Separator; // the rest are file names, not compile flags
    }
  }
  // Everything after `--` is the compile command for the listed sources.
  std::string FixedError;
  std::unique_ptr<tooling::CompilationDatabase> Fixed =
      tooling::FixedCompilationDatabase::loadFromCommandLine(argc, argv, FixedError);
  std::string ParseErrors;
  raw_string_ostream ParseErrorStream(ParseErrors);
  if (!cl::ParseCommandLineOptions(argc, argv, "torch-syncfree: find and fix host-device "
                                   "synchronisations in LibTorch code\n",
                                   &ParseErrorStream)) {
    // An option's value parser (`--format=xml`) prints its own one-line error.
    if (ParseErrors.empty())
      return ExitUsage;
    StringRef First = StringRef(ParseErrors).split('\n').first;
    First.consume_front(argv[0]);
    First = First.ltrim(": ");
    return usageError(First.empty() ? "invalid command line" : First);
  }

  for (const std::string &File : HookFiles)
    Sources.addValue(File);
  RunOptions Options = fromCommandLine(std::move(RunArguments));
  if (!WorkerRequestPath.empty())
    return runWorker(std::move(Options), WorkerRequestPath, WorkerResponsePath, std::move(Fixed));
  if (!PchRequestPath.empty())
    return runPchWorker(PchRequestPath, WorkerResponsePath);
  if (std::optional<int> Exit = resolveRunOptions(Options))
    return *Exit;
  if (Options.Lsp) {
    LspOptions Server;
    Server.CompileCommandsDir = Options.CompileCommandsDir;
    if (!Options.Summaries.empty())
      Server.JoinSummaries = [Path = Options.Summaries](StringRef File,
                                                        std::vector<FindingRecord> &Findings) {
        return joinWithSummaries(Path, File, Findings);
      };
    // Shared PCHs are compiled in worker processes: a header that crashes
    // clang fails that PCH, never the server (issue 38).
    std::string Self = sys::fs::getMainExecutable(nullptr, (void *)&makeUnitFileSystem);
    if (Options.TuTimeout > 0 && !Self.empty()) {
      unsigned Limit = Options.TuTimeout;
      Server.PchBuilder =
          PchBuilderProcess{[Self, Limit](const tooling::CompileCommand &Command, const std::string &Header,
                                          const std::string &Output) {
            return runPchInWorker(Self, Command, Header, Output, Limit);
          }};
    }
    if (Options.LoadedProfile)
      Server.Profile = std::make_shared<const SyncProfile>(*Options.LoadedProfile);
    auto Shared = std::make_shared<const RunOptions>(std::move(Options));
    Server.Options = [Shared] { return makeOptionsProvider(*Shared, /*LanguageServer=*/true); };
    return runLspServer(std::move(Server));
  }
  return runBatch(Options, std::move(Fixed));
}
