// What the run resolves from its options once: the options the parser cannot
// check (regexes, the line filter, the configuration), the configuration, the
// profile, the line filter of --diff, the SARIF root (RunOptions.h).
#include "batch/RunOptions.h"
#include "InputFiles.h"
#include "JsonLimits.h"
#include "UnitWorker.h"
#include "batch/Batch.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdlib>
#include <tuple>

using namespace clang::tidy;
using namespace llvm;

namespace torch_syncfree {

namespace {

/// Reads and parses --config / --config-file into Options.CommandLineConfig;
/// an error message, or "".
std::string loadCommandLineConfig(RunOptions &Options) {
  if (Options.Config.empty() && Options.ConfigFile.empty())
    return "";
  std::string Text = Options.Config;
  std::string Origin = "--config";
  if (!Options.ConfigFile.empty()) {
    std::string Why;
    auto Buffer = readInputFile(Options.ConfigFile, MaxConfigBytes, Why);
    if (!Buffer)
      return "cannot read --config-file '" + printable(Options.ConfigFile) + "': " + Why;
    Text = Buffer->getBuffer().str();
    Origin = Options.ConfigFile;
  }
  if (std::string Deep = checkYamlNesting(Text); !Deep.empty())
    return "invalid configuration in " + printable(Origin) + ": " + Deep;
  auto Parsed = parseConfiguration(MemoryBufferRef(Text, Origin));
  if (!Parsed)
    return "invalid configuration in " + Origin + ": " + Parsed.getError().message();
  Options.CommandLineConfig = *Parsed;
  return "";
}

/// With --profile, whether the findings of Option (ReportIntervalReads,
/// ReportModuleMoves) must be added: the user did not ask for them, globally
/// or for a check. Decided once by the run; its workers get the decision in
/// their request.
bool decideProfileAdds(const RunOptions &Options, StringRef Option) {
  if (Options.ProfilePath.empty())
    return false;
  SmallString<256> ConfigFor;
  if (Options.Sources.empty()) {
    std::ignore = sys::fs::current_path(ConfigFor);
    sys::path::append(ConfigFor, "x.cpp");
  } else {
    ConfigFor = Options.Sources.front();
  }
  ClangTidyOptions Effective = makeOptionsProvider(Options)->getOptions(ConfigFor);
  return !llvm::any_of(Effective.CheckOptions, [&](const auto &Entry) {
    StringRef Key = Entry.getKey();
    StringRef Value = Entry.getValue().Value;
    return (Key == Option || Key.ends_with(("." + Option).str())) &&
           (Value.equals_insensitive("true") || Value == "1");
  });
}

} // namespace

std::optional<int> resolveRunOptions(RunOptions &Options) {
  if (!Options.LoadPlugins.empty())
    return usageError("--load is not supported: torch-syncfree runs its own checks (to load "
                      "plugins, run clang-tidy-22 --load=...)");
  if (!Options.Config.empty() && !Options.ConfigFile.empty())
    return usageError("--config and --config-file cannot be combined");
  if (std::string Error = loadCommandLineConfig(Options); !Error.empty())
    return usageError(Error);
  if (!Options.ProfilePath.empty()) {
    std::string Error;
    Options.LoadedProfile = loadProfile(Options.ProfilePath, Error);
    if (!Options.LoadedProfile)
      return usageError(Error);
  } else if (Options.FailOnCost) {
    return usageError("--fail-on-cost needs --profile");
  }
  // Without step marks no finding has a share of a step: every one would pass.
  if (Options.FailOnCost && Options.LoadedProfile &&
      (!Options.LoadedProfile->Steps || Options.LoadedProfile->StepMs <= 0))
    return usageError("--fail-on-cost needs a profile with step marks (torch_syncfree::probe::step(); "
                      "this one has none)");
  Options.ProfileAddsIntervalReads = decideProfileAdds(Options, "ReportIntervalReads");
  Options.ProfileAddsModuleMoves = decideProfileAdds(Options, "ReportModuleMoves");
  {
    SmallString<256> Root(Options.SarifRootOption);
    if (Root.empty())
      sys::fs::current_path(Root), Root = sarifRootFor(Root);
    std::ignore = sys::fs::make_absolute(Root);
    sys::path::remove_dots(Root, true);
    Options.SarifRoot = std::string(Root);
  }
  for (const auto &[Name, Filter] : {std::make_pair("header-filter", &Options.HeaderFilter),
                                     std::make_pair("exclude-header-filter", &Options.ExcludeHeaderFilter)}) {
    std::string Why;
    if (*Filter && !Regex(**Filter).isValid(Why))
      return usageError(Twine("invalid --") + Name + " regular expression '" + **Filter + "': " + Why);
  }
  if (!Options.ResourceDir.empty())
    ToolchainPaths::get().ResourceDir = Options.ResourceDir;
  if (Options.PreCommit && Options.DiffRef.empty() && Options.LineFilter.empty())
    Options.DiffRef = preCommitDiffRef(Options);
  if (StringRef(Options.DiffRef).starts_with("-"))
    return usageError("--diff expects a git ref, not an option: '" + Options.DiffRef + "'");
  if (!Options.LineFilter.empty()) {
    std::string Deep = checkJsonNesting(Options.LineFilter);
    if (!Deep.empty())
      return usageError("invalid --line-filter: " + Deep);
  }
  if (!Options.LineFilter.empty() && !Options.DiffRef.empty())
    return usageError("--line-filter and --diff cannot be combined");
  Options.EffectiveLineFilter = Options.LineFilter;
  if (!Options.DiffRef.empty()) {
    std::string Error;
    Options.EffectiveLineFilter = lineFilterFromGitDiff(Options.DiffRef, Error);
    if (!Error.empty())
      return usageError(Error);
  }
  if (!Options.EffectiveLineFilter.empty() && getenv("TORCH_SYNCFREE_SHOW_LINE_FILTER"))
    errs() << "torch-syncfree: line filter: " << Options.EffectiveLineFilter << "\n";
  if (!Options.EffectiveLineFilter.empty()) {
    ClangTidyGlobalOptions Probe;
    if (parseLineFilter(Options.EffectiveLineFilter, Probe))
      return usageError("invalid --line-filter (expected clang-tidy's JSON line filter)");
  }
  return std::nullopt;
}

std::optional<int> resolveWorkerOptions(RunOptions &Options, const WorkerRequest &Request) {
  if (std::string ConfigError = loadCommandLineConfig(Options); !ConfigError.empty())
    return usageError(ConfigError);
  if (!Options.ResourceDir.empty())
    ToolchainPaths::get().ResourceDir = Options.ResourceDir;
  Options.EffectiveLineFilter = Request.LineFilter; // the run resolved --diff once
  Options.ProfileAddsIntervalReads = Request.ProfileAddsIntervalReads;
  Options.ProfileAddsModuleMoves = Request.ProfileAddsModuleMoves;
  return std::nullopt;
}

} // namespace torch_syncfree
