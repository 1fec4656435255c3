// A run's findings after the analysis: the profile's own findings set aside,
// compile errors said, one report per place (conflicting fixes dropped), the
// baseline written or applied.
#include "InputFiles.h"
#include "StableOrder.h"
#include "batch/Batch.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <map>
#include <set>
#include <tuple>

using namespace clang;
using namespace llvm;

namespace torch_syncfree {

ChangedLines::ChangedLines(StringRef LineFilter) {
  tidy::ClangTidyGlobalOptions Parsed;
  if (!LineFilter.empty() && !parseLineFilter(LineFilter, Parsed)) // validated with the run's options
    Filter = std::move(Parsed.LineFilter);
  Active = !LineFilter.empty();
}

bool ChangedLines::shows(StringRef File, unsigned Offset) {
  if (!Active)
    return true;
  auto [It, Inserted] = LineStarts.try_emplace(File.str());
  if (Inserted) {
    std::string Why;
    if (std::unique_ptr<MemoryBuffer> Text = readInputFile(File, uint64_t(1) << 30, Why)) {
      It->second.push_back(0);
      StringRef All = Text->getBuffer();
      for (size_t I = 0; I < All.size(); ++I)
        if (All[I] == '\n')
          It->second.push_back(I + 1);
    }
  }
  unsigned Line = std::upper_bound(It->second.begin(), It->second.end(), size_t(Offset)) - It->second.begin();
  for (const tidy::FileFilter &F : Filter) {
    if (!File.ends_with(F.Name))
      continue;
    return F.LineRanges.empty() || llvm::any_of(F.LineRanges, [&](const tidy::FileFilter::LineRange &R) {
             return R.first <= Line && Line <= R.second;
           });
  }
  return false;
}

void ChangedLines::filter(Batch &B) {
  if (!Active)
    return;
  for (UnitResult &Unit : B.Units)
    Unit.Findings.erase(std::remove_if(Unit.Findings.begin(), Unit.Findings.end(),
                                       [&](const FindingRecord &E) {
                                         if (!StringRef(E.DiagnosticName).starts_with("torch-sync-") ||
                                             shows(E.Message.FilePath, E.Message.FileOffset))
                                           return false;
                                         return llvm::none_of(E.Notes,
                                                              [&](const tooling::DiagnosticMessage &N) {
                                                                return shows(N.FilePath, N.FileOffset);
                                                              });
                                       }),
                        Unit.Findings.end());
}

std::optional<int> postProcess(const RunOptions &Options, Batch &B) {
  auto &Files = B.Files;
  auto &Units = B.Units;
  auto &CompileFailed = B.CompileFailed;
  auto &Reported = B.Reported;
  auto &Baselined = B.Baselined;
  if (std::optional<int> Failed = joinProjectSummaries(Options, B))
    return Failed;
  if (Options.ProfileAddsIntervalReads || Options.ProfileAddsModuleMoves)
    for (UnitResult &Unit : Units)
      Unit.Findings.erase(
          std::remove_if(Unit.Findings.begin(), Unit.Findings.end(),
                         [&](FindingRecord &E) {
                           if (!E.Facts || !((Options.ProfileAddsIntervalReads && E.Facts->IntervalRead) ||
                                             (Options.ProfileAddsModuleMoves && E.Facts->ModuleMove)))
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
        errs() << "torch-syncfree: error: " << printable(Files[I])
               << " cannot be analysed: " << printable(Unit.CompileError) << "\n";
      else
        errs() << "torch-syncfree: error: " << printable(Files[I])
               << " does not compile: " << printable(Unit.CompileError) << "\n";
      CompileFailed = true;
      // The analysis saw part of the unit (a declaration clang dropped, a use it
      // never parsed): its findings are reported, marked incomplete (JSON,
      // SARIF, a note in the text), and not fixed unless --fix-errors.
      for (FindingRecord &Error : Unit.Findings) {
        if (Error.Facts)
          Error.Facts->Incomplete = true;
        if (!Options.FixErrors)
          Error.Message.Fix.clear();
      }
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
        errs() << "torch-syncfree: note: conflicting fixes for " << Error.Message.FilePath << " ["
               << Error.DiagnosticName << "] from " << It->second.second << " and " << Files[I]
               << "; neither is applied\n";
        Conflicting.insert(Key);
      }
    }
    stableSort(Unique, ByLocation);
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
    Reported = collectFindings(Flat);
  }
  if (!Options.WriteBaseline.empty()) {
    std::string Failure = writeBaseline(Reported, Options.WriteBaseline);
    if (!Failure.empty())
      return usageError(Failure);
  }
  if (!Options.Baseline.empty()) {
    std::set<std::tuple<std::string, unsigned, std::string>> Keep;
    // The change under review (--diff, --pre-commit) must not baseline its own
    // findings unnoticed: entries the baseline gained since the ref that hide a
    // finding now are said, on stderr (--quiet too) and in SARIF.
    std::optional<std::string> BaseText;
    std::vector<std::string> Gained;
    SmallString<256> Relative(Options.Baseline);
    if (!Options.DiffRef.empty() && sys::path::is_relative(Relative))
      BaseText = gitOutput({"git", "show", "--end-of-options", Options.DiffRef + ":./" + Options.Baseline})
                     .value_or(std::string());
    std::string Failure =
        applyBaseline(Reported, Options.Baseline, Baselined, BaseText, BaseText ? &Gained : nullptr);
    if (!Failure.empty())
      return usageError(Failure);
    if (!Gained.empty()) {
      ConfigNotice Notice;
      Notice.File = Options.Baseline;
      Notice.Message =
          "gained " +
          (Gained.size() == 1 ? std::string("1 entry") : std::to_string(Gained.size()) + " entries") +
          " since " + printable(Options.DiffRef) +
          " that hide findings of the change under review: " + join(Gained, ", ");
      Notice.Remedy = "review them: a change should not baseline its own findings";
      B.ConfigNotices.push_back(std::move(Notice));
    }
    for (const auto &F : Reported)
      Keep.insert({F.File, F.Offset, F.Check});
    for (UnitResult &Unit : Units)
      Unit.Findings.erase(std::remove_if(Unit.Findings.begin(), Unit.Findings.end(),
                                         [&](const FindingRecord &E) {
                                           return !Keep.count(
                                               {E.Message.FilePath, E.Message.FileOffset, E.DiagnosticName});
                                         }),
                          Unit.Findings.end());
  }
  return std::nullopt;
}

} // namespace torch_syncfree
