#include "UnitWorker.h"
#include "FindingJson.h"
#include "JsonLimits.h"
#include "PrivateDirectory.h"
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

WorkerResult runUnitInWorker(StringRef Self, llvm::ArrayRef<std::string> RunArguments,
                             const WorkerRequest &Request, unsigned TimeoutSeconds) {
  WorkerResult Result;
  ScopedTemporary RequestFile, ResponseFile, ErrorFile;
  if (!makeTemporary("torch-syncfree-unit", RequestFile) ||
      !makeTemporary("torch-syncfree-result", ResponseFile) ||
      !makeTemporary("torch-syncfree-stderr", ErrorFile)) {
    Result.Failure = "cannot create a temporary file for its analysis process";
    return Result;
  }
  {
    std::error_code EC;
    llvm::raw_fd_ostream Out(RequestFile.Path, EC, fs::CD_OpenExisting);
    if (EC) {
      Result.Failure = "cannot write its analysis request: " + EC.message();
      return Result;
    }
    // Paths as bytes (bytesToJson): a unit named "bad\xff.cpp" must not reach
    // the worker as "bad\uFFFD.cpp", another file the repository may ship.
    Out << json::Value(json::Object{{"file", bytesToJson(Request.File)},
                                    {"sharedPch", bytesToJson(Request.SharedPch)},
                                    {"lineFilter", bytesToJson(Request.LineFilter)},
                                    {"wantReadFiles", Request.WantReadFiles},
                                    {"parent", static_cast<int64_t>(::getpid())}});
  }
  std::vector<std::string> Storage = {Self.str(),
                                      "--internal-worker-request=" + RequestFile.Path.str().str(),
                                      "--internal-worker-response=" + ResponseFile.Path.str().str()};
  Storage.insert(Storage.end(), RunArguments.begin(), RunArguments.end());
  std::vector<StringRef> Args(Storage.begin(), Storage.end());
  std::optional<StringRef> Redirects[] = {StringRef(""), StringRef(""), StringRef(ErrorFile.Path)};
  std::string SpawnError;
  bool SpawnFailed = false;
  auto Start = std::chrono::steady_clock::now();
  llvm::sys::ProcessInfo Process = llvm::sys::ExecuteNoWait(
      Self, Args, /*Env=*/std::nullopt, Redirects, /*MemoryLimit=*/0, &SpawnError, &SpawnFailed);
  if (SpawnFailed || Process.Pid <= 0) {
    Result.Failure = "cannot start its analysis process: " + SpawnError;
    return Result;
  }
  bool TimedOut = false;
  int Status = waitWithDeadline(Process.Pid, Start + std::chrono::seconds(TimeoutSeconds), TimedOut);
  if (TimedOut) {
    Result.Failure = "its analysis took longer than --tu-timeout=" + std::to_string(TimeoutSeconds) +
                     " s and was stopped";
    return Result;
  }
  if (Status < 0) {
    Result.Failure = "its analysis process was lost";
    return Result;
  }
  if (WIFSIGNALED(Status)) {
    int Signal = WTERMSIG(Status);
    Result.Failure = Signal == SIGABRT
                         ? "clang stopped with a fatal error while analysing it"
                         : "clang crashed while analysing it (signal " + std::to_string(Signal) + ")";
    return Result;
  }
  if (!WIFEXITED(Status) || WEXITSTATUS(Status) != 0) {
    std::string Why = firstErrorLine(ErrorFile.Path);
    Result.Failure = "clang stopped with a fatal error while analysing it" +
                     (Why.empty() ? std::string() : " (" + Why + ")");
    return Result;
  }
  // The response: written by our own child into our own 0600 file.
  auto Buffer = llvm::MemoryBuffer::getFile(ResponseFile.Path, /*IsText=*/true);
  std::optional<std::vector<FindingRecord>> Findings;
  if (Buffer && checkJsonNesting((*Buffer)->getBuffer()).empty()) {
    llvm::Expected<json::Value> Parsed = json::parse((*Buffer)->getBuffer());
    if (!Parsed)
      llvm::consumeError(Parsed.takeError());
    const json::Object *Root = Parsed ? Parsed->getAsObject() : nullptr;
    const json::Array *Array = Root ? Root->getArray("findings") : nullptr;
    const json::Array *Read = Root ? Root->getArray("readFiles") : nullptr;
    const json::Array *Contents = Root ? Root->getArray("contents") : nullptr;
    const json::Array *Absent = Root ? Root->getArray("absent") : nullptr;
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
  auto Parent = Root ? Root->getInteger("parent") : std::nullopt;
  if (!File || !Pch || !Filter || !Want || !Parent) {
    Error = "invalid worker request '" + Path.str() + "'";
    return std::nullopt;
  }
  // The run that started this worker is gone (killed before prctl below took
  // effect): nobody will read the result.
  if (::getppid() != static_cast<pid_t>(*Parent)) {
    Error = "the run that started this worker has ended";
    return std::nullopt;
  }
  return WorkerRequest{*File, *Pch, *Filter, *Want};
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

} // namespace torch_syncfree
