// A run's output: the findings through the --format formatter (with the
// profile joined), the exported and applied fixes, the closing summary and the
// exit status.
#include "CheckCatalog.h"
#include "ConfigAudit.h"
#include "InputFiles.h"
#include "StableOrder.h"
#include "batch/Batch.h"

#include "clang-tidy/ClangTidy.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <map>
#include <tuple>

#ifndef TORCH_SYNCFREE_VERSION
#define TORCH_SYNCFREE_VERSION "0.0.0"
#endif

using namespace clang::tidy;
using namespace llvm;

namespace torch_syncfree {

/// Text goes to stderr when a --dry-run diff owns stdout (so that `> fix.patch` is a patch).
std::unique_ptr<FindingFormatter> makeFormatter(const RunOptions &Options, const Batch &B) {
  switch (Options.Format) {
  case OutputFormat::Json:
    return makeJsonFormatter();
  case OutputFormat::Sarif:
    return makeSarifFormatter(Options.SarifRoot, TORCH_SYNCFREE_VERSION);
  case OutputFormat::Text:
    break;
  }
  return makeTextFormatter(B.BaseFS, /*FindingsToStderr=*/Options.ApplyFixes && Options.DryRun);
}

/// The findings of every unit end in B.AllFindings, in location order.
void printFindings(const RunOptions &Options, Batch &B) {
  for (size_t I = 0; I < B.Units.size(); ++I) {
    UnitResult &Unit = B.Units[I];
    if (Unit.Context)
      B.Formatter->unit(Unit.Findings, *Unit.Context, Unit.CompileError.empty() ? "" : B.Files[I]);
    for (FindingRecord &Error : Unit.Findings)
      B.AllFindings.push_back(std::move(Error));
  }
  stableSort(B.AllFindings, [](const FindingRecord &A, const FindingRecord &Other) {
    return std::tie(A.Message.FilePath, A.Message.FileOffset) <
           std::tie(Other.Message.FilePath, Other.Message.FileOffset);
  });
  pauseForTesting("before-report");
  std::vector<StringRef> CheckNames;
  for (const CheckInfo &Info : checkCatalog())
    CheckNames.push_back(Info.Name);
  std::vector<ConfigNotice> Audit = auditRepositoryConfig(*makeOptionsProvider(Options), B.Files, CheckNames);
  B.ConfigNotices.insert(B.ConfigNotices.begin(), Audit.begin(), Audit.end());
  std::vector<MissedSync> Missed;
  std::vector<ReportedFinding> Joined;
  if (Options.LoadedProfile) {
    // Interval reads and module moves the user did not ask for were analysed
    // to label the syncs they make (postProcess set them aside): joined, then
    // not reported.
    Joined = B.Reported;
    for (ReportedFinding &F : collectFindings(B.ProfileOnly)) {
      F.ProfileOnly = true;
      Joined.push_back(std::move(F));
    }
    Missed = joinProfile(*Options.LoadedProfile, Joined, B.Files);
    B.Reported.clear();
    for (const ReportedFinding &F : Joined)
      if (!F.ProfileOnly)
        B.Reported.push_back(F);
  }
  B.Formatter->finish(B.Reported, B.ConfigNotices, outs());
  if (Options.LoadedProfile)
    printProfileReport(*Options.LoadedProfile, Joined, Missed, errs());
}

std::optional<int> exportAndFix(const RunOptions &Options, Batch &B) {
  auto &Files = B.Files;
  auto &AllFindings = B.AllFindings;
  const std::string &SarifRoot = Options.SarifRoot;
  if (!Options.ExportFixes.empty()) {
    std::string YAML;
    raw_string_ostream OS(YAML);
    std::vector<FindingRecord> Exported = AllFindings;
    mergeCoincidentInsertions(Exported);
    exportReplacements(Files.size() == 1 ? Files.front() : "", asClangTidyErrors(Exported), OS);
    if (Options.ExportFixes == "-") {
      outs() << YAML;
    } else {
      std::string Failure = writeFileAtomically(Options.ExportFixes, YAML);
      if (!Failure.empty())
        return usageError(Failure);
    }
  }

  if (Options.ApplyFixes) {
    // The diff goes to stdout only when stdout carries nothing else: JSON and
    // SARIF stay valid documents on their own.
    raw_ostream &DiffOut =
        Options.Format == OutputFormat::Text && Options.ExportFixes != "-" ? outs() : errs();
    pauseForTesting("before-fixes");
    // The style: --format-style, else a FormatStyle the configuration sets
    // (.clang-tidy, --config), else `file`: each fixed file's .clang-format,
    // if it has one (none with --ignore-repo-config: the repository's
    // .clang-format is its configuration too).
    std::optional<std::string> Style = Options.FormatStyle;
    if (!Style) {
      SmallString<256> Here;
      std::ignore = sys::fs::current_path(Here);
      sys::path::append(Here, "-");
      for (const auto &[Config, Source] : makeOptionsProvider(Options)->getRawOptions(Here))
        if (Config.FormatStyle && Source != ClangTidyOptionsProvider::OptionsSourceTypeDefaultBinary)
          Style = Config.FormatStyle;
    }
    bool DefaultStyle = !Style;
    if (!Style)
      Style = Options.IgnoreRepoConfig ? "none" : "file";
    B.Fixes = applyFixes(AllFindings, Options.DryRun, DiffOut, errs(), *Style, SarifRoot,
                         userProjectRoots(Options), DefaultStyle);
    errs() << "torch-syncfree: " << (Options.DryRun ? "would apply " : "applied ") << B.Fixes.Applied
           << " fix(es) to " << B.Fixes.FilesChanged << " file(s)";
    if (B.Fixes.Skipped)
      errs() << ", skipped " << B.Fixes.Skipped;
    errs() << "\n";
  }
  return std::nullopt;
}

/// Per check, per dependency class, caches, fixes, time.
void printSummary(const RunOptions &Options, const Batch &B) {
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
  for (const ConfigNotice &N : B.ConfigNotices)
    errs() << "torch-syncfree: warning: " << printable(N.File) << " " << N.Message << " (" << N.Remedy
           << ")\n";
  // A cache that cannot be written is no cache: one warning each, --quiet too.
  if (Results && !Results->writeFailure().empty())
    errs() << "torch-syncfree: warning: the results cache is not written: " << Results->writeFailure()
           << "\n";
  if (Pch && !Pch->stats().WriteFailure.empty())
    errs() << "torch-syncfree: warning: shared PCHs are not written: " << Pch->stats().WriteFailure << "\n";
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
      errs() << "  " << left_justify(Class + " dependency", 34) << right_justify(std::to_string(Count), 6)
             << "\n";
    if (Selection)
      errs() << "  not analysed: " << counted(NotSelected, "translation unit")
             << " reading no file the line filter names\n";
    if (!B.ProjectJudgementsSkipped.empty())
      errs() << "  project-wide judgements not made (uncalled code, classes from callers): "
             << B.ProjectJudgementsSkipped << "\n";
    if (Results)
      errs() << "  results cache: " << Results->hits() << " reused, " << Results->misses() << " analysed ("
             << Options.CacheDir << "/results)"
             << (Results->untrusted() ? ", " + std::to_string(Results->untrusted()) +
                                            (Results->untrusted() == 1 ? " entry" : " entries") +
                                            " ignored: not written by this user's torch-syncfree"
                                      : std::string())
             << "\n";
    if (Pch) {
      SharedPchCache::Stats P = Pch->stats();
      if (P.Groups)
        errs() << "  shared PCH: " << counted(P.UnitsWithPch, "unit") << " of " << Files.size()
               << " with one, " << P.Built << " built, " << P.Reused << " reused, " << P.Failed << " failed ("
               << PchDirectory << "/pch)\n";
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
        errs() << "  shared PCH: a build failed in its worker process: " << P.FirstFailure << "\n";
      if (P.Untrusted)
        errs() << "  shared PCH: "
               << (P.Untrusted == 1 ? std::string("1 cached entry")
                                    : std::to_string(P.Untrusted) + " cached entries")
               << " ignored: not written by this user's torch-syncfree, or damaged\n";
    }
    if (PlainRetries)
      errs() << "  parsed again without shortcuts: " << counted(PlainRetries, "unit")
             << " failed with the shared PCH, preamble or skipped LibTorch instantiations and "
                "compiled without them\n";
    if (Options.ApplyFixes)
      errs() << "  fixes " << (Options.DryRun ? "that would be applied " : "applied ") << Fixes.Applied
             << ", skipped " << Fixes.Skipped << ", files "
             << (Options.DryRun ? "that would change " : "changed ") << Fixes.FilesChanged << "\n";
  }
}

/// 2 for a run that could not do its work, 1 for findings --fail-on (or
/// --warnings-as-errors) counts, else 0.
int exitStatus(const RunOptions &Options, const Batch &B) {
  if (B.Fixes.WriteFailed || B.CompileFailed)
    return ExitUsage;
  // --warnings-as-errors findings fail the run whatever --fail-on says.
  bool Failing = llvm::any_of(B.Reported, [&](const ReportedFinding &F) {
    if (F.WarningAsError)
      return true;
    // --fail-on-cost: a measured threshold (a share of the profiled step time).
    if (Options.FailOnCost.value_or(0) > 0 && Options.LoadedProfile) {
      const SyncProfile &P = *Options.LoadedProfile;
      double Share = P.Steps && P.StepMs > 0 ? 100.0 * F.MeasuredWaitMs / P.Steps / P.StepMs : 0;
      if (Share < *Options.FailOnCost)
        return false;
    }
    return Options.FailOn == FailOnClass::Any ||
           F.Dependency == (Options.FailOn == FailOnClass::True ? "true" : "false");
  });
  // Writing a baseline is the run's purpose: it succeeded, whatever it found.
  return Failing && Options.WriteBaseline.empty() ? ExitFindings : ExitClean;
}

} // namespace torch_syncfree
