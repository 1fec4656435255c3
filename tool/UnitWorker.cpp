#include "UnitWorker.h"
#include "FindingJson.h"
#include "JsonLimits.h"
#include "PrivateDirectory.h"
#include "SharedPch.h"
#include "SafeFileSystem.h"
#include "TextEncoding.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <csignal>
#include <thread>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

namespace json = llvm::json;
namespace fs = llvm::sys::fs;
using llvm::StringRef;

namespace torch_syncfree {

namespace {

/// A private temporary file of this process (0600, PrivateDirectory.h),
/// removed when it goes out of scope or the run is stopped by a signal.
struct ScopedTemporary {
  llvm::SmallString<128> Path;
  explicit operator bool() const { return !Path.empty(); }
  ~ScopedTemporary() {
    if (!Path.empty())
      removePrivateTemporaryFile(Path);
  }
};

bool makeTemporary(StringRef Prefix, ScopedTemporary &T) {
  int FD;
  if (createPrivateTemporaryFile(Prefix, "json", FD, T.Path))
    return T.Path.clear(), false;
  ::close(FD);
  return true;
}

/// Waits for Pid at most Deadline; kills it then. The exit status, and whether
/// it was killed for the time limit. (Not llvm::sys::Wait with a timeout: it
/// arms the process-wide alarm(), and the batch's threads wait concurrently.)
/// A pidfd (Linux 5.3) wakes the thread the moment the worker ends; without
/// one, waitpid is polled.
int waitWithDeadline(pid_t Pid, std::chrono::steady_clock::time_point Deadline, bool &TimedOut) {
  TimedOut = false;
  int Status = 0;
  auto Reap = [&] {
    while (::waitpid(Pid, &Status, 0) < 0)
      if (errno != EINTR)
        return -1;
    return Status;
  };
#ifdef SYS_pidfd_open
  int PidFd = static_cast<int>(::syscall(SYS_pidfd_open, Pid, 0));
  if (PidFd >= 0) {
    for (;;) {
      auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      Deadline - std::chrono::steady_clock::now())
                      .count();
      if (Left <= 0) {
        TimedOut = true;
        ::kill(Pid, SIGKILL);
        break;
      }
      struct pollfd Wait = {PidFd, POLLIN, 0};
      int Ready = ::poll(&Wait, 1, static_cast<int>(std::min<long long>(Left, 60000)));
      if (Ready > 0 || (Ready < 0 && errno != EINTR))
        break;
    }
    ::close(PidFd);
    return Reap();
  }
#endif
  auto Pause = std::chrono::milliseconds(1);
  for (;;) {
    pid_t Done = ::waitpid(Pid, &Status, WNOHANG);
    if (Done == Pid)
      return Status;
    if (Done < 0 && errno != EINTR)
      return -1;
    if (std::chrono::steady_clock::now() >= Deadline) {
      TimedOut = true;
      ::kill(Pid, SIGKILL);
      return Reap();
    }
    std::this_thread::sleep_for(Pause);
    Pause = std::min(Pause * 2, std::chrono::milliseconds(20));
  }
}

/// The first line of the worker's stderr that says what went wrong.
std::string firstErrorLine(StringRef Path) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path, /*IsText=*/true);
  if (!Buffer)
    return "";
  StringRef Text = (*Buffer)->getBuffer();
  while (!Text.empty()) {
    auto [Line, Rest] = Text.split('\n');
    Text = Rest;
    Line = Line.trim();
    if (Line.contains("error") || Line.contains("ERROR"))
      return Line.take_front(240).str();
  }
  return "";
}

} // namespace

bool workerFilesAvailable(std::string &Why) {
  int FD;
  llvm::SmallString<128> Path;
  if (std::error_code EC = createPrivateTemporaryFile("torch-syncfree-probe", "json", FD, Path)) {
    llvm::SmallString<128> Dir;
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, Dir);
    Why = "cannot create a temporary file in '" + Dir.str().str() + "': " + EC.message();
    return false;
  }
  ::close(FD);
  removePrivateTemporaryFile(Path);
  return true;
}

namespace {
/// A worker process's outcome: its response file's text, or why there is none.
struct ProcessOutcome {
  std::string Failure;
  std::unique_ptr<llvm::MemoryBuffer> Response;
};

/// Starts Self with Arguments (after the request and response options), hands
/// it Request through a private file and waits at most TimeoutSeconds. What
/// names the work in failures ("its analysis took longer ..."), WhileDoing the
/// activity ("clang crashed while analysing it").
ProcessOutcome runWorkerProcess(StringRef Self, StringRef RequestOption,
                                llvm::ArrayRef<std::string> Arguments, const json::Value &Request,
                                unsigned TimeoutSeconds, StringRef What, StringRef WhileDoing) {
  ProcessOutcome Outcome;
  ScopedTemporary RequestFile, ResponseFile, ErrorFile;
  if (!makeTemporary("torch-syncfree-unit", RequestFile) ||
      !makeTemporary("torch-syncfree-result", ResponseFile) ||
      !makeTemporary("torch-syncfree-stderr", ErrorFile)) {
    Outcome.Failure = "cannot create a temporary file for its " + What.str() + " process";
    return Outcome;
  }
  {
    std::error_code EC;
    llvm::raw_fd_ostream Out(RequestFile.Path, EC, fs::CD_OpenExisting);
    if (EC) {
      Outcome.Failure = "cannot write its " + What.str() + " request: " + EC.message();
      return Outcome;
    }
    Out << Request;
  }
  std::vector<std::string> Storage = {Self.str(),
                                      "--" + RequestOption.str() + "=" + RequestFile.Path.str().str(),
                                      "--internal-worker-response=" + ResponseFile.Path.str().str()};
  Storage.insert(Storage.end(), Arguments.begin(), Arguments.end());
  std::vector<StringRef> Args(Storage.begin(), Storage.end());
  std::optional<StringRef> Redirects[] = {StringRef(""), StringRef(""), StringRef(ErrorFile.Path)};
  std::string SpawnError;
  bool SpawnFailed = false;
  auto Start = std::chrono::steady_clock::now();
  llvm::sys::ProcessInfo Process = llvm::sys::ExecuteNoWait(
      Self, Args, /*Env=*/std::nullopt, Redirects, /*MemoryLimit=*/0, &SpawnError, &SpawnFailed);
  if (SpawnFailed || Process.Pid <= 0) {
    Outcome.Failure = "cannot start its " + What.str() + " process: " + SpawnError;
    return Outcome;
  }
  bool TimedOut = false;
  int Status = waitWithDeadline(Process.Pid, Start + std::chrono::seconds(TimeoutSeconds), TimedOut);
  if (TimedOut) {
    Outcome.Failure = "its " + What.str() + " took longer than --tu-timeout=" +
                      std::to_string(TimeoutSeconds) + " s and was stopped";
    return Outcome;
  }
  if (Status < 0) {
    Outcome.Failure = "its " + What.str() + " process was lost";
    return Outcome;
  }
  if (WIFSIGNALED(Status)) {
    int Signal = WTERMSIG(Status);
    Outcome.Failure = Signal == SIGABRT
                          ? "clang stopped with a fatal error while " + WhileDoing.str()
                          : "clang crashed while " + WhileDoing.str() + " (signal " +
                                std::to_string(Signal) + ")";
    return Outcome;
  }
  if (!WIFEXITED(Status) || WEXITSTATUS(Status) != 0) {
    std::string Why = firstErrorLine(ErrorFile.Path);
    Outcome.Failure = "clang stopped with a fatal error while " + WhileDoing.str() +
                      (Why.empty() ? std::string() : " (" + Why + ")");
    return Outcome;
  }
  // The response: written by our own child into our own 0600 file.
  auto Buffer = llvm::MemoryBuffer::getFile(ResponseFile.Path, /*IsText=*/true);
  if (Buffer)
    Outcome.Response = std::move(*Buffer);
  return Outcome;
}

/// The response's JSON object, or null (with Storage holding the parse).
const json::Object *parseResponse(const llvm::MemoryBuffer *Buffer, std::optional<json::Value> &Storage) {
  if (!Buffer || !checkJsonNesting(Buffer->getBuffer()).empty())
    return nullptr;
  llvm::Expected<json::Value> Parsed = json::parse(Buffer->getBuffer());
  if (!Parsed) {
    llvm::consumeError(Parsed.takeError());
    return nullptr;
  }
  Storage = std::move(*Parsed);
  return Storage->getAsObject();
}

json::Array pathsToJson(const std::vector<std::string> &Paths) {
  json::Array Array;
  for (const std::string &P : Paths)
    Array.push_back(bytesToJson(P));
  return Array;
}

std::optional<std::vector<std::string>> pathsFromJson(const json::Array *Array) {
  if (!Array)
    return std::nullopt;
  std::vector<std::string> Paths;
  for (const json::Value &V : *Array) {
    std::optional<std::string> P = bytesFromJson(&V);
    if (!P)
      return std::nullopt;
    Paths.push_back(std::move(*P));
  }
  return Paths;
}
} // namespace

WorkerResult runUnitInWorker(StringRef Self, llvm::ArrayRef<std::string> RunArguments,
                             const WorkerRequest &Request, unsigned TimeoutSeconds) {
  WorkerResult Result;
  // Paths as bytes (bytesToJson): a unit named "bad\xff.cpp" must not reach
  // the worker as "bad\uFFFD.cpp", another file the repository may ship.
  json::Value Message = json::Object{{"file", bytesToJson(Request.File)},
                                     {"sharedPch", bytesToJson(Request.SharedPch)},
                                     {"lineFilter", bytesToJson(Request.LineFilter)},
                                     {"wantReadFiles", Request.WantReadFiles},
                                     {"profileAddsIntervalReads", Request.ProfileAddsIntervalReads},
                                     {"profileAddsModuleMoves", Request.ProfileAddsModuleMoves},
                                     {"parent", static_cast<int64_t>(::getpid())}};
  ProcessOutcome Outcome = runWorkerProcess(Self, "internal-worker-request", RunArguments, Message,
                                            TimeoutSeconds, "analysis", "analysing it");
  if (!Outcome.Failure.empty()) {
    Result.Failure = std::move(Outcome.Failure);
    return Result;
  }
  std::unique_ptr<llvm::MemoryBuffer> Buffer = std::move(Outcome.Response);
  // The response: written by our own child into our own 0600 file.
  std::optional<std::vector<FindingRecord>> Findings;
  std::optional<json::Value> Storage;
  if (const json::Object *Root = parseResponse(Buffer.get(), Storage)) {
    const json::Array *Array = Root->getArray("findings");
    const json::Array *Read = Root->getArray("readFiles");
    const json::Array *Contents = Root->getArray("contents");
    const json::Array *Absent = Root->getArray("absent");
    if (Array && Read && Contents && Absent)
      Findings = findingsFromJson(*Array);
    if (Findings) {
      Result.ParsedPlainly = Root->getBoolean("parsedPlainly").value_or(false);
      for (const json::Value &V : *Read)
        if (auto File = bytesFromJson(&V))
          Result.ReadFiles.push_back(std::move(*File));
      for (const json::Value &V : *Absent)
        if (auto File = bytesFromJson(&V))
          Result.AbsentFiles.push_back(std::move(*File));
      for (const json::Value &V : *Contents) {
        const json::Object *C = V.getAsObject();
        auto File = C ? bytesFromJson(C->get("file")) : std::nullopt;
        auto Hash = C ? C->getString("hash") : std::nullopt;
        uint64_t Value = 0;
        if (!File)
          continue;
        ReadContents::recordHash(*File, Hash && !Hash->getAsInteger(16, Value)
                                            ? std::optional<uint64_t>(Value)
                                            : std::nullopt);
      }
    }
  }
  if (!Findings) {
    Result.Failure = "its analysis process gave no readable result";
    return Result;
  }
  Result.Findings = std::move(*Findings);
  return Result;
}

std::optional<WorkerRequest> readWorkerRequest(StringRef Path, std::string &Error) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path, /*IsText=*/true);
  if (!Buffer) {
    Error = "cannot read the worker request '" + Path.str() + "'";
    return std::nullopt;
  }
  llvm::Expected<json::Value> Parsed = json::parse((*Buffer)->getBuffer());
  if (!Parsed) {
    Error = "invalid worker request: " + llvm::toString(Parsed.takeError());
    return std::nullopt;
  }
  const json::Object *Root = Parsed->getAsObject();
  auto File = Root ? bytesFromJson(Root->get("file")) : std::nullopt;
  auto Pch = Root ? bytesFromJson(Root->get("sharedPch")) : std::nullopt;
  auto Filter = Root ? bytesFromJson(Root->get("lineFilter")) : std::nullopt;
  auto Want = Root ? Root->getBoolean("wantReadFiles") : std::nullopt;
  auto IntervalReads = Root ? Root->getBoolean("profileAddsIntervalReads") : std::nullopt;
  auto ModuleMoves = Root ? Root->getBoolean("profileAddsModuleMoves") : std::nullopt;
  auto Parent = Root ? Root->getInteger("parent") : std::nullopt;
  if (!File || !Pch || !Filter || !Want || !IntervalReads || !ModuleMoves || !Parent) {
    Error = "invalid worker request '" + Path.str() + "'";
    return std::nullopt;
  }
  // The run that started this worker is gone (killed before prctl below took
  // effect): nobody will read the result.
  if (::getppid() != static_cast<pid_t>(*Parent)) {
    Error = "the run that started this worker has ended";
    return std::nullopt;
  }
  return WorkerRequest{*File, *Pch, *Filter, *Want, *IntervalReads, *ModuleMoves};
}

bool writeWorkerResponse(StringRef Path, const std::vector<FindingRecord> &Findings,
                         bool ParsedPlainly, const std::vector<std::string> &ReadFiles,
                         const std::vector<std::string> &AbsentFiles) {
  json::Array Read, Contents, Absent;
  for (const std::string &File : ReadFiles)
    Read.push_back(bytesToJson(File));
  for (const std::string &File : AbsentFiles)
    Absent.push_back(bytesToJson(File));
  for (const auto &[File, Hash] : ReadContents::all())
    Contents.push_back(json::Object{{"file", bytesToJson(File)},
                                    {"hash", Hash ? json::Value(hex64(*Hash)) : json::Value(nullptr)}});
  std::error_code EC;
  llvm::raw_fd_ostream Out(Path, EC, fs::CD_OpenExisting);
  if (EC)
    return false;
  Out << json::Value(json::Object{{"findings", findingsToJson(Findings)},
                                  {"parsedPlainly", ParsedPlainly},
                                  {"readFiles", std::move(Read)},
                                  {"absent", std::move(Absent)},
                                  {"contents", std::move(Contents)}});
  Out.close();
  return !Out.has_error();
}

void becomeWorker() {
  llvm::sys::Process::PreventCoreFiles();
#ifdef __linux__
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
}

PchCompileResult runPchInWorker(StringRef Self, const clang::tooling::CompileCommand &Command,
                                const std::string &Header, const std::string &Output,
                                unsigned TimeoutSeconds) {
  PchCompileResult Result;
  json::Array Arguments;
  for (const std::string &Arg : Command.CommandLine)
    Arguments.push_back(bytesToJson(Arg));
  json::Value Message = json::Object{{"directory", bytesToJson(Command.Directory)},
                                     {"file", bytesToJson(Command.Filename)},
                                     {"arguments", std::move(Arguments)},
                                     {"header", bytesToJson(Header)},
                                     {"output", bytesToJson(Output)},
                                     {"parent", static_cast<int64_t>(::getpid())}};
  ProcessOutcome Outcome = runWorkerProcess(Self, "internal-pch-request", {}, Message, TimeoutSeconds,
                                            "shared PCH build", "building a shared PCH");
  if (!Outcome.Failure.empty()) {
    Result.Failure = std::move(Outcome.Failure);
    return Result;
  }
  std::optional<json::Value> Storage;
  const json::Object *Root = parseResponse(Outcome.Response.get(), Storage);
  auto Built = Root ? Root->getBoolean("built") : std::nullopt;
  auto UserHeader = Root ? Root->getBoolean("sawUserHeader") : std::nullopt;
  auto OutputError = Root ? bytesFromJson(Root->get("outputError")) : std::nullopt;
  auto Dependencies = pathsFromJson(Root ? Root->getArray("dependencies") : nullptr);
  auto Misses = pathsFromJson(Root ? Root->getArray("misses") : nullptr);
  if (!Built || !UserHeader || !OutputError || !Dependencies || !Misses) {
    Result.Failure = "its shared PCH build gave no readable result";
    return Result;
  }
  Result.Built = *Built;
  Result.SawUserHeader = *UserHeader;
  Result.OutputError = std::move(*OutputError);
  Result.Dependencies = std::move(*Dependencies);
  Result.Misses = std::move(*Misses);
  return Result;
}

int runPchWorker(StringRef RequestPath, StringRef ResponsePath) {
  becomeWorker();
  auto Buffer = llvm::MemoryBuffer::getFile(RequestPath, /*IsText=*/true);
  std::optional<json::Value> Storage;
  const json::Object *Root = parseResponse(Buffer ? Buffer->get() : nullptr, Storage);
  auto Directory = Root ? bytesFromJson(Root->get("directory")) : std::nullopt;
  auto File = Root ? bytesFromJson(Root->get("file")) : std::nullopt;
  auto Arguments = pathsFromJson(Root ? Root->getArray("arguments") : nullptr);
  auto Header = Root ? bytesFromJson(Root->get("header")) : std::nullopt;
  auto Output = Root ? bytesFromJson(Root->get("output")) : std::nullopt;
  auto Parent = Root ? Root->getInteger("parent") : std::nullopt;
  if (!Directory || !File || !Arguments || !Header || !Output || !Parent) {
    llvm::errs() << "torch-syncfree: error: invalid shared PCH request\n";
    return 2;
  }
  if (::getppid() != static_cast<pid_t>(*Parent))
    return 2; // the run that asked is gone
  clang::tooling::CompileCommand Command(*Directory, *File, std::move(*Arguments), "");
  PchCompileResult Compiled = compilePch(Command, *Header, *Output);
  std::error_code EC;
  llvm::raw_fd_ostream Out(ResponsePath, EC, fs::CD_OpenExisting);
  if (EC)
    return 2;
  Out << json::Value(json::Object{{"built", Compiled.Built},
                                  {"sawUserHeader", Compiled.SawUserHeader},
                                  {"outputError", bytesToJson(Compiled.OutputError)},
                                  {"dependencies", pathsToJson(Compiled.Dependencies)},
                                  {"misses", pathsToJson(Compiled.Misses)}});
  Out.close();
  return Out.has_error() ? 2 : 0;
}

} // namespace torch_syncfree
