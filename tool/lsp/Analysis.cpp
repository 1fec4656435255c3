#include "lsp/Analysis.h"

#include "CompileFlags.h"
#include "Reporting.h"
#include "SafeFileSystem.h"
#include "TextEncoding.h"

#include "clang-tidy/ClangTidy.h"
#include "clang/Basic/LangOptions.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include <csignal>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

using namespace clang;
using namespace clang::tidy;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;
using llvm::SmallString;
using llvm::StringRef;

namespace torch_syncfree {
namespace lsp {

//===----------------------------------------------------------------------===//
// Compile databases
//===----------------------------------------------------------------------===//

CompileDatabases::Entry CompileDatabases::forFile(StringRef Path) {
  std::lock_guard<std::mutex> Lock(Mutex);
  Entry Result;
  std::string SourceDir = path::parent_path(Path).str();
  if (!FixedDirectory.empty()) {
    Result.Directory = FixedDirectory;
  } else if (auto It = DirectoryOf.find(SourceDir); It != DirectoryOf.end()) {
    Result.Directory = It->second;
  } else {
    // Searched once per source directory; a directory without one is
    // searched again next time (a build directory may appear later).
    Result.Directory = findCompileCommandsDir(Path);
    if (!Result.Directory.empty())
      DirectoryOf[SourceDir] = Result.Directory;
  }
  if (Result.Directory.empty()) {
    Result.Error = "no compile_commands.json found beside this file, in a parent directory or "
                   "in a build*/ directory";
    return Result;
  }
  SmallString<256> Json(Result.Directory);
  path::append(Json, "compile_commands.json");
  fs::file_status Status;
  uint64_t Size = 0;
  int64_t Time = 0;
  if (!fs::status(Json, Status))
    Size = Status.getSize(), Time = Status.getLastModificationTime().time_since_epoch().count();
  Loaded &L = ByDirectory[Result.Directory];
  if (!L.Database && L.Error.empty() ? true : (L.Size != Size || L.Time != Time)) {
    std::string Error;
    std::unique_ptr<SanitizedDatabase> Database = loadCompileCommands(Result.Directory, Error);
    L.Database = std::move(Database);
    L.Error = L.Database ? "" : Error;
    L.Size = Size, L.Time = Time;
    ++Loads;
  }
  Result.Database = L.Database;
  Result.Error = L.Error;
  return Result;
}

//===----------------------------------------------------------------------===//
// Shared PCHs and the builder thread
//===----------------------------------------------------------------------===//

namespace {

/// A key for this server's own PCHs when the user's cannot be had: they live
/// in its private directory and are trusted for its lifetime only.
CacheAuthenticator sessionKey() {
  unsigned char Key[32];
  for (unsigned char &B : Key)
    B = static_cast<unsigned char>(llvm::sys::Process::GetRandomNumber());
  return CacheAuthenticator(StringRef(reinterpret_cast<const char *>(Key), sizeof(Key)));
}

std::string statOf(const std::string &File) {
  fs::file_status Status;
  if (fs::status(File, Status))
    return "";
  return std::to_string(Status.getSize()) + " " +
         std::to_string(Status.getLastModificationTime().time_since_epoch().count());
}

} // namespace

PreambleStore::PreambleStore(std::string PrivateDirectory, std::optional<PchBuilderProcess> Isolation)
    : PchBuilder(std::move(Isolation)), PrivateDir(std::move(PrivateDirectory)) {
  Builder = std::thread([this] { builderLoop(); });
}

PreambleStore::~PreambleStore() {
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    Stopping = true;
  }
  Changed.notify_all();
  Builder.join();
}

PreambleStore::Location PreambleStore::locationFor(StringRef BuildDirectory) {
  // Under Mutex.
  auto It = Locations.find(BuildDirectory.str());
  if (It != Locations.end())
    return It->second;
  Location Where;
  std::string Why;
  // The build directory's cache (the batch's), when this user's key and the
  // directory can be trusted (CacheAuth.h); else this server's own directory.
  std::string Cache = BuildDirectory.empty() ? "" : defaultCacheDirectory(BuildDirectory);
  std::optional<CacheAuthenticator> User =
      Cache.empty() ? std::nullopt : CacheAuthenticator::forCurrentUser(Why);
  if (User && (Why = prepareCacheDirectory(Cache, {"pch"})).empty()) {
    Where.Directory = Cache + "/pch";
    Where.Auth = *User;
  } else {
    if (!Cache.empty())
      llvm::errs() << ("torch-syncfree --lsp: shared PCHs of " + BuildDirectory.str() +
                       " kept for this session only: " + Why + "\n");
    Where.Directory = PrivateDir.empty() ? "" : PrivateDir + "/pch";
    Where.Auth = sessionKey();
  }
  Locations[BuildDirectory.str()] = Where;
  return Where;
}

bool PreambleStore::usable(const std::string &Base, const Location &Where) {
  // Under Mutex. The digest (a read of the whole PCH) once per file version;
  // the manifest's MAC and its headers' sizes and times every time.
  std::string Now = statOf(Base + ".pch");
  if (Now.empty() || !Where.Auth)
    return false;
  auto It = Verified.find(Base);
  bool Known = It != Verified.end() && It->second == Now;
  if (checkPch(Base, *Where.Auth, /*CheckDigest=*/!Known) != PchTrust::Trusted)
    return false;
  Verified[Base] = Now;
  return true;
}

std::string PreambleStore::ready(const PchRequest &R, StringRef BuildDirectory, bool &Exact) {
  std::lock_guard<std::mutex> Lock(Mutex);
  Location Where = locationFor(BuildDirectory);
  if (Where.Directory.empty())
    return "";
  for (size_t N = R.Lines.size(); N > 0; --N) {
    std::string Base = Where.Directory + "/" + pchKey(R, N);
    if (usable(Base, Where)) {
      Exact = N == R.Lines.size();
      return Base + ".pch";
    }
  }
  return "";
}

std::shared_ptr<PreambleStore::Build> PreambleStore::startBuild(const PchRequest &R,
                                                                const Location &Where, bool &Started) {
  // Under Mutex.
  std::string Base = Where.Directory + "/" + pchKey(R, R.Lines.size());
  std::shared_ptr<Build> &B = Builds[Base];
  Started = !B || (B->Done && !B->Pch.empty() && !usable(Base, Where)); // a stale one is rebuilt
  if (Started)
    B = std::make_shared<Build>();
  return B;
}

void PreambleStore::runBuild(std::shared_ptr<Build> B, PchRequest R, Location Where) {
  std::string Key = pchKey(R, R.Lines.size());
  PchBuildResult Built =
      Where.Directory.empty() || !Where.Auth
          ? PchBuildResult{}
          : buildPch(Where.Directory, Key, pchHeader(R, R.Lines.size()), R.Command, R.Language,
                     *Where.Auth, PchBuilder ? &*PchBuilder : nullptr);
  if (!Built.WriteFailure.empty())
    llvm::errs() << ("torch-syncfree --lsp: shared PCH not written: " + Built.WriteFailure + "\n");
  std::vector<std::function<void()>> Waiters;
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    B->Done = true;
    B->Pch = Built.Pch;
    if (!Built.Pch.empty())
      Verified[Where.Directory + "/" + Key] = statOf(Built.Pch);
    Waiters.swap(B->Waiters);
  }
  Changed.notify_all();
  for (auto &Waiter : Waiters)
    Waiter();
}

std::string PreambleStore::buildNow(const PchRequest &R, StringRef BuildDirectory) {
  std::unique_lock<std::mutex> Lock(Mutex);
  Location Where = locationFor(BuildDirectory);
  bool Started = false;
  std::shared_ptr<Build> B = startBuild(R, Where, Started);
  if (Started) {
    // On the caller's thread: a first open never waits behind the builder's queue.
    Lock.unlock();
    runBuild(B, R, Where);
    Lock.lock();
  }
  Changed.wait(Lock, [&] { return B->Done; });
  return B->Pch;
}

bool PreambleStore::failed(const PchRequest &R, StringRef BuildDirectory) {
  std::lock_guard<std::mutex> Lock(Mutex);
  Location Where = locationFor(BuildDirectory);
  auto It = Builds.find(Where.Directory + "/" + pchKey(R, R.Lines.size()));
  return It != Builds.end() && It->second->Done && It->second->Pch.empty();
}

void PreambleStore::buildLater(const PchRequest &R, StringRef BuildDirectory,
                               std::function<void()> Done) {
  std::unique_lock<std::mutex> Lock(Mutex);
  Location Where = locationFor(BuildDirectory);
  bool Started = false;
  std::shared_ptr<Build> B = startBuild(R, Where, Started);
  if (B->Done) {
    Lock.unlock();
    Done();
    return;
  }
  B->Waiters.push_back(std::move(Done));
  if (Started)
    Jobs.push_back([this, B, R, Where] { runBuild(B, R, Where); });
  Changed.notify_all();
}

void PreambleStore::runLater(std::function<void()> Job) {
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    Jobs.push_back(std::move(Job));
  }
  Changed.notify_all();
}

void PreambleStore::builderLoop() {
  std::unique_lock<std::mutex> Lock(Mutex);
  while (true) {
    Changed.wait(Lock, [&] { return Stopping || !Jobs.empty(); });
    if (Stopping)
      return;
    std::function<void()> Job = std::move(Jobs.front());
    Jobs.pop_front();
    Lock.unlock();
    // A crash while building is that build's failure, never the server's.
    llvm::CrashRecoveryContext Recovery;
    if (!Recovery.RunSafely([&] { Job(); }))
      llvm::errs() << "torch-syncfree --lsp: a preamble build crashed; the files it was for "
                      "are parsed in full\n";
    Lock.lock();
  }
}

//===----------------------------------------------------------------------===//
// One analysis
//===----------------------------------------------------------------------===//

namespace {

/// The file's #include region as clang's preamble takes it.
std::string preambleRegion(StringRef Text) {
  LangOptions Lang;
  Lang.CPlusPlus = Lang.CPlusPlus11 = Lang.CPlusPlus14 = Lang.CPlusPlus17 = 1;
  PreambleBounds Bounds = Lexer::ComputePreamble(Text, Lang, /*MaxLines=*/0);
  return Text.take_front(Bounds.Size).str();
}

/// The editor's text over the disk; only regular files are read.
llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> editorFileSystem(const std::string &Path,
                                                                        const std::string &Text) {
  auto Memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  Memory->addFile(Path, 0, llvm::MemoryBuffer::getMemBufferCopy(Text, Path));
  auto Overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(
      makeSafeFileSystem(llvm::vfs::createPhysicalFileSystem()));
  Overlay->pushOverlay(Memory);
  return Overlay;
}

/// runChecks, with a crash or fatal error in clang or a check made this
/// analysis's error instead of the end of the editor's server.
std::optional<std::vector<FindingRecord>>
runRecovered(ClangTidyContext &Context, const SanitizedDatabase &Database, const std::string &Path,
             llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> FileSystem, const UnitRunOptions &Run,
             std::string &Crash) {
  std::vector<FindingRecord> Errors;
  llvm::CrashRecoveryContext Recovery;
  if (Recovery.RunSafely([&] { Errors = runChecks(Context, Database, {Path}, FileSystem, Run); }))
    return Errors;
  int Signal = Recovery.RetCode > 128 ? Recovery.RetCode - 128 : 0;
  Crash = Signal == SIGABRT || Signal == 0
              ? "clang stopped with a fatal error while analysing it"
              : "clang crashed while analysing it (signal " + std::to_string(Signal) + ")";
  return std::nullopt;
}

} // namespace

AnalysisResult analyseDocument(const AnalysisInputs &In, const std::shared_ptr<DocumentState> &Shared,
                               CompileDatabases &Databases, PreambleStore &Store) {
  DocumentState &State = *Shared;
  AnalysisResult Result;
  CompileDatabases::Entry Db = Databases.forFile(In.Path);
  std::shared_ptr<const SanitizedDatabase> Database = Db.Database;
  if (!Database) {
    Result.Problems.push_back({0, 2, "torch-syncfree-no-flags",
                               Db.Error + "; analysed with -std=c++17 only (pass "
                                          "--compile-commands-dir to the server)"});
    Database = std::make_shared<SanitizedDatabase>(std::make_unique<tooling::FixedCompilationDatabase>(
        path::parent_path(In.Path), std::vector<std::string>{"-std=c++17"}));
  }
  std::string CommandError = Database->commandError(In.Path);
  if (!CommandError.empty()) {
    Result.Problems.push_back(
        {0, 1, "torch-syncfree-cannot-analyse", "torch-syncfree cannot analyse this file: " + CommandError});
    return Result;
  }

  UnitRunOptions Run;
  Run.ConfirmErrorsInMainFile = false; // a typo mid-edit is the user's: no second parse
  Run.Cancelled = In.Cancelled;
  std::shared_ptr<PreambleSlot> Slot; // kept alive while it is used
  std::string WhyNot;
  std::optional<PchRequest> Request;
  {
    std::unique_ptr<ClangTidyOptionsProvider> Options = In.Options();
    Request = pchRequestFor(*Database, *Options, In.Path, In.Text, WhyNot);
  }
  std::string LastPch, LastIdentity;
  {
    std::lock_guard<std::mutex> Lock(State.Mutex);
    LastPch = State.LastPch, LastIdentity = State.LastPchIdentity;
  }
  bool CanPatch = !LastPch.empty() && fs::exists(LastPch);
  if (Request) {
    bool Exact = false;
    std::string Pch = Store.ready(*Request, Db.Directory, Exact);
    if (!Pch.empty()) {
      Result.How = Exact ? "shared PCH reused" : "shared PCH of a prefix of the include block reused";
    } else if (CanPatch && LastIdentity == Request->FlagsIdentity &&
               !Store.failed(*Request, Db.Directory)) {
      Run.SharedPch = LastPch;
      Result.Provisional = true;
      Result.How = "patched: the earlier include block's shared PCH, the new one building";
      Store.buildLater(*Request, Db.Directory, In.Reanalyse);
    } else {
      Pch = Store.buildNow(*Request, Db.Directory);
      if (!Pch.empty())
        Result.How = "shared PCH built";
    }
    if (!Pch.empty()) {
      Run.SharedPch = Pch;
      std::lock_guard<std::mutex> Lock(State.Mutex);
      State.LastPch = Pch;
      State.LastPchIdentity = Request->FlagsIdentity;
    }
  }
  if (Run.SharedPch.empty()) {
    // A document preamble: the block cannot be shared, or its PCH did not build.
    std::string Region = preambleRegion(In.Text);
    std::lock_guard<std::mutex> Lock(State.Mutex);
    if (State.Slot && State.SlotText == Region) {
      Slot = State.Slot;
      Result.How = "preamble reused";
    } else if (CanPatch && !Request && State.SlotFailedText != Region) {
      // The block stopped being shareable (a #define above the includes):
      // the last shared PCH answers while the document's preamble builds.
      Run.SharedPch = LastPch;
      Result.Provisional = true;
      Result.How = "patched: the earlier include block's shared PCH, the preamble building";
      if (!State.SlotBuilding) {
        State.SlotBuilding = true;
        auto Fresh = std::make_shared<PreambleSlot>(Store.privateDirectory());
        std::string Path = In.Path, Text = In.Text;
        auto Options = In.Options;
        auto Reanalyse = In.Reanalyse;
        std::shared_ptr<DocumentState> Target = Shared;
        Store.runLater([=] {
          ClangTidyContext Context(Options());
          UnitRunOptions Build;
          Build.Preamble = Fresh.get();
          Build.PreambleOnly = true;
          std::string Crash;
          runRecovered(Context, *Database, Path, editorFileSystem(Path, Text), Build, Crash);
          {
            std::lock_guard<std::mutex> Lock(Target->Mutex);
            Target->SlotBuilding = false;
            if (Fresh->builds() && Crash.empty() && Fresh->hasPreamble()) {
              Target->Slot = Fresh;
              Target->SlotText = Region;
            } else {
              Target->SlotFailedText = Region; // parsed in full from now on
            }
          }
          Reanalyse();
        });
      }
    } else {
      if (!State.Slot || State.SlotText != Region) {
        State.Slot = std::make_shared<PreambleSlot>(Store.privateDirectory());
        State.SlotText = Region;
      }
      Slot = State.Slot;
      Result.How = "preamble";
    }
    if (Slot)
      Run.Preamble = Slot.get();
  }

  ClangTidyContext Context(In.Options());
  unsigned BuildsBefore = Slot ? Slot->builds() : 0;
  std::string Crash;
  std::optional<std::vector<FindingRecord>> Errors =
      runRecovered(Context, *Database, In.Path, editorFileSystem(In.Path, In.Text), Run, Crash);
  if (Slot && Result.How == "preamble")
    Result.How = Slot->builds() != BuildsBefore ? "preamble built" : "preamble reused";
#if defined(__GLIBC__)
  malloc_trim(0); // the AST is gone: give its pages back (the RSS of an idle server)
#endif
  if (In.Cancelled && In.Cancelled->load()) {
    Result.Cancelled = true;
    return Result;
  }
  if (!Errors) {
    Result.Problems.push_back(
        {0, 1, "torch-syncfree-cannot-analyse", "torch-syncfree cannot analyse this file: " + Crash});
    return Result;
  }
  SmallString<256> Self(In.Path);
  path::remove_dots(Self, true);
  if (In.JoinSummaries) {
    for (FindingRecord &E : *Errors)
      makePathsAbsolute(E);
    if (std::string Error = In.JoinSummaries(Self, *Errors); !Error.empty())
      Result.Problems.push_back({0, 2, "torch-syncfree-summaries", Error + "; files are analysed alone"});
  }
  bool ReportedCompileError = false;
  for (FindingRecord &E : *Errors) {
    makePathsAbsolute(E);
    bool InThisFile = E.Message.FilePath == Self;
    if (isCompileError(E)) {
      if (Result.Provisional) {
        Result.Discard = true; // the patch, not the user's code, may be at fault
        return Result;
      }
      // One diagnostic at the first error: the findings of a file that does
      // not compile are incomplete, and the user must know why.
      if (ReportedCompileError)
        continue;
      ReportedCompileError = true;
      Result.Problems.push_back({InThisFile ? E.Message.FileOffset : 0, 1, E.DiagnosticName,
                                 "torch-syncfree cannot analyse this file: " +
                                     (InThisFile ? "" : E.Message.FilePath + ": ") +
                                     quotableCompileError(E.Message.Message)});
      continue;
    }
    if (!StringRef(E.DiagnosticName).starts_with("torch-sync-") || !InThisFile)
      continue;
    Result.Findings.push_back(std::move(E));
  }
  // As in the batch: the findings of a file that does not compile say so in
  // their data and offer no quick fix (the analysis saw part of the file).
  if (ReportedCompileError)
    for (FindingRecord &E : Result.Findings) {
      if (E.Facts)
        E.Facts->Incomplete = true;
      E.Message.Fix.clear();
    }
  return Result;
}

} // namespace lsp
} // namespace torch_syncfree
