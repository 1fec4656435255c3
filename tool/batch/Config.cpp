// The run's check configuration: the options provider every unit, the shared
// PCHs and the configuration commands read (--list-checks and kin).
#include "CheckCatalog.h"
#include "InputFiles.h"
#include "batch/Batch.h"

#include "clang-tidy/ClangTidy.h"
#include "clang-tidy/GlobList.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include <tuple>

using namespace clang::tidy;
using namespace llvm;

namespace torch_syncfree {

std::unique_ptr<ClangTidyOptionsProvider> makeOptionsProvider(const RunOptions &Options,
                                                              bool LanguageServer) {
  // The line filter (--diff, --line-filter) is applied after the units' project
  // summaries are joined (PostProcess.cpp): clang-tidy's would drop the records
  // on lines it does not name.
  ClangTidyGlobalOptions Global;
  ClangTidyOptions Defaults = ClangTidyOptions::getDefaults();
  Defaults.Checks = "-*,torch-sync-*";
  Defaults.HeaderFilterRegex = ".*"; // user headers too; system headers never
  Defaults.SystemHeaders = false;
  // --fix formats the lines it changes with the file's .clang-format, if any
  // (exportAndFix); --ignore-repo-config ignores that file too.
  Defaults.FormatStyle = Options.IgnoreRepoConfig ? "none" : "file";
  // Facts across units, joined after the run (batch/ProjectSummaries.cpp); a
  // default, so `ProjectSummaries: false` in a configuration turns them off.
  // The editor says them only when it has a batch run's summaries to join
  // them with (`--lsp --summaries=<file>`).
  if (!LanguageServer || !Options.Summaries.empty())
    Defaults.CheckOptions["ProjectSummaries"] = ClangTidyOptions::ClangTidyValue("true");
  ClangTidyOptions Overrides;
  if (!Options.ChecksGlobs.empty())
    Overrides.Checks = "-*," + Options.ChecksGlobs;
  if (Options.HeaderFilter)
    Overrides.HeaderFilterRegex = *Options.HeaderFilter;
  if (Options.ExcludeHeaderFilter)
    Overrides.ExcludeHeaderFilterRegex = *Options.ExcludeHeaderFilter;
  if (Options.SystemHeaders)
    Overrides.SystemHeaders = Options.SystemHeaders;
  if (Options.WarningsAsErrors)
    Overrides.WarningsAsErrors = *Options.WarningsAsErrors;
  if (Options.UseColor)
    Overrides.UseColor = Options.UseColor;
  if (LanguageServer)
    Overrides.CheckOptions["HelperInEveryFix"] = ClangTidyOptions::ClangTidyValue("true");
  else {
    if (Options.ProfileAddsIntervalReads)
      Overrides.CheckOptions["ReportIntervalReads"] = ClangTidyOptions::ClangTidyValue("true");
    if (Options.ProfileAddsModuleMoves)
      Overrides.CheckOptions["ReportModuleMoves"] = ClangTidyOptions::ClangTidyValue("true");
  }
  // --extra-arg values go through the same sanitiser as .clang-tidy ExtraArgs.
  if (!Options.ExtraArgs.empty())
    Overrides.ExtraArgs = Options.ExtraArgs;
  if (!Options.ExtraArgsBefore.empty())
    Overrides.ExtraArgsBefore = Options.ExtraArgsBefore;
  std::vector<std::string> Removed = Options.RemovedArgs;
  if (Options.IgnoreRepoConfig && !Options.CommandLineConfig)
    return sanitizeOptionsProvider(
        std::make_unique<ConfigOptionsProvider>(Global, Defaults, ClangTidyOptions(), Overrides),
        std::move(Removed));
  if (Options.CommandLineConfig)
    return sanitizeOptionsProvider(
        std::make_unique<ConfigOptionsProvider>(Global, Defaults, *Options.CommandLineConfig, Overrides),
        std::move(Removed));
  // .clang-tidy files through the bounded reader (InputFiles.h): ~120 KB of
  // nested '[' overflowed the YAML parser's stack (issue 38).
  return sanitizeOptionsProvider(
      std::make_unique<FileOptionsProvider>(Global, Defaults, Overrides,
                                            makeConfigFileSystem(vfs::getRealFileSystem())),
      std::move(Removed));
}

std::optional<int> runConfigCommands(const RunOptions &Options) {
  // The configuration applies per file; the configuration commands read the
  // one of the first source, or of the current directory (as clang-tidy).
  std::string ConfigFor;
  {
    SmallString<256> Path(Options.Sources.empty() ? "dummy" : StringRef(Options.Sources.front()));
    std::ignore = sys::fs::make_absolute(Path);
    ConfigFor = std::string(Path);
  }
  if (Options.ListChecks || Options.DumpConfig || Options.ExplainConfig || Options.VerifyConfig) {
    auto Provider = makeOptionsProvider(Options);
    ClangTidyOptions Effective = Provider->getOptions(ConfigFor);
    std::vector<std::string> Enabled = getCheckNames(Effective, false, false);
    if (Options.DumpConfig) {
      outs() << configurationAsText(ClangTidyOptions::getDefaults().merge(Effective, 0)) << "\n";
      return ExitClean;
    }
    if (Options.ExplainConfig) {
      auto Raw = Provider->getRawOptions(ConfigFor);
      for (const std::string &Check : Enabled)
        for (const auto &[Opts, Source] : llvm::reverse(Raw))
          if (Opts.Checks && GlobList(*Opts.Checks).contains(Check)) {
            outs() << "'" << Check << "' is enabled in the " << Source << ".\n";
            break;
          }
      return ExitClean;
    }
    if (Options.VerifyConfig) {
      std::vector<std::string> Problems = configProblems(Effective);
      for (const std::string &Problem : Problems)
        errs() << "torch-syncfree: error: " << Problem << "\n";
      if (!Problems.empty())
        return ExitUsage;
      outs() << "No config errors detected.\n";
      return ExitClean;
    }
    outs() << "Enabled checks:\n";
    for (const std::string &Name : Enabled)
      if (const auto *Info = findCheck(Name))
        outs() << "    " << Info->Name << "  " << Info->Summary << "\n";
    return ExitClean;
  }
  {
    // No enabled check is an error (a CI job would pass having checked
    // nothing), as are check names that match no check.
    ClangTidyOptions Effective = makeOptionsProvider(Options)->getOptions(ConfigFor);
    for (const std::string &Problem : configProblems(Effective))
      errs() << "torch-syncfree: warning: " << Problem << "\n";
    if (getCheckNames(Effective, false, false).empty()) {
      if (Options.AllowNoChecks) {
        errs() << "torch-syncfree: no checks enabled; nothing to do (--allow-no-checks)\n";
        return ExitClean;
      }
      return usageError("no checks enabled (see --checks, --config and .clang-tidy; "
                        "--allow-no-checks makes this exit 0)");
    }
  }
  return std::nullopt;
}

} // namespace torch_syncfree
