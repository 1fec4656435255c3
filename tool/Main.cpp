// torch-syncfree: the standalone front end, shaped like clang-tidy.
//   torch-syncfree [options] <source>... [-- <compiler flags>]
//   torch-syncfree [options] -p <build dir> [<source>...]
// It drives the same check classes as the plugin through clang-tidy's own
// driver (ClangTidyASTConsumerFactory, see CheckRunner.h), so NOLINT, .clang-tidy files and system-header
// filtering behave exactly as in clang-tidy.
#include "CacheAuth.h"
#include "CheckCatalog.h"
#include "CheckRunner.h"
#include "CompileCommandSanitizer.h"
#include "CompileFlags.h"
#include "ConfigAudit.h"
#include "FixApplier.h"
#include "Formatters.h"
#include "InputFiles.h"
#include "JsonLimits.h"
#include "LspServer.h"
#include "PrivateDirectory.h"
#include "ProfileJoin.h"
#include "Reporting.h"
#include "ResultsCache.h"
#include "SafeFileSystem.h"
#include "SharedPch.h"
#include "StableOrder.h"
#include "UnitSelection.h"
#include "UnitWorker.h"

#include "clang-tidy/ClangTidy.h"
#include "clang-tidy/ClangTidyDiagnosticConsumer.h"
#include "clang-tidy/ClangTidyOptions.h"
#include "clang-tidy/GlobList.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include <set>
#include <unistd.h>
#include "llvm/Support/Regex.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include <numeric>
#include <atomic>
#include <csignal>
#include <mutex>
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"

#ifndef TORCH_SYNCFREE_VERSION
#define TORCH_SYNCFREE_VERSION "0.0.0"
#endif

using namespace clang;
using namespace clang::tidy;
using namespace llvm;
using torch_syncfree::FindingRecord;

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
    cl::desc("With --fix: format the code around each fix as clang-tidy does: none (default), "
             "file (.clang-format), llvm, google, ... or {key: value, ...}; default: the "
             ".clang-tidy FormatStyle"),
    cl::value_desc("style"), cl::cat(Category));
cl::opt<bool> FixErrors("fix-errors",
                        cl::desc("Apply fixes even to translation units that do not compile"),
                        cl::cat(Category));
cl::opt<std::string> ExportFixes("export-fixes",
                                 cl::desc("Write the fixes as clang-apply-replacements YAML"),
                                 cl::value_desc("file.yaml"), cl::cat(Category));
enum class OutputFormat { Text, Json, Sarif };
cl::opt<OutputFormat> Format("format", cl::desc("Output format"),
                             cl::values(clEnumValN(OutputFormat::Text, "text", "clang-style diagnostics"),
                                        clEnumValN(OutputFormat::Json, "json", "one JSON array of findings"),
                                        clEnumValN(OutputFormat::Sarif, "sarif", "SARIF 2.1.0 (GitHub code scanning)")),
                             cl::init(OutputFormat::Text), cl::cat(Category));
cl::opt<unsigned> Jobs("j", cl::desc("Translation units analysed in parallel (default: the cores); "
                                     "-j N, -jN and -j=N"),
                       cl::init(0), cl::Prefix, cl::cat(Category));
/// --fail-on: the dependency classes that make the exit status 1.
enum class FailOnClass { Any, True, False };
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

constexpr int ExitClean = 0, ExitFindings = 1, ExitUsage = 2;

/// "1 finding", "2 findings".
std::string counted(size_t N, StringRef Noun) {
  return std::to_string(N) + " " + Noun.str() + (N == 1 ? "" : "s");
}

int usageError(const Twine &Message) {
  errs() << "torch-syncfree: error: " << Message << "\n";
  return ExitUsage;
}

/// The --line-filter / --diff line filter (clang-tidy's JSON format); parsed once.
std::string EffectiveLineFilter;

/// The run's own arguments (after argv[0]), which worker processes get too.
std::vector<std::string> RunArguments;

/// The --profile, read once by checkOptions().
std::optional<torch_syncfree::SyncProfile> LoadedProfile;

/// --profile without ReportIntervalReads (ReportModuleMoves): interval reads
/// (module moves) are analysed too, to label the syncs they make in the
/// profile report; they are set aside in postProcess and never reported or
/// fixed (checkOptions decides).
bool ProfileAddsIntervalReads = false;
bool ProfileAddsModuleMoves = false;

/// The --config / --config-file configuration, read and parsed once by
/// checkOptions() (front-end state: the options of this process's run).
std::optional<ClangTidyOptions> CommandLineConfig;

/// Reads and parses --config / --config-file; an error message, or "".
std::string loadCommandLineConfig() {
  if (Config.empty() && ConfigFile.empty())
    return "";
  std::string Text = Config;
  std::string Origin = "--config";
  if (!ConfigFile.empty()) {
    std::string Why;
    auto Buffer = torch_syncfree::readInputFile(ConfigFile, torch_syncfree::MaxConfigBytes, Why);
    if (!Buffer)
      return "cannot read --config-file '" + torch_syncfree::printable(ConfigFile) + "': " + Why;
    Text = Buffer->getBuffer().str();
    Origin = ConfigFile;
  }
  if (std::string Deep = torch_syncfree::checkYamlNesting(Text); !Deep.empty())
    return "invalid configuration in " + torch_syncfree::printable(Origin) + ": " + Deep;
  auto Parsed = parseConfiguration(MemoryBufferRef(Text, Origin));
  if (!Parsed)
    return "invalid configuration in " + Origin + ": " + Parsed.getError().message();
  CommandLineConfig = *Parsed;
  return "";
}

/// \p LanguageServer: the editor applies one quick fix at a time, so a fix that
/// relies on a definition another fix adds carries its own (guarded) copy.
/// The line filter and the configuration were validated by checkOptions().
std::unique_ptr<ClangTidyOptionsProvider> makeOptionsProvider(bool LanguageServer = false) {
  ClangTidyGlobalOptions Global;
  if (!EffectiveLineFilter.empty())
    (void)parseLineFilter(EffectiveLineFilter, Global);
  ClangTidyOptions Defaults = ClangTidyOptions::getDefaults();
  Defaults.Checks = "-*,torch-sync-*";
  Defaults.HeaderFilterRegex = ".*"; // user headers too; system headers never
  Defaults.SystemHeaders = false;
  ClangTidyOptions Overrides;
  if (!ChecksGlobs.empty())
    Overrides.Checks = "-*," + ChecksGlobs;
  if (HeaderFilter.getNumOccurrences())
    Overrides.HeaderFilterRegex = HeaderFilter;
  if (ExcludeHeaderFilter.getNumOccurrences())
    Overrides.ExcludeHeaderFilterRegex = ExcludeHeaderFilter;
  if (SystemHeaders.getNumOccurrences())
    Overrides.SystemHeaders = SystemHeaders;
  if (WarningsAsErrors.getNumOccurrences())
    Overrides.WarningsAsErrors = WarningsAsErrors;
  if (UseColor.getNumOccurrences())
    Overrides.UseColor = UseColor;
  if (LanguageServer)
    Overrides.CheckOptions["HelperInEveryFix"] = ClangTidyOptions::ClangTidyValue("true");
  else {
    if (ProfileAddsIntervalReads)
      Overrides.CheckOptions["ReportIntervalReads"] = ClangTidyOptions::ClangTidyValue("true");
    if (ProfileAddsModuleMoves)
      Overrides.CheckOptions["ReportModuleMoves"] = ClangTidyOptions::ClangTidyValue("true");
  }
  // --extra-arg values go through the same sanitiser as .clang-tidy ExtraArgs.
  if (!ExtraArgs.empty())
    Overrides.ExtraArgs = std::vector<std::string>(ExtraArgs.begin(), ExtraArgs.end());
  if (!ExtraArgsBefore.empty())
    Overrides.ExtraArgsBefore =
        std::vector<std::string>(ExtraArgsBefore.begin(), ExtraArgsBefore.end());
  std::vector<std::string> Removed(RemovedArgs.begin(), RemovedArgs.end());
  if (IgnoreRepoConfig && !CommandLineConfig)
    return torch_syncfree::sanitizeOptionsProvider(
        std::make_unique<ConfigOptionsProvider>(Global, Defaults, ClangTidyOptions(), Overrides),
        std::move(Removed));
  if (CommandLineConfig)
    return torch_syncfree::sanitizeOptionsProvider(
        std::make_unique<ConfigOptionsProvider>(Global, Defaults, *CommandLineConfig, Overrides),
        std::move(Removed));
  // .clang-tidy files through the bounded reader (InputFiles.h): ~120 KB of
  // nested '[' overflowed the YAML parser's stack (issue 38).
  return torch_syncfree::sanitizeOptionsProvider(
      std::make_unique<FileOptionsProvider>(
          Global, Defaults, Overrides,
          torch_syncfree::makeConfigFileSystem(vfs::getRealFileSystem())),
      std::move(Removed));
}

/// The output of a git command run in the current directory ("" when it fails).
std::optional<std::string> gitOutput(ArrayRef<StringRef> Arguments) {
  auto Git = sys::findProgramByName("git");
  SmallString<128> Output;
  int FD = -1;
  if (!Git || torch_syncfree::createPrivateTemporaryFile("torch-syncfree-git", "txt", FD, Output))
    return std::nullopt;
  ::close(FD);
  std::optional<StringRef> Redirects[] = {StringRef(""), StringRef(Output), StringRef("")};
  int Code = sys::ExecuteAndWait(*Git, Arguments, std::nullopt, Redirects);
  auto Text = MemoryBuffer::getFile(Output);
  torch_syncfree::removePrivateTemporaryFile(Output);
  if (Code != 0 || !Text)
    return std::nullopt;
  return (*Text)->getBuffer().str();
}

/// --pre-commit without --diff: which lines count. pre-commit passes the staged
/// files on a commit (then only the staged lines count: --diff=HEAD, the
/// unstaged changes being stashed), every file with --all-files or --files
/// (every line counts: a --diff=HEAD there passed every finding), and the
/// files changed in a range with --from-ref (its lines since that ref).
std::string preCommitDiffRef() {
  if (const char *From = getenv("PRE_COMMIT_FROM_REF"); From && *From && getenv("PRE_COMMIT_TO_REF"))
    return From;
  std::optional<std::string> Staged =
      gitOutput({"git", "diff", "--cached", "--name-only", "-z", "--no-renames", "--relative"});
  if (!Staged || Sources.empty())
    return "";
  std::set<std::string> StagedFiles;
  for (StringRef Name : split(*Staged, '\0'))
    if (!Name.empty())
      StagedFiles.insert(Name.str());
  for (const std::string &File : Sources) {
    SmallString<256> Normal(File);
    sys::path::remove_dots(Normal, /*remove_dot_dot=*/true);
    if (!StagedFiles.count(std::string(Normal)))
      return "";
  }
  return "HEAD";
}

/// Lines changed since a git ref, as a clang-tidy line filter (JSON). Runs
/// `git diff -U0 <ref>` in the current directory; returns an error message in Error.
std::string lineFilterFromGitDiff(StringRef Ref, std::string &Error) {
  auto Git = sys::findProgramByName("git");
  if (!Git) {
    Error = "--diff needs git on the PATH";
    return "";
  }
  SmallString<128> Output, TopOutput;
  int OutputFD = -1, TopFD = -1;
  if (torch_syncfree::createPrivateTemporaryFile("torch-syncfree-diff", "txt", OutputFD, Output) ||
      torch_syncfree::createPrivateTemporaryFile("torch-syncfree-top", "txt", TopFD, TopOutput)) {
    if (!Output.empty())
      ::close(OutputFD), torch_syncfree::removePrivateTemporaryFile(Output);
    Error = "--diff needs a writable temporary directory";
    return "";
  }
  ::close(OutputFD);
  ::close(TopFD);
  std::optional<StringRef> Redirects[] = {std::nullopt, StringRef(Output), StringRef("")};
  std::string RefArg = Ref.str();
  // The ref is a value, never an option: --end-of-options stops git from
  // reading `--output=<path>` (say) as one.
  int Code = sys::ExecuteAndWait(*Git, {"git", "diff", "-U0", "--no-color", "--end-of-options",
                                        RefArg, "--"},
                                 std::nullopt, Redirects);
  std::optional<StringRef> TopRedirects[] = {std::nullopt, StringRef(TopOutput), StringRef("")};
  sys::ExecuteAndWait(*Git, {"git", "rev-parse", "--show-toplevel"}, std::nullopt, TopRedirects);
  auto Diff = MemoryBuffer::getFile(Output);
  auto Top = MemoryBuffer::getFile(TopOutput);
  torch_syncfree::removePrivateTemporaryFile(Output);
  torch_syncfree::removePrivateTemporaryFile(TopOutput);
  if (Code != 0 || !Diff) {
    Error = "git diff " + Ref.str() + " failed (is it a git ref of this repository?)";
    return "";
  }
  std::string Root = Top ? (*Top)->getBuffer().trim().str() : "";
  json::Array Files;
  json::Array *Lines = nullptr;
  for (StringRef Line : split((*Diff)->getBuffer(), '\n')) {
    if (Line.consume_front("+++ ")) {
      Lines = nullptr;
      if (Line == "/dev/null")
        continue;
      Line.consume_front("b/");
      SmallString<256> Path(Root);
      sys::path::append(Path, Line);
      Files.push_back(json::Object{{"name", std::string(Path)}, {"lines", json::Array{}}});
      Lines = Files.back().getAsObject()->getArray("lines");
    } else if (Lines && Line.consume_front("@@ ")) {
      // @@ -a,b +c,d @@: lines c .. c+d-1 of the new file (d defaults to 1).
      StringRef New = Line.split(' ').second.split(' ').first;
      New.consume_front("+");
      unsigned Start = 0, Count = 1;
      auto [StartText, CountText] = New.split(',');
      StartText.getAsInteger(10, Start);
      if (!CountText.empty())
        CountText.getAsInteger(10, Count);
      if (Count > 0)
        Lines->push_back(json::Array{Start, Start + Count - 1});
    }
  }
  // A changed file with no added lines filters everything out of it: say so with
  // a line no file has rather than no ranges (no ranges would mean "all lines").
  const unsigned NoLine = 1000000000;
  for (json::Value &File : Files)
    if (File.getAsObject()->getArray("lines")->empty())
      File.getAsObject()->getArray("lines")->push_back(json::Array{NoLine, NoLine});
  if (Files.empty()) // nothing changed: a filter that matches no line
    Files.push_back(json::Object{{"name", "-"}, {"lines", json::Array{json::Array{NoLine, NoLine}}}});
  std::string Text;
  raw_string_ostream OS(Text);
  OS << json::Value(std::move(Files));
  return Text;
}


/// The result of analysing one translation unit.
struct UnitResult {
  std::unique_ptr<ClangTidyContext> Context;
  std::vector<FindingRecord> Findings;
  std::string CompileError;
  bool CannotAnalyse = false; ///< no usable compile command (CompileError says why)
};

/// One batch run, stage by stage: the inputs (database, files), the analysis
/// (units, caches, counters), the post-processed findings and the fixes.
struct Batch {
  std::string SarifRoot;
  // Inputs.
  std::unique_ptr<torch_syncfree::SanitizedDatabase> Compilations;
  std::vector<std::string> Files;      ///< the files asked for, absolute
  std::vector<std::string> ParseFiles; ///< per file, the TU parsed for it
  bool Interpolate = false;
  // Analysis.
  std::chrono::steady_clock::time_point Clock;
  IntrusiveRefCntPtr<vfs::OverlayFileSystem> BaseFS =
      makeIntrusiveRefCnt<vfs::OverlayFileSystem>(vfs::getRealFileSystem());
  std::vector<UnitResult> Units;
  std::unique_ptr<ClangTidyOptionsProvider> PchOptions;
  std::optional<torch_syncfree::CacheAuthenticator> UserKey;
  std::unique_ptr<torch_syncfree::SharedPchCache> Pch;
  std::string PchDirectory;
  std::unique_ptr<torch_syncfree::UnitSelection> Selection;
  std::unique_ptr<torch_syncfree::ResultsCache> Results;
  std::atomic<unsigned> NotSelected{0};
  std::atomic<unsigned> PlainRetries{0}; ///< units that compiled only without the shortcuts
  bool ShowProgress = false;
  unsigned Threads = 1;
  std::atomic<unsigned> Crashed{0}; ///< units whose analysis crashed (recovered)
  // Post-processing and output.
  std::unique_ptr<torch_syncfree::FindingFormatter> Formatter;
  std::vector<torch_syncfree::ConfigNotice> ConfigNotices; ///< what .clang-tidy files changed
  std::vector<FindingRecord> AllFindings;
  /// --profile: interval reads and module moves analysed only to label their
  /// syncs (never reported).
  std::vector<FindingRecord> ProfileOnly;
  std::vector<torch_syncfree::ReportedFinding> Reported;
  unsigned Baselined = 0;
  bool CompileFailed = false;
  torch_syncfree::FixSummary Fixes;
};

/// With --profile, whether the findings of Option (ReportIntervalReads,
/// ReportModuleMoves) must be added: the user did not ask for them, globally
/// or for a check. The run and its workers decide alike, from the same
/// arguments and configuration files.
bool decideProfileAdds(StringRef Option) {
  if (ProfilePath.empty())
    return false;
  SmallString<256> ConfigFor;
  if (Sources.empty()) {
    sys::fs::current_path(ConfigFor);
    sys::path::append(ConfigFor, "x.cpp");
  } else {
    ConfigFor = Sources.front();
  }
  ClangTidyOptions Effective = makeOptionsProvider()->getOptions(ConfigFor);
  return !llvm::any_of(Effective.CheckOptions, [&](const auto &Entry) {
    StringRef Key = Entry.getKey();
    StringRef Value = Entry.getValue().Value;
    return (Key == Option || Key.ends_with(("." + Option).str())) &&
           (Value.equals_insensitive("true") || Value == "1");
  });
}

/// Validates the options that need more than their parser; nullopt when the run may go on.
std::optional<int> checkOptions(std::string &SarifRoot) {
  if (!LoadPlugins.empty())
    return usageError("--load is not supported: torch-syncfree runs its own checks (to load "
                      "plugins, run clang-tidy-22 --load=...)");
  if (!Config.empty() && !ConfigFile.empty())
    return usageError("--config and --config-file cannot be combined");
  if (std::string Error = loadCommandLineConfig(); !Error.empty())
    return usageError(Error);
  if (!ProfilePath.empty()) {
    std::string Error;
    LoadedProfile = torch_syncfree::loadProfile(ProfilePath, Error);
    if (!LoadedProfile)
      return usageError(Error);
  } else if (FailOnCost.getNumOccurrences()) {
    return usageError("--fail-on-cost needs --profile");
  }
  // Without step marks no finding has a share of a step: every one would pass.
  if (FailOnCost.getNumOccurrences() && LoadedProfile &&
      (!LoadedProfile->Steps || LoadedProfile->StepMs <= 0))
    return usageError("--fail-on-cost needs a profile with step marks (torch_syncfree::probe::step(); "
                      "this one has none)");
  ProfileAddsIntervalReads = decideProfileAdds("ReportIntervalReads");
  ProfileAddsModuleMoves = decideProfileAdds("ReportModuleMoves");
  {
    SmallString<256> Root(SarifRootOption);
    if (Root.empty())
      sys::fs::current_path(Root), Root = torch_syncfree::sarifRootFor(Root);
    sys::fs::make_absolute(Root);
    sys::path::remove_dots(Root, true);
    SarifRoot = std::string(Root);
  }
  for (const auto *Filter : {&HeaderFilter, &ExcludeHeaderFilter}) {
    std::string Why;
    if (Filter->getNumOccurrences() && !Regex(*Filter).isValid(Why))
      return usageError("invalid --" + Filter->ArgStr + " regular expression '" + *Filter + "': " + Why);
  }
  if (!ResourceDir.empty())
    torch_syncfree::ToolchainPaths::get().ResourceDir = ResourceDir;
  if (PreCommit && DiffRef.empty() && LineFilter.empty())
    DiffRef = preCommitDiffRef();
  if (StringRef(DiffRef).starts_with("-"))
    return usageError("--diff expects a git ref, not an option: '" + DiffRef + "'");
  if (!LineFilter.empty()) {
    std::string Deep = torch_syncfree::checkJsonNesting(LineFilter);
    if (!Deep.empty())
      return usageError("invalid --line-filter: " + Deep);
  }
  if (!LineFilter.empty() && !DiffRef.empty())
    return usageError("--line-filter and --diff cannot be combined");
  EffectiveLineFilter = LineFilter;
  if (!DiffRef.empty()) {
    std::string Error;
    EffectiveLineFilter = lineFilterFromGitDiff(DiffRef, Error);
    if (!Error.empty())
      return usageError(Error);
  }
  if (!EffectiveLineFilter.empty() && getenv("TORCH_SYNCFREE_SHOW_LINE_FILTER"))
    errs() << "torch-syncfree: line filter: " << EffectiveLineFilter << "\n";
  if (!EffectiveLineFilter.empty()) {
    ClangTidyGlobalOptions Probe;
    if (parseLineFilter(EffectiveLineFilter, Probe))
      return usageError("invalid --line-filter (expected clang-tidy's JSON line filter)");
  }
  return std::nullopt;
}

/// --list-checks, --dump-config, --explain-config, --verify-config, and the
/// refusal to run with no check enabled; nullopt when the run may go on.
std::optional<int> runConfigCommands() {
  // The configuration applies per file; the configuration commands read the
  // one of the first source, or of the current directory (as clang-tidy).
  std::string ConfigFor;
  {
    SmallString<256> Path(Sources.empty() ? "dummy" : StringRef(Sources.front()));
    sys::fs::make_absolute(Path);
    ConfigFor = std::string(Path);
  }
  if (ListChecks || DumpConfig || ExplainConfig || VerifyConfig) {
    auto Provider = makeOptionsProvider();
    ClangTidyOptions Options = Provider->getOptions(ConfigFor);
    std::vector<std::string> Enabled = getCheckNames(Options, false, false);
    if (DumpConfig) {
      outs() << configurationAsText(ClangTidyOptions::getDefaults().merge(Options, 0)) << "\n";
      return ExitClean;
    }
    if (ExplainConfig) {
      auto Raw = Provider->getRawOptions(ConfigFor);
      for (const std::string &Check : Enabled)
        for (const auto &[Opts, Source] : llvm::reverse(Raw))
          if (Opts.Checks && GlobList(*Opts.Checks).contains(Check)) {
            outs() << "'" << Check << "' is enabled in the " << Source << ".\n";
            break;
          }
      return ExitClean;
    }
    if (VerifyConfig) {
      std::vector<std::string> Problems = torch_syncfree::configProblems(Options);
      for (const std::string &Problem : Problems)
        errs() << "torch-syncfree: error: " << Problem << "\n";
      if (!Problems.empty())
        return ExitUsage;
      outs() << "No config errors detected.\n";
      return ExitClean;
    }
    outs() << "Enabled checks:\n";
    for (const std::string &Name : Enabled)
      if (const auto *Info = torch_syncfree::findCheck(Name))
        outs() << "    " << Info->Name << "  " << Info->Summary << "\n";
    return ExitClean;
  }
  {
    // No enabled check is an error (a CI job would pass having checked
    // nothing), as are check names that match no check.
    ClangTidyOptions Options = makeOptionsProvider()->getOptions(ConfigFor);
    for (const std::string &Problem : torch_syncfree::configProblems(Options))
      errs() << "torch-syncfree: warning: " << Problem << "\n";
    if (getCheckNames(Options, false, false).empty()) {
      if (AllowNoChecks) {
        errs() << "torch-syncfree: no checks enabled; nothing to do (--allow-no-checks)\n";
        return ExitClean;
      }
      return usageError("no checks enabled (see --checks, --config and .clang-tidy; "
                        "--allow-no-checks makes this exit 0)");
    }
  }
  return std::nullopt;
}

/// The compilation database and the files to analyse (each with the TU parsed
/// for it); an exit status when there is nothing to do or the input is bad.
/// The compilation database of the run (a worker process loads it too).
std::optional<int> loadDatabase(std::unique_ptr<tooling::CompilationDatabase> Fixed, Batch &B) {
  auto &Compilations = B.Compilations;
  // Files a database does not list (headers from pre-commit, new sources) get
  // the flags clang interpolates from the closest entry, as in clangd; flags
  // after `--` apply to every file as given.
  bool FromDashDash = false;
  if (!BuildPath.empty()) {
    SmallString<256> JsonPath(BuildPath);
    sys::path::append(JsonPath, "compile_commands.json");
    if (!sys::fs::exists(JsonPath))
      return usageError("no compile_commands.json in '" + BuildPath + "'");
    std::string Error;
    Compilations = torch_syncfree::loadCompileCommands(BuildPath, Error);
    if (!Compilations)
      return usageError(Error);
  } else if (Fixed) {
    Compilations = std::make_unique<torch_syncfree::SanitizedDatabase>(std::move(Fixed));
    FromDashDash = true;
  } else {
    if (Sources.empty())
      return usageError("no input files (give sources, or -p <build dir>)");
    std::string Error;
    std::unique_ptr<tooling::CompilationDatabase> Detected =
        tooling::CompilationDatabase::autoDetectFromSource(Sources.front(), Error);
    if (!Detected)
      return usageError("no compile command for '" + Sources.front() +
                        "': give flags after '--' or a build directory with -p");
    Compilations = std::make_unique<torch_syncfree::SanitizedDatabase>(
        tooling::inferMissingCompileCommands(std::move(Detected)));
  }
  B.Interpolate = !FromDashDash;
  Compilations->setRemovedArgs(std::vector<std::string>(RemovedArgs.begin(), RemovedArgs.end()));
  return std::nullopt;
}

std::optional<int> loadInputs(std::unique_ptr<tooling::CompilationDatabase> Fixed, Batch &B) {
  if (std::optional<int> Exit = loadDatabase(std::move(Fixed), B))
    return Exit;
  auto &Compilations = B.Compilations;
  auto &Files = B.Files;
  auto &ParseFiles = B.ParseFiles;
  auto &Interpolate = B.Interpolate;
  // Files the database lists itself; the others are analysed through a TU that
  // includes them, or with interpolated flags.
  std::vector<std::string> Listed = Compilations->getAllFiles();
  std::set<std::string> ListedSet;
  for (std::string &File : Listed) {
    SmallString<256> Absolute(File);
    sys::fs::make_absolute(Absolute);
    sys::path::remove_dots(Absolute, /*remove_dot_dot=*/true);
    File = std::string(Absolute);
    ListedSet.insert(File);
  }
  // In path order (the set's): the database's own order is a hash table's (it
  // changed with the checkout's directory), and the report follows this order.
  Listed.assign(ListedSet.begin(), ListedSet.end());

  Files.assign(Sources.begin(), Sources.end());
  if (Files.empty())
    Files = Listed;
  if (!Shard.empty()) {
    // Every N-th file in path order: deterministic whatever order the database
    // lists them in, so N CI jobs cover every TU exactly once.
    unsigned K = 0, N = 0;
    auto [KText, NText] = StringRef(Shard).split('/');
    if (KText.getAsInteger(10, K) || NText.getAsInteger(10, N) || N == 0 || K == 0 || K > N)
      return usageError("--shard expects K/N with 1 <= K <= N, not '" + Shard + "'");
    llvm::sort(Files);
    Files.erase(std::unique(Files.begin(), Files.end()), Files.end());
    std::vector<std::string> Selected;
    for (size_t I = K - 1; I < Files.size(); I += N)
      Selected.push_back(Files[I]);
    Files = std::move(Selected);
    if (Files.empty()) {
      if (!Quiet)
        errs() << "torch-syncfree: shard " << Shard << " has no translation unit\n";
      B.Formatter->finish({}, {}, outs());
      return ExitClean;
    }
  }
  if (Files.empty())
    return usageError("the compilation database lists no files");
  for (std::string &File : Files) {
    if (!sys::fs::exists(File))
      return usageError("no such file: '" + File + "'");
    if (!sys::fs::is_regular_file(File))
      return usageError("not a regular file: '" + File + "'");
    SmallString<256> Absolute(File);
    sys::fs::make_absolute(Absolute);
    sys::path::remove_dots(Absolute, /*remove_dot_dot=*/true);
    File = std::string(Absolute);
  }
  // Per requested file, the TU to parse (itself, or one that includes it).
  ParseFiles = Files;
  if (Interpolate)
    for (size_t I = 0; I < Files.size(); ++I) {
      if (ListedSet.count(Files[I]))
        continue;
      std::string Includer = torch_syncfree::findIncludingFile(Files[I], Listed);
      if (!Includer.empty())
        ParseFiles[I] = Includer;
      if (!Quiet)
        errs() << "torch-syncfree: note: " << Files[I] << " has no compile command; "
               << (Includer.empty() ? std::string("analysed with the flags of the closest entry")
                                    : "analysed through " + Includer + ", which includes it")
               << "\n";
    }
  return std::nullopt;
}

/// The file system one unit is parsed through: the safe one (SafeFileSystem.h)
/// under --vfsoverlay; null, with Error set, when the overlay cannot be read.
IntrusiveRefCntPtr<vfs::OverlayFileSystem>
makeUnitFileSystem(std::string &Error,
                   std::shared_ptr<torch_syncfree::LookupMisses> Misses = nullptr) {
  // ClangTool sets the working directory of its file system to each compile
  // command's directory: each unit gets a physical file system of its own
  // (the real one shares the process's working directory across threads).
  auto SafeFS = torch_syncfree::makeSafeFileSystem(vfs::createPhysicalFileSystem(), std::move(Misses));
  auto UnitFS = makeIntrusiveRefCnt<vfs::OverlayFileSystem>(SafeFS);
  if (!VfsOverlay.empty()) {
    auto Buffer = SafeFS->getBufferForFile(VfsOverlay);
    IntrusiveRefCntPtr<vfs::FileSystem> Redirecting =
        Buffer ? vfs::getVFSFromYAML(std::move(*Buffer), nullptr, VfsOverlay, nullptr, SafeFS)
               : nullptr;
    if (!Redirecting) {
      Error = "invalid --vfsoverlay file '" + VfsOverlay + "'";
      return nullptr;
    }
    UnitFS->pushOverlay(Redirecting);
  }
  return UnitFS;
}

/// The project as the user's run names it: the work trees around the working
/// directory, -p and the sources on the command line; never a directory the
/// repository's flags name. #embed reads only under it (UnitRunOptions::EmbedRoots)
/// and --fix writes only under it (a header of a sibling checkout named by -I
/// is not rewritten).
std::vector<std::string> userProjectRoots() {
  std::vector<std::string> Roots;
  auto Add = [&](StringRef Dir) {
    SmallString<256> Absolute(Dir);
    if (Absolute.empty() || sys::fs::make_absolute(Absolute))
      return;
    sys::path::remove_dots(Absolute, /*remove_dot_dot=*/true);
    std::string Root = torch_syncfree::workTreeRoot(Absolute);
    if (!llvm::is_contained(Roots, Root))
      Roots.push_back(Root);
  };
  SmallString<256> Cwd;
  if (!sys::fs::current_path(Cwd))
    Add(Cwd);
  if (!BuildPath.empty())
    Add(BuildPath);
  for (const std::string &Source : Sources)
    Add(sys::path::parent_path(Source).empty() ? StringRef(".") : sys::path::parent_path(Source));
  return Roots;
}

/// Whether clang's message about an error in File may be quoted in a "does not
/// compile" line. A repository can #include any readable file (a CI checkout's
/// token file, a key): clang's message then quotes its first identifiers
/// ("unknown type name '<token>'"), and CI logs are often public. Quoted: errors
/// in the project the user named (outside version-control metadata) and in
/// system-owned trees (/usr, /opt: compilers, LibTorch packages, CUDA).
bool mayQuoteErrorIn(StringRef File, ArrayRef<std::string> ProjectRoots) {
  if (File.empty())
    return true;
  SmallString<256> Real;
  if (sys::fs::real_path(File, Real))
    Real = File;
  if (torch_syncfree::inVersionControlMetadata(Real))
    return false;
  auto Under = [&](StringRef Root) {
    return Real.str().starts_with(Root) &&
           (Real.size() == Root.size() || Root.ends_with("/") || Real[Root.size()] == '/');
  };
  if (Under("/usr/") || Under("/opt/"))
    return true;
  for (const std::string &Root : ProjectRoots) {
    SmallString<256> RealRoot;
    if (!sys::fs::real_path(Root, RealRoot) && Under(RealRoot))
      return true;
  }
  return false;
}

/// Analyses every translation unit, in parallel (clang's thread pool); each
/// unit's result lands in its slot, so the output order is the input order.
void analyseUnits(Batch &B) {
  auto &Compilations = B.Compilations;
  auto &Files = B.Files;
  auto &ParseFiles = B.ParseFiles;
  auto &Clock = B.Clock;
  auto &Units = B.Units;
  auto &PchOptions = B.PchOptions;
  auto &UserKey = B.UserKey;
  auto &Pch = B.Pch;
  auto &PchDirectory = B.PchDirectory;
  auto &Selection = B.Selection;
  auto &Results = B.Results;
  auto &NotSelected = B.NotSelected;
  auto &PlainRetries = B.PlainRetries;
  auto &ShowProgress = B.ShowProgress;
  auto &Threads = B.Threads;
  Clock = std::chrono::steady_clock::now();

  // Analyse every translation unit, in parallel; results are printed in input order.
  Units.resize(Files.size());
  // Translation units with the same flags and leading #include block share one
  // precompiled header of that block (SharedPch.h).
  PchOptions = makeOptionsProvider();
  PchDirectory = CacheDir.empty() ? torch_syncfree::defaultCacheDirectory(BuildPath)
                                              : std::string(CacheDir);
  // Caches hold only what this user's tool wrote (CacheAuth.h): without the
  // user's key nothing is cached, with one warning.
  std::string NoKeyWhy;
  UserKey =
      (!NoPch && !PchDirectory.empty()) || !CacheDir.empty()
          ? torch_syncfree::CacheAuthenticator::forCurrentUser(NoKeyWhy)
          : std::nullopt;
  if (UserKey && !PchDirectory.empty()) {
    // A cache directory that is a link, another user's or writable by others
    // is not used (docs/design.md, threat model).
    std::vector<StringRef> Subdirs;
    if (!NoPch)
      Subdirs.push_back("pch");
    if (!CacheDir.empty())
      Subdirs.push_back("results");
    NoKeyWhy = torch_syncfree::prepareCacheDirectory(PchDirectory, Subdirs);
    if (!NoKeyWhy.empty())
      UserKey.reset();
  }
  if (!UserKey && !NoKeyWhy.empty())
    errs() << "torch-syncfree: warning: caches off: " << NoKeyWhy << "\n";
  if (!NoPch && !PchDirectory.empty() && UserKey) {
    Pch = std::make_unique<torch_syncfree::SharedPchCache>(
        (PchDirectory + "/pch"), *Compilations, *PchOptions, *UserKey);
    Pch->plan(ParseFiles);
  }
  // A line filter (--diff, --line-filter) drops findings in the files it does
  // not name: units that read none of them are not analysed.
  if (!EffectiveLineFilter.empty()) {
    ClangTidyGlobalOptions Filter;
    if (!parseLineFilter(EffectiveLineFilter, Filter)) {
      std::vector<std::string> Names;
      for (const FileFilter &F : Filter.LineFilter)
        Names.push_back(F.Name);
      Selection = std::make_unique<torch_syncfree::UnitSelection>(std::move(Names));
    }
  }
  // The results cache is opt-in: --cache-dir given.
  if (!CacheDir.empty() && UserKey)
    Results = std::make_unique<torch_syncfree::ResultsCache>(CacheDir + "/results", *UserKey);
  std::atomic<unsigned> Done{0}, FindingCount{0};
  std::mutex ProgressMutex;
  bool Terminal = sys::Process::StandardErrIsDisplayed();
  ShowProgress = !Quiet && Files.size() > 1;
  Threads = Jobs ? Jobs : std::max(1u, llvm::hardware_concurrency().compute_thread_count());
  // Each unit in a process of its own, with a time limit (UnitWorker.h); the
  // check profile is collected in this process, so it analyses in-process.
  std::string Self = sys::fs::getMainExecutable(nullptr, (void *)&makeUnitFileSystem);
  bool UseWorkers = TuTimeout > 0 && !EnableCheckProfile && !Self.empty();
  // Without a writable $TMPDIR no worker can be given its unit: every unit is
  // then analysed in this process (crashes still recovered, no time limit).
  if (std::string Why; UseWorkers && !torch_syncfree::workerFilesAvailable(Why)) {
    errs() << "torch-syncfree: warning: units are analysed in this process, without "
              "--tu-timeout: "
           << Why << "\n";
    UseWorkers = false;
  }
  // Shared PCHs are compiled in worker processes too, under the same limit: a
  // header that crashes or hangs clang fails its group's PCH, not the run.
  if (Pch && TuTimeout > 0 && !Self.empty() && (UseWorkers || EnableCheckProfile)) {
    unsigned Limit = TuTimeout;
    Pch->isolateBuilds({[Self, Limit](const tooling::CompileCommand &Command,
                                      const std::string &Header, const std::string &Output) {
      return torch_syncfree::runPchInWorker(Self, Command, Header, Output, Limit);
    }});
  }
  const std::vector<std::string> EmbedRoots = userProjectRoots();
  {
    DefaultThreadPool Pool(hardware_concurrency(std::min<unsigned>(Threads, Files.size())));
    auto AnalyseUnit = [&](size_t I) {
        UnitResult &Unit = Units[I];
        Unit.Context = std::make_unique<ClangTidyContext>(makeOptionsProvider());
        // A command that cannot be used (its directory is gone, a response file
        // is missing) fails this unit only; clang would abort the process.
        Unit.CompileError = Compilations->commandError(ParseFiles[I]);
        if (!Unit.CompileError.empty()) {
          Unit.CannotAnalyse = true;
          ++Done;
          return;
        }
        std::string FileSystemError;
        auto Misses = std::make_shared<torch_syncfree::LookupMisses>();
        auto UnitFS = makeUnitFileSystem(FileSystemError, Misses);
        if (!UnitFS) {
          Unit.CannotAnalyse = true;
          Unit.CompileError = FileSystemError;
          ++Done;
          return;
        }
        if (Selection) {
          std::vector<tooling::CompileCommand> Commands =
              Compilations->getCompileCommands(ParseFiles[I]);
          if (!Commands.empty() &&
              !Selection->mayHaveFindings(ParseFiles[I], Commands.front())) {
            ++NotSelected;
            ++Done;
            return;
          }
        }
        std::string CacheKey;
        std::optional<std::vector<FindingRecord>> Cached;
        if (Results) {
          std::vector<tooling::CompileCommand> Commands =
              Compilations->getCompileCommands(ParseFiles[I]);
          if (!Commands.empty() && VfsOverlay.empty()) {
            CacheKey = torch_syncfree::ResultsCache::key(
                ParseFiles[I], Commands.front().CommandLine, Commands.front().Directory,
                configurationAsText(Unit.Context->getOptionsForFile(ParseFiles[I])),
                EffectiveLineFilter);
            Cached = Results->lookup(CacheKey);
          }
        }
        torch_syncfree::UnitRunOptions Run;
        Run.EnableCheckProfile = EnableCheckProfile;
        Run.EmbedRoots = EmbedRoots;
        bool ParsedPlainly = false;
        Run.ParsedPlainly = &ParsedPlainly;
        std::vector<std::string> ReadFiles, AbsentFiles;
        if (!CacheKey.empty())
          Run.ReadFiles = &ReadFiles;
        if (Pch && !Cached)
          Run.SharedPch = Pch->pchFor(ParseFiles[I]);
        std::vector<FindingRecord> Errors;
        if (Cached) {
          Errors = std::move(*Cached);
        } else if (UseWorkers) {
          torch_syncfree::WorkerResult Worker = torch_syncfree::runUnitInWorker(
              Self, RunArguments,
              {ParseFiles[I], Run.SharedPch, EffectiveLineFilter, !CacheKey.empty()}, TuTimeout);
          if (!Worker.Failure.empty()) {
            Unit.CannotAnalyse = true;
            Unit.CompileError = Worker.Failure;
            ++Done;
            return;
          }
          Errors = std::move(Worker.Findings);
          ParsedPlainly = Worker.ParsedPlainly;
          ReadFiles = std::move(Worker.ReadFiles);
          AbsentFiles = std::move(Worker.AbsentFiles);
        } else {
          Errors = torch_syncfree::runChecks(*Unit.Context, *Compilations, {ParseFiles[I]},
                                             UnitFS, Run);
          AbsentFiles = Misses->paths();
        }
        bool CompileErrors = torch_syncfree::hasCompileError(Errors);
        if (ParsedPlainly) {
          ++PlainRetries;
          Run.SharedPch.clear(); // the results read no PCH
        }
        if (!Cached && !CacheKey.empty() && !CompileErrors) {
          if (!Run.SharedPch.empty()) {
            for (std::string &Input : torch_syncfree::pchInputs(Run.SharedPch))
              ReadFiles.push_back(std::move(Input));
            for (std::string &Absent : torch_syncfree::pchAbsentInputs(Run.SharedPch))
              AbsentFiles.push_back(std::move(Absent));
          }
          for (std::vector<std::string> *List : {&ReadFiles, &AbsentFiles}) {
            llvm::sort(*List);
            List->erase(std::unique(List->begin(), List->end()), List->end());
          }
          Results->store(CacheKey, Errors, ReadFiles, AbsentFiles);
        }
        for (FindingRecord &Error : Errors) {
          torch_syncfree::makePathsAbsolute(Error);
          if (torch_syncfree::isCompileError(Error)) {
            if (Unit.CompileError.empty())
              Unit.CompileError = (Error.Message.FilePath.empty()
                                       ? std::string("(no file)")
                                       : torch_syncfree::fileLineColumn(Error.Message.FilePath,
                                                                        Error.Message.FileOffset)) +
                                  ": " +
                                  (mayQuoteErrorIn(Error.Message.FilePath, EmbedRoots)
                                       ? torch_syncfree::quotableCompileError(Error.Message.Message)
                                       : std::string("clang's message is not shown: the error "
                                                     "is in a file outside the project"));
            continue;
          }
          // A header analysed through an includer: its own findings only.
          if (ParseFiles[I] != Files[I] && Error.Message.FilePath != Files[I])
            continue;
          if (FixNotes && Error.Message.Fix.empty()) {
            const tooling::DiagnosticMessage *Only = nullptr;
            unsigned WithFix = 0;
            for (const tooling::DiagnosticMessage &Note : Error.Notes)
              if (!Note.Fix.empty())
                Only = &Note, ++WithFix;
            if (WithFix == 1)
              Error.Message.Fix = Only->Fix;
          }
          // clang-tidy's "this fix will not be applied because it overlaps with
          // another fix" has no location: it belongs at its finding.
          for (tooling::DiagnosticMessage &Note : Error.Notes)
            if (Note.FilePath.empty()) {
              Note.FilePath = Error.Message.FilePath;
              Note.FileOffset = Error.Message.FileOffset;
            }
          if (StringRef(Error.DiagnosticName).starts_with("torch-sync-"))
            Unit.Findings.push_back(std::move(Error));
        }
        FindingCount += Unit.Findings.size();
        unsigned Finished = ++Done;
        if (ShowProgress) {
          std::lock_guard<std::mutex> Lock(ProgressMutex);
          double Elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - Clock).count();
          if (Terminal)
            errs() << "\r[" << Finished << "/" << Files.size() << "] " << FindingCount
                   << (FindingCount == 1 ? " finding, " : " findings, ") << format("%.1f", Elapsed)
                   << " s" << (Finished == Files.size() ? "\n" : "");
          else
            errs() << "torch-syncfree: [" << Finished << "/" << Files.size() << "] "
                   << torch_syncfree::printable(Files[I]) << ": "
                   << counted(Unit.Findings.size(), "finding") << "\n";
        }
      };
    // Units start in the order that lets the PCH builds of -jN run side by
    // side (SharedPch.h); results are kept by index, so output does not change.
    std::vector<size_t> Order(Files.size());
    std::iota(Order.begin(), Order.end(), size_t(0));
    if (Pch)
      Order = Pch->schedule(ParseFiles);
    for (size_t I : Order)
      Pool.async([&, I] {
        // A crash, stack overflow or fatal error inside clang or a check ends
        // this unit only (clang's crash recovery, as libclang and clangd use
        // it): the unit reports it as its error and the run goes on.
        CrashRecoveryContext Recovery;
        if (Recovery.RunSafely([&] { AnalyseUnit(I); }))
          return;
        UnitResult &Unit = Units[I];
        ++B.Crashed;
        Unit.Findings.clear();
        Unit.CannotAnalyse = true;
        int Signal = Recovery.RetCode > 128 ? Recovery.RetCode - 128 : 0;
        Unit.CompileError = Signal == SIGABRT || Signal == 0
                                ? "clang stopped with a fatal error while analysing it"
                                : "clang crashed while analysing it (signal " + std::to_string(Signal) + ")";
        ++Done;
      });
    Pool.wait();
  }

}

/// Compile errors, one report per finding place (conflicting fixes from two
/// units dropped), the baseline written or applied.
std::optional<int> postProcess(Batch &B) {
  auto &Files = B.Files;
  auto &Units = B.Units;
  auto &CompileFailed = B.CompileFailed;
  auto &Reported = B.Reported;
  auto &Baselined = B.Baselined;
  if (ProfileAddsIntervalReads || ProfileAddsModuleMoves)
    for (UnitResult &Unit : Units)
      Unit.Findings.erase(std::remove_if(Unit.Findings.begin(), Unit.Findings.end(),
                                         [&](FindingRecord &E) {
                                           if (!E.Facts || !((ProfileAddsIntervalReads && E.Facts->IntervalRead) ||
                                                             (ProfileAddsModuleMoves && E.Facts->ModuleMove)))
                                             return false;
                                           B.ProfileOnly.push_back(E);
                                           return true;
                                         }),
                          Unit.Findings.end());
  // Per finding location: the fix the first unit wanted, and that unit.
  std::map<std::tuple<std::string, unsigned, std::string>, std::pair<std::string, std::string>> FirstSeen;
  std::set<std::tuple<std::string, unsigned, std::string>> Conflicting;
  auto FixText = [](const FindingRecord &Error) {
    std::string Text;
    for (const auto &Entry : Error.Message.Fix)
      for (const tooling::Replacement &R : Entry.second)
        Text += R.toString() + "\n";
    return Text;
  };
  auto ByLocation = [](const FindingRecord &A, const FindingRecord &B) {
    return std::tie(A.Message.FilePath, A.Message.FileOffset) <
           std::tie(B.Message.FilePath, B.Message.FileOffset);
  };
  for (size_t I = 0; I < Files.size(); ++I) {
    UnitResult &Unit = Units[I];
    if (!Unit.CompileError.empty()) {
      if (Unit.CannotAnalyse)
        errs() << "torch-syncfree: error: " << torch_syncfree::printable(Files[I])
               << " cannot be analysed: " << torch_syncfree::printable(Unit.CompileError) << "\n";
      else
        errs() << "torch-syncfree: error: " << torch_syncfree::printable(Files[I])
               << " does not compile: " << torch_syncfree::printable(Unit.CompileError) << "\n";
      CompileFailed = true;
      if (!FixErrors)
        for (FindingRecord &Error : Unit.Findings)
          Error.Message.Fix.clear();
    }
    // A header seen from many translation units is reported (and fixed) once. Two
    // units that want different fixes at one place (different macros, say) get
    // neither fix, and the conflict is listed.
    std::vector<FindingRecord> Unique;
    for (FindingRecord &Error : Unit.Findings) {
      auto Key = std::make_tuple(Error.Message.FilePath, Error.Message.FileOffset, Error.DiagnosticName);
      auto [It, Inserted] = FirstSeen.try_emplace(Key, FixText(Error), Files[I]);
      if (Inserted) {
        Unique.push_back(std::move(Error));
        continue;
      }
      if (It->second.first != FixText(Error) && !It->second.first.empty()) {
        errs() << "torch-syncfree: note: conflicting fixes for " << Error.Message.FilePath
               << " [" << Error.DiagnosticName << "] from " << It->second.second << " and "
               << Files[I] << "; neither is applied\n";
        Conflicting.insert(Key);
      }
    }
    torch_syncfree::stableSort(Unique, ByLocation);
    Unit.Findings = std::move(Unique);
  }

  for (UnitResult &Unit : Units)
    for (FindingRecord &Error : Unit.Findings)
      if (Conflicting.count({Error.Message.FilePath, Error.Message.FileOffset, Error.DiagnosticName}))
        Error.Message.Fix.clear();

  // Baselines filter what is reported, fixed and counted.
  {
    std::vector<FindingRecord> Flat;
    for (UnitResult &Unit : Units)
      for (FindingRecord &Error : Unit.Findings)
        Flat.push_back(Error);
    Reported = torch_syncfree::collectFindings(Flat);
  }
  if (!WriteBaseline.empty()) {
    std::string Failure = torch_syncfree::writeBaseline(Reported, WriteBaseline);
    if (!Failure.empty())
      return usageError(Failure);
  }
  if (!Baseline.empty()) {
    std::set<std::tuple<std::string, unsigned, std::string>> Keep;
    // The change under review (--diff, --pre-commit) must not baseline its own
    // findings unnoticed: entries the baseline gained since the ref that hide a
    // finding now are said, on stderr (--quiet too) and in SARIF.
    std::optional<std::string> BaseText;
    std::vector<std::string> Gained;
    SmallString<256> Relative(Baseline);
    if (!DiffRef.empty() && sys::path::is_relative(Relative))
      BaseText = gitOutput({"git", "show", "--end-of-options", DiffRef + ":./" + Baseline})
                     .value_or(std::string());
    std::string Failure = torch_syncfree::applyBaseline(Reported, Baseline, Baselined, BaseText,
                                                        BaseText ? &Gained : nullptr);
    if (!Failure.empty())
      return usageError(Failure);
    if (!Gained.empty()) {
      torch_syncfree::ConfigNotice Notice;
      Notice.File = Baseline;
      Notice.Message = "gained " +
                       (Gained.size() == 1 ? std::string("1 entry")
                                           : std::to_string(Gained.size()) + " entries") +
                       " since " +
                       torch_syncfree::printable(DiffRef) +
                       " that hide findings of the change under review: " + join(Gained, ", ");
      Notice.Remedy = "review them: a change should not baseline its own findings";
      B.ConfigNotices.push_back(std::move(Notice));
    }
    for (const auto &F : Reported)
      Keep.insert({F.File, F.Offset, F.Check});
    for (UnitResult &Unit : Units)
      Unit.Findings.erase(std::remove_if(Unit.Findings.begin(), Unit.Findings.end(),
                                         [&](const FindingRecord &E) {
                                           return !Keep.count({E.Message.FilePath,
                                                               E.Message.FileOffset,
                                                               E.DiagnosticName});
                                         }),
                          Unit.Findings.end());
  }
  return std::nullopt;
}

/// The formatter of --format: text goes to stderr when a --dry-run diff owns
/// stdout (so that `> fix.patch` is a patch).
std::unique_ptr<torch_syncfree::FindingFormatter> makeFormatter(const Batch &B) {
  switch (Format) {
  case OutputFormat::Json:
    return torch_syncfree::makeJsonFormatter();
  case OutputFormat::Sarif:
    return torch_syncfree::makeSarifFormatter(B.SarifRoot, TORCH_SYNCFREE_VERSION);
  case OutputFormat::Text:
    break;
  }
  return torch_syncfree::makeTextFormatter(B.BaseFS, /*FindingsToStderr=*/ApplyFixes && DryRun);
}

/// Each unit's findings, then the reported ones, through the formatter; the
/// findings of every unit end in B.AllFindings, in location order.
void printFindings(Batch &B) {
  for (UnitResult &Unit : B.Units) {
    if (Unit.Context)
      B.Formatter->unit(Unit.Findings, *Unit.Context);
    for (FindingRecord &Error : Unit.Findings)
      B.AllFindings.push_back(std::move(Error));
  }
  torch_syncfree::stableSort(B.AllFindings, [](const FindingRecord &A, const FindingRecord &Other) {
    return std::tie(A.Message.FilePath, A.Message.FileOffset) <
           std::tie(Other.Message.FilePath, Other.Message.FileOffset);
  });
  torch_syncfree::pauseForTesting("before-report");
  std::vector<StringRef> CheckNames;
  for (const torch_syncfree::CheckInfo &Info : torch_syncfree::checkCatalog())
    CheckNames.push_back(Info.Name);
  std::vector<torch_syncfree::ConfigNotice> Audit =
      torch_syncfree::auditRepositoryConfig(*makeOptionsProvider(), B.Files, CheckNames);
  B.ConfigNotices.insert(B.ConfigNotices.begin(), Audit.begin(), Audit.end());
  std::vector<torch_syncfree::MissedSync> Missed;
  std::vector<torch_syncfree::ReportedFinding> Joined;
  if (LoadedProfile) {
    // Interval reads and module moves the user did not ask for were analysed
    // to label the syncs they make (postProcess set them aside): joined, then
    // not reported.
    Joined = B.Reported;
    for (torch_syncfree::ReportedFinding &F : torch_syncfree::collectFindings(B.ProfileOnly)) {
      F.ProfileOnly = true;
      Joined.push_back(std::move(F));
    }
    Missed = torch_syncfree::joinProfile(*LoadedProfile, Joined, B.Files);
    B.Reported.clear();
    for (const torch_syncfree::ReportedFinding &F : Joined)
      if (!F.ProfileOnly)
        B.Reported.push_back(F);
  }
  B.Formatter->finish(B.Reported, B.ConfigNotices, outs());
  if (LoadedProfile)
    torch_syncfree::printProfileReport(*LoadedProfile, Joined, Missed, errs());
}

/// --export-fixes, then --fix (or its --dry-run diff).
std::optional<int> exportAndFix(Batch &B) {
  auto &Files = B.Files;
  auto &AllFindings = B.AllFindings;
  const std::string &SarifRoot = B.SarifRoot;
  if (!ExportFixes.empty()) {
    std::string YAML;
    raw_string_ostream OS(YAML);
    std::vector<FindingRecord> Exported = AllFindings;
    torch_syncfree::mergeCoincidentInsertions(Exported);
    exportReplacements(Files.size() == 1 ? Files.front() : "",
                       torch_syncfree::asClangTidyErrors(Exported), OS);
    if (ExportFixes == "-") {
      outs() << YAML;
    } else {
      std::string Failure = torch_syncfree::writeFileAtomically(ExportFixes, YAML);
      if (!Failure.empty())
        return usageError(Failure);
    }
  }

  if (ApplyFixes) {
    // The diff goes to stdout only when stdout carries nothing else: JSON and
    // SARIF stay valid documents on their own.
    raw_ostream &DiffOut = Format == OutputFormat::Text && ExportFixes != "-" ? outs() : errs();
    torch_syncfree::pauseForTesting("before-fixes");
    std::string Style = FormatStyleOption;
    if (!FormatStyleOption.getNumOccurrences()) {
      SmallString<256> Here;
      sys::fs::current_path(Here);
      sys::path::append(Here, "-");
      Style = makeOptionsProvider()->getOptions(Here).FormatStyle.value_or("none");
    }
    B.Fixes = torch_syncfree::applyFixes(AllFindings, DryRun, DiffOut, errs(), Style, SarifRoot,
                                         userProjectRoots());
    errs() << "torch-syncfree: " << (DryRun ? "would apply " : "applied ") << B.Fixes.Applied
           << " fix(es) to " << B.Fixes.FilesChanged << " file(s)";
    if (B.Fixes.Skipped)
      errs() << ", skipped " << B.Fixes.Skipped;
    errs() << "\n";
  }
  return std::nullopt;
}

/// The closing summary on stderr: per check, per dependency class, caches, fixes, time.
void printSummary(Batch &B) {
  auto &Files = B.Files;
  auto &Reported = B.Reported;
  auto &Baselined = B.Baselined;
  auto &Clock = B.Clock;
  auto &Threads = B.Threads;
  auto &Selection = B.Selection;
  auto &NotSelected = B.NotSelected;
  auto &Results = B.Results;
  auto &Pch = B.Pch;
  auto &PchDirectory = B.PchDirectory;
  auto &PlainRetries = B.PlainRetries;
  auto &Fixes = B.Fixes;
  // Always said, --quiet too: a repository narrowing its own CI check is news.
  for (const torch_syncfree::ConfigNotice &N : B.ConfigNotices)
    errs() << "torch-syncfree: warning: " << torch_syncfree::printable(N.File) << " " << N.Message
           << " (" << N.Remedy << ")\n";
  // A cache that cannot be written is no cache: one warning each, --quiet too.
  if (Results && !Results->writeFailure().empty())
    errs() << "torch-syncfree: warning: the results cache is not written: "
           << Results->writeFailure() << "\n";
  if (Pch && !Pch->stats().WriteFailure.empty())
    errs() << "torch-syncfree: warning: shared PCHs are not written: "
           << Pch->stats().WriteFailure << "\n";
  if (B.ShowProgress) {
    // The closing summary: per check, per dependency class, fixes, files, time.
    std::map<std::string, unsigned> PerCheck, PerClass;
    for (const auto &F : Reported)
      ++PerCheck[F.Check], ++PerClass[F.Dependency];
    double Elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - Clock).count();
    errs() << "\ntorch-syncfree summary: " << counted(Files.size(), "translation unit") << ", "
           << counted(Reported.size(), "finding");
    if (Baselined)
      errs() << " (" << Baselined << " more in the baseline)";
    errs() << ", " << format("%.1f", Elapsed) << " s with " << Threads << " jobs\n";
    for (const auto &[Check, Count] : PerCheck)
      errs() << "  " << left_justify(Check, 34) << right_justify(std::to_string(Count), 6) << "\n";
    for (const auto &[Class, Count] : PerClass)
      errs() << "  " << left_justify(Class + " dependency", 34) << right_justify(std::to_string(Count), 6) << "\n";
    if (Selection)
      errs() << "  not analysed: " << counted(NotSelected, "translation unit")
             << " reading no file the line filter names\n";
    if (Results)
      errs() << "  results cache: " << Results->hits() << " reused, " << Results->misses()
             << " analysed (" << CacheDir << "/results)"
             << (Results->untrusted() ? ", " + std::to_string(Results->untrusted()) +
                                            (Results->untrusted() == 1 ? " entry" : " entries") +
                                            " ignored: not written by this user's torch-syncfree"
                                      : std::string())
             << "\n";
    if (Pch) {
      torch_syncfree::SharedPchCache::Stats P = Pch->stats();
      if (P.Groups)
        errs() << "  shared PCH: " << counted(P.UnitsWithPch, "unit") << " of "
               << Files.size() << " with one, " << P.Built << " built, " << P.Reused
               << " reused, " << P.Failed << " failed (" << PchDirectory << "/pch)\n";
      if (!P.NotShared.empty()) {
        unsigned Without = 0;
        for (const auto &[Why, Count] : P.NotShared)
          Without += Count;
        errs() << "  shared PCH not used for " << counted(Without, "unit") << ":";
        bool First = true;
        for (const auto &[Why, Count] : P.NotShared)
          errs() << (First ? " " : "; ") << Count << " " << Why, First = false;
        errs() << "\n";
      }
      if (!P.FirstFailure.empty())
        errs() << "  shared PCH: a build failed in its worker process: " << P.FirstFailure
               << "\n";
      if (P.Untrusted)
        errs() << "  shared PCH: " << (P.Untrusted == 1 ? std::string("1 cached entry") : std::to_string(P.Untrusted) + " cached entries")
               << " ignored: not written by this user's torch-syncfree, or damaged\n";
    }
    if (PlainRetries)
      errs() << "  parsed again without shortcuts: " << counted(PlainRetries, "unit")
             << " failed with the shared PCH, preamble or skipped LibTorch instantiations and "
                "compiled without them\n";
    if (ApplyFixes)
      errs() << "  fixes " << (DryRun ? "that would be applied " : "applied ") << Fixes.Applied
             << ", skipped " << Fixes.Skipped << ", files " << (DryRun ? "that would change " : "changed ")
             << Fixes.FilesChanged << "\n";
  }
}

/// The exit status: 2 for a run that could not do its work, 1 for findings
/// --fail-on (or --warnings-as-errors) counts, else 0.
int exitStatus(const Batch &B) {
  if (B.Fixes.WriteFailed || B.CompileFailed)
    return ExitUsage;
  // --warnings-as-errors findings fail the run whatever --fail-on says.
  bool Failing = llvm::any_of(B.Reported, [](const torch_syncfree::ReportedFinding &F) {
    if (F.WarningAsError)
      return true;
    // --fail-on-cost: a measured threshold (a share of the profiled step time).
    if (FailOnCost > 0 && LoadedProfile) {
      const torch_syncfree::SyncProfile &P = *LoadedProfile;
      double Share = P.Steps && P.StepMs > 0 ? 100.0 * F.MeasuredWaitMs / P.Steps / P.StepMs : 0;
      if (Share < FailOnCost)
        return false;
    }
    return FailOn == FailOnClass::Any ||
           F.Dependency == (FailOn == FailOnClass::True ? "true" : "false");
  });
  // Writing a baseline is the run's purpose: it succeeded, whatever it found.
  return Failing && WriteBaseline.empty() ? ExitFindings : ExitClean;
}

} // namespace

/// A worker process of a batch run (UnitWorker.h): analyses the one unit its
/// request names, as the run would in-process, and writes the findings back.
int runWorker(std::unique_ptr<tooling::CompilationDatabase> Fixed) {
  torch_syncfree::becomeWorker();
  std::string Error;
  std::optional<torch_syncfree::WorkerRequest> Request =
      torch_syncfree::readWorkerRequest(WorkerRequestPath, Error);
  if (!Request)
    return usageError(Error);
  if (std::string ConfigError = loadCommandLineConfig(); !ConfigError.empty())
    return usageError(ConfigError);
  if (!ResourceDir.empty())
    torch_syncfree::ToolchainPaths::get().ResourceDir = ResourceDir;
  EffectiveLineFilter = Request->LineFilter; // the run resolved --diff once
  ProfileAddsIntervalReads = decideProfileAdds("ReportIntervalReads");
  ProfileAddsModuleMoves = decideProfileAdds("ReportModuleMoves");
  Batch B;
  if (std::optional<int> Exit = loadDatabase(std::move(Fixed), B))
    return *Exit;
  auto Misses = std::make_shared<torch_syncfree::LookupMisses>();
  auto UnitFS = makeUnitFileSystem(Error, Misses);
  if (!UnitFS)
    return usageError(Error);
  ClangTidyContext Context(makeOptionsProvider());
  torch_syncfree::UnitRunOptions Run;
  Run.SharedPch = Request->SharedPch;
  Run.EmbedRoots = userProjectRoots(); // the same run's arguments: the same roots
  bool ParsedPlainly = false;
  Run.ParsedPlainly = &ParsedPlainly;
  std::vector<std::string> ReadFiles;
  if (Request->WantReadFiles)
    Run.ReadFiles = &ReadFiles;
  std::vector<FindingRecord> Findings =
      torch_syncfree::runChecks(Context, *B.Compilations, {Request->File}, UnitFS, Run);
  torch_syncfree::pauseForTesting("worker"); // test/tool/untrusted-worker-files.test
  if (!torch_syncfree::writeWorkerResponse(WorkerResponsePath, Findings, ParsedPlainly, ReadFiles,
                                           Request->WantReadFiles ? Misses->paths()
                                                                  : std::vector<std::string>()))
    return usageError("cannot write the worker response '" + WorkerResponsePath + "'");
  return ExitClean;
}

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

  RunArguments.assign(argv + 1, argv + argc);
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
  if (!WorkerRequestPath.empty())
    return runWorker(std::move(Fixed));
  if (!PchRequestPath.empty())
    return torch_syncfree::runPchWorker(PchRequestPath, WorkerResponsePath);
  Batch B;
  if (std::optional<int> Exit = checkOptions(B.SarifRoot))
    return *Exit;
  B.Formatter = makeFormatter(B);
  if (Lsp) {
    torch_syncfree::LspOptions Options;
    Options.Options = [] { return makeOptionsProvider(/*LanguageServer=*/true); };
    Options.CompileCommandsDir = CompileCommandsDir;
    // Shared PCHs are compiled in worker processes: a header that crashes
    // clang fails that PCH, never the server (issue 38).
    std::string Self = sys::fs::getMainExecutable(nullptr, (void *)&makeUnitFileSystem);
    if (TuTimeout > 0 && !Self.empty()) {
      unsigned Limit = TuTimeout;
      Options.PchBuilder = torch_syncfree::PchBuilderProcess{
          [Self, Limit](const tooling::CompileCommand &Command, const std::string &Header,
                        const std::string &Output) {
            return torch_syncfree::runPchInWorker(Self, Command, Header, Output, Limit);
          }};
    }
    if (LoadedProfile)
      Options.Profile = std::make_shared<const torch_syncfree::SyncProfile>(*LoadedProfile);
    return torch_syncfree::runLspServer(std::move(Options));
  }

  if (std::optional<int> Exit = runConfigCommands())
    return *Exit;
  if (std::optional<int> Exit = loadInputs(std::move(Fixed), B))
    return *Exit;
  analyseUnits(B);
  if (std::optional<int> Exit = postProcess(B))
    return *Exit;
  printFindings(B);
  if (std::optional<int> Exit = exportAndFix(B))
    return *Exit;
  printSummary(B);
  if (B.Crashed) {
    // A recovered crash skipped its frames' destructors: objects it left
    // registered with LLVM's globals (timers, say) must not be torn down.
    // Exit as clang does after a recovered cc1 crash: without cleanup.
    outs().flush();
    errs().flush();
    sys::Process::Exit(exitStatus(B), /*NoCleanup=*/true);
  }
  return exitStatus(B);
}
