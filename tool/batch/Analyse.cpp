// The analysis of a run's units: in parallel, each in a worker process (or in
// this one), through the shared PCHs and the results cache.
#include "CheckRunner.h"
#include "InputFiles.h"
#include "UnitWorker.h"
#include "batch/Batch.h"

#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include <csignal>
#include <mutex>
#include <numeric>

using namespace clang;
using namespace clang::tidy;
using namespace llvm;

namespace torch_syncfree {

namespace {

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
  if (inVersionControlMetadata(Real))
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

} // namespace

void analyseUnits(const RunOptions &Options, Batch &B) {
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
  PchOptions = makeOptionsProvider(Options);
  PchDirectory =
      Options.CacheDir.empty() ? defaultCacheDirectory(Options.BuildPath) : std::string(Options.CacheDir);
  // Caches hold only what this user's tool wrote (CacheAuth.h): without the
  // user's key nothing is cached, with one warning.
  std::string NoKeyWhy;
  UserKey = (!Options.NoPch && !PchDirectory.empty()) || !Options.CacheDir.empty()
                ? CacheAuthenticator::forCurrentUser(NoKeyWhy)
                : std::nullopt;
  if (UserKey && !PchDirectory.empty()) {
    // A cache directory that is a link, another user's or writable by others
    // is not used (docs/design.md, threat model).
    std::vector<StringRef> Subdirs;
    if (!Options.NoPch)
      Subdirs.push_back("pch");
    if (!Options.CacheDir.empty())
      Subdirs.push_back("results");
    NoKeyWhy = prepareCacheDirectory(PchDirectory, Subdirs);
    if (!NoKeyWhy.empty())
      UserKey.reset();
  }
  if (!UserKey && !NoKeyWhy.empty())
    errs() << "torch-syncfree: warning: caches off: " << NoKeyWhy << "\n";
  if (!Options.NoPch && !PchDirectory.empty() && UserKey) {
    Pch = std::make_unique<SharedPchCache>((PchDirectory + "/pch"), *Compilations, *PchOptions, *UserKey);
    Pch->plan(ParseFiles);
  }
  // A line filter (--diff, --line-filter) drops findings in the files it does
  // not name: units that read none of them are not analysed.
  if (!Options.EffectiveLineFilter.empty()) {
    ClangTidyGlobalOptions Filter;
    if (!parseLineFilter(Options.EffectiveLineFilter, Filter)) {
      std::vector<std::string> Names;
      Names.reserve(Filter.LineFilter.size());
      for (const FileFilter &F : Filter.LineFilter)
        Names.push_back(F.Name);
      Selection = std::make_unique<UnitSelection>(std::move(Names));
    }
  }
  // The results cache is opt-in: --cache-dir given.
  if (!Options.CacheDir.empty() && UserKey)
    Results = std::make_unique<ResultsCache>(Options.CacheDir + "/results", *UserKey);
  std::atomic<unsigned> Done{0}, FindingCount{0};
  std::mutex ProgressMutex;
  bool Terminal = sys::Process::StandardErrIsDisplayed();
  ShowProgress = !Options.Quiet && Files.size() > 1;
  Threads = Options.Jobs ? Options.Jobs : std::max(1u, llvm::hardware_concurrency().compute_thread_count());
  // Each unit in a process of its own, with a time limit (UnitWorker.h); the
  // check profile is collected in this process, so it analyses in-process.
  std::string Self = sys::fs::getMainExecutable(nullptr, (void *)&makeUnitFileSystem);
  bool UseWorkers = Options.TuTimeout > 0 && !Options.EnableCheckProfile && !Self.empty();
  // Without a writable $TMPDIR no worker can be given its unit: every unit is
  // then analysed in this process (crashes still recovered, no time limit).
  if (std::string Why; UseWorkers && !workerFilesAvailable(Why)) {
    errs() << "torch-syncfree: warning: units are analysed in this process, without "
              "--tu-timeout: "
           << Why << "\n";
    UseWorkers = false;
  }
  // Shared PCHs are compiled in worker processes too, under the same limit: a
  // header that crashes or hangs clang fails its group's PCH, not the run.
  if (Pch && Options.TuTimeout > 0 && !Self.empty() && (UseWorkers || Options.EnableCheckProfile)) {
    unsigned Limit = Options.TuTimeout;
    Pch->isolateBuilds({[Self, Limit](const tooling::CompileCommand &Command, const std::string &Header,
                                      const std::string &Output) {
      return runPchInWorker(Self, Command, Header, Output, Limit);
    }});
  }
  const std::vector<std::string> EmbedRoots = userProjectRoots(Options);
  {
    DefaultThreadPool Pool(hardware_concurrency(std::min<unsigned>(Threads, Files.size())));
    auto AnalyseUnit = [&](size_t I) {
      UnitResult &Unit = Units[I];
      Unit.Context = std::make_unique<ClangTidyContext>(makeOptionsProvider(Options));
      // A command that cannot be used (its directory is gone, a response file
      // is missing) fails this unit only; clang would abort the process.
      Unit.CompileError = Compilations->commandError(ParseFiles[I]);
      if (!Unit.CompileError.empty()) {
        Unit.CannotAnalyse = true;
        ++Done;
        return;
      }
      std::string FileSystemError;
      auto Misses = std::make_shared<LookupMisses>();
      auto UnitFS = makeUnitFileSystem(Options, FileSystemError, Misses);
      if (!UnitFS) {
        Unit.CannotAnalyse = true;
        Unit.CompileError = FileSystemError;
        ++Done;
        return;
      }
      if (Selection) {
        std::vector<tooling::CompileCommand> Commands = Compilations->getCompileCommands(ParseFiles[I]);
        if (!Commands.empty() && !Selection->mayHaveFindings(ParseFiles[I], Commands.front())) {
          ++NotSelected;
          ++Done;
          return;
        }
      }
      std::string CacheKey;
      std::optional<std::vector<FindingRecord>> Cached;
      if (Results) {
        std::vector<tooling::CompileCommand> Commands = Compilations->getCompileCommands(ParseFiles[I]);
        if (!Commands.empty() && Options.VfsOverlay.empty()) {
          CacheKey =
              ResultsCache::key(ParseFiles[I], Commands.front().CommandLine, Commands.front().Directory,
                                configurationAsText(Unit.Context->getOptionsForFile(ParseFiles[I])),
                                Options.EffectiveLineFilter);
          Cached = Results->lookup(CacheKey);
        }
      }
      UnitRunOptions Run;
      Run.EnableCheckProfile = Options.EnableCheckProfile;
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
        WorkerResult Worker =
            runUnitInWorker(Self, Options.RunArguments,
                            {ParseFiles[I], Run.SharedPch, Options.EffectiveLineFilter, !CacheKey.empty(),
                             Options.ProfileAddsIntervalReads, Options.ProfileAddsModuleMoves},
                            Options.TuTimeout);
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
        Errors = runChecks(*Unit.Context, *Compilations, {ParseFiles[I]}, UnitFS, Run);
        AbsentFiles = Misses->paths();
      }
      bool CompileErrors = hasCompileError(Errors);
      if (ParsedPlainly) {
        ++PlainRetries;
        Run.SharedPch.clear(); // the results read no PCH
      }
      if (!Cached && !CacheKey.empty() && !CompileErrors) {
        if (!Run.SharedPch.empty()) {
          for (std::string &Input : pchInputs(Run.SharedPch))
            ReadFiles.push_back(std::move(Input));
          for (std::string &Absent : pchAbsentInputs(Run.SharedPch))
            AbsentFiles.push_back(std::move(Absent));
        }
        for (std::vector<std::string> *List : {&ReadFiles, &AbsentFiles}) {
          llvm::sort(*List);
          List->erase(std::unique(List->begin(), List->end()), List->end());
        }
        Results->store(CacheKey, Errors, ReadFiles, AbsentFiles);
      }
      for (FindingRecord &Error : Errors) {
        makePathsAbsolute(Error);
        if (isCompileError(Error)) {
          if (Unit.CompileError.empty())
            Unit.CompileError = (Error.Message.FilePath.empty()
                                     ? std::string("(no file)")
                                     : fileLineColumn(Error.Message.FilePath, Error.Message.FileOffset)) +
                                ": " +
                                (mayQuoteErrorIn(Error.Message.FilePath, EmbedRoots)
                                     ? quotableCompileError(Error.Message.Message)
                                     : std::string("clang's message is not shown: the error "
                                                   "is in a file outside the project"));
          continue;
        }
        // A header analysed through an includer: its own findings only.
        if (ParseFiles[I] != Files[I] && Error.Message.FilePath != Files[I])
          continue;
        if (Options.FixNotes && Error.Message.Fix.empty()) {
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
      // Project summaries (remarks the batch joins later) are no findings.
      size_t UnitFindings = llvm::count_if(Unit.Findings, [](const FindingRecord &E) {
        return E.DiagLevel != clang::tidy::ClangTidyError::Remark;
      });
      FindingCount += UnitFindings;
      unsigned Finished = ++Done;
      if (ShowProgress) {
        std::lock_guard<std::mutex> Lock(ProgressMutex);
        double Elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - Clock).count();
        if (Terminal)
          errs() << "\r[" << Finished << "/" << Files.size() << "] " << FindingCount
                 << (FindingCount == 1 ? " finding, " : " findings, ") << format("%.1f", Elapsed) << " s"
                 << (Finished == Files.size() ? "\n" : "");
        else
          errs() << "torch-syncfree: [" << Finished << "/" << Files.size() << "] " << printable(Files[I])
                 << ": " << counted(UnitFindings, "finding") << "\n";
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

} // namespace torch_syncfree
