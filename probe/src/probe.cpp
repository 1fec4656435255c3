// The sync probe (include/torch_syncfree/probe.h). Compiled into the user's
// program by find_package(TorchSyncFreeProbe) against their own LibTorch.
#include "torch_syncfree/probe.h"

#include <c10/util/Exception.h>
#if __has_include(<torch/version.h>)
#include <torch/version.h>
#endif
// c10's warning handler takes a c10::Warning since LibTorch 2.0; before, the
// probe records the CUDA runtime's waits only.
#if defined(TORCH_VERSION_MAJOR) && TORCH_VERSION_MAJOR >= 2
#define TORCH_SYNCFREE_PROBE_WARNINGS 1
#endif
#ifdef TORCH_SYNCFREE_PROBE_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>
// CUPTI's runtime-API callbacks see every waiting call of the CUDA runtime, a
// statically linked one too; its header comes with the toolkit, its library is
// opened at run time (no link dependency: without it the interposers record).
#if __has_include(<cupti.h>)
#include <cupti.h>
#define TORCH_SYNCFREE_PROBE_CUPTI 1
#endif
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <execinfo.h>
#include <map>
#include <optional>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace torch_syncfree {
namespace probe {
namespace {

using Clock = std::chrono::steady_clock;

struct Frame {
  std::string Module;
  unsigned long long Offset;
  bool operator<(const Frame &O) const {
    return Module != O.Module ? Module < O.Module : Offset < O.Offset;
  }
};

struct Site {
  unsigned long long Count = 0;
  double WaitMs = 0;
};

/// The recorder: one per process, created by start(). Every member is
/// guarded by Mutex; the interposed CUDA calls and the warning handler may
/// run on any thread.
struct Recorder {
  std::string Path;
  std::mutex Mutex;
  // (kind, op, stack) -> count and wait
  std::map<std::tuple<std::string, std::string, std::vector<void *>>, Site> Sites;
  std::map<void *, std::optional<Frame>> Resolved;
  unsigned long long Steps = 0;
  Clock::time_point First, LastStep;
  unsigned long long Intervals = 0; ///< step-to-step intervals timed (the first mark starts the clock)
  double StepMsTotal = 0;
  std::atomic<bool> Stop{false};
  std::thread Flusher;
  /// Where the host waits come from: "cupti" (runtime-API callbacks),
  /// "interposed" (the probe's own definitions of the waiting calls) or "none"
  /// (a LibTorch without CUDA: nothing waits).
#ifdef TORCH_SYNCFREE_PROBE_CUDA
  const char *WaitsFrom = "interposed";
#else
  const char *WaitsFrom = "none";
#endif
};

std::atomic<Recorder *> Active{nullptr};
thread_local bool InProbe = false; // the probe's own calls are not recorded

/// The return addresses of the calling thread: a few microseconds. They are
/// turned into module and offset only when the profile is written (dladdr
/// costs 0.25-0.8 ms per call in LibTorch's libraries, measured on the H200,
/// and ran before the wait it was to measure).
std::vector<void *> stack(int Skip) {
  void *Addresses[48];
  int N = ::backtrace(Addresses, 48);
  return std::vector<void *>(Addresses + std::min(Skip, N), Addresses + N);
}

[[maybe_unused]] void record(const char *Kind, const std::string &Op, double WaitMs, int Skip) {
  Recorder *R = Active.load();
  if (!R || InProbe)
    return;
  InProbe = true;
  std::vector<void *> Frames = stack(Skip);
  {
    std::lock_guard<std::mutex> Lock(R->Mutex);
    Site &S = R->Sites[{Kind, Op, std::move(Frames)}];
    ++S.Count;
    S.WaitMs += WaitMs;
  }
  InProbe = false;
}

/// Module and offset of an address, memoised across writes (R.Mutex held).
bool resolve(Recorder &R, void *Address, Frame &Out) {
  auto It = R.Resolved.find(Address);
  if (It == R.Resolved.end()) {
    Dl_info Info;
    std::optional<Frame> F;
    if (::dladdr(Address, &Info) && Info.dli_fname)
      F = Frame{Info.dli_fname, static_cast<unsigned long long>(
                                    static_cast<char *>(Address) - static_cast<char *>(Info.dli_fbase))};
    It = R.Resolved.emplace(Address, F).first;
  }
  if (!It->second)
    return false;
  Out = *It->second;
  return true;
}

std::string escaped(const std::string &Text) {
  std::string Out;
  for (unsigned char C : Text) {
    if (C == '"' || C == '\\')
      Out += '\\', Out += static_cast<char>(C);
    else if (C < 0x20) {
      char Buffer[8];
      std::snprintf(Buffer, sizeof Buffer, "\\u%04x", C);
      Out += Buffer;
    } else
      Out += static_cast<char>(C);
  }
  return Out;
}

void write(Recorder &R) {
  std::lock_guard<std::mutex> Lock(R.Mutex);
  // A new file of our own (mkstemp: O_CREAT|O_EXCL, mode 0600): a fixed name
  // such as "<profile>.tmp" opened with fopen("w") follows a link another local
  // user planted there and overwrites its target (issue 38). rename() then
  // replaces the profile's name itself, never what a link there points to.
  std::string Temp = R.Path + ".tmp-XXXXXX";
  int FD = ::mkstemp(&Temp[0]);
  if (FD < 0)
    return;
  std::FILE *F = ::fdopen(FD, "w");
  if (!F) {
    ::close(FD);
    ::unlink(Temp.c_str());
    return;
  }
  char Self[4096] = {0};
  ssize_t Length = ::readlink("/proc/self/exe", Self, sizeof Self - 1);
  std::fprintf(F, "{\"format\": \"torch-syncfree-profile\", \"version\": 1, \"program\": \"%s\",\n",
               escaped(Length > 0 ? std::string(Self, Length) : "").c_str());
  // step_ms: the mean time between two step marks (start-up is not a step).
  std::fprintf(F, " \"steps\": %llu, \"step_ms\": %.6f, \"waits_from\": \"%s\",\n \"syncs\": [", R.Steps,
               R.Intervals ? R.StepMsTotal / R.Intervals : 0.0, R.WaitsFrom);
  bool FirstSite = true;
  for (const auto &[Key, S] : R.Sites) {
    const auto &[Kind, Op, Frames] = Key;
    std::fprintf(F, "%s\n  {\"kind\": \"%s\", \"op\": \"%s\", \"count\": %llu, \"wait_ms\": %.6f, \"frames\": [",
                 FirstSite ? "" : ",", escaped(Kind).c_str(), escaped(Op).c_str(), S.Count, S.WaitMs);
    bool FirstFrame = true;
    for (void *Address : Frames) {
      Frame Resolved;
      if (!resolve(R, Address, Resolved))
        continue;
      std::fprintf(F, "%s{\"module\": \"%s\", \"offset\": %llu}", FirstFrame ? "" : ", ",
                   escaped(Resolved.Module).c_str(), Resolved.Offset);
      FirstFrame = false;
    }
    std::fprintf(F, "]}");
    FirstSite = false;
  }
  std::fprintf(F, "\n ]}\n");
  bool Ok = std::fflush(F) == 0;
  Ok &= std::fclose(F) == 0;
  if (!Ok || std::rename(Temp.c_str(), R.Path.c_str()) != 0)
    ::unlink(Temp.c_str());
}

#ifdef TORCH_SYNCFREE_PROBE_WARNINGS
/// Passes every warning on, counting those of sync debug mode.
class SyncWarnings : public c10::WarningHandler {
public:
  explicit SyncWarnings(c10::WarningHandler *Previous) : Previous(Previous) {}
  void process(const c10::Warning &W) override {
    const std::string &Message = W.msg();
    if (Message.find("synchroniz") != std::string::npos) {
      record("sync-debug-mode", Message.substr(0, Message.find('\n')), 0, 1);
      return;
    }
    if (Previous)
      Previous->process(W);
  }

private:
  c10::WarningHandler *Previous;
};
#endif

#ifdef TORCH_SYNCFREE_PROBE_CUPTI
/// The waiting calls CUPTI reports (cupti_runtime_cbid.h), by name.
const char *waitingCall(CUpti_CallbackId Id) {
  switch (Id) {
  case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020:
    return "cudaDeviceSynchronize";
  case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
  case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000:
    return "cudaStreamSynchronize";
  case CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020:
    return "cudaEventSynchronize";
  case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020:
  case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000:
    return "cudaMemcpy";
  default:
    return nullptr;
  }
}

thread_local Clock::time_point EnteredAt; // the waiting calls do not nest

void CUPTIAPI onRuntimeCall(void *, CUpti_CallbackDomain Domain, CUpti_CallbackId Id, const void *Data) {
  const char *Kind = Domain == CUPTI_CB_DOMAIN_RUNTIME_API ? waitingCall(Id) : nullptr;
  if (!Kind || InProbe)
    return;
  const auto *Call = static_cast<const CUpti_CallbackData *>(Data);
  if (Call->callbackSite == CUPTI_API_ENTER) {
    EnteredAt = Clock::now();
    return;
  }
  double Ms = std::chrono::duration<double, std::milli>(Clock::now() - EnteredAt).count();
  record(Kind, "", Ms, 1);
}

/// Subscribes to CUPTI's runtime-API callbacks for the waiting calls; false
/// (the interposers record) when libcupti cannot be opened, or another
/// subscriber holds CUPTI (a profiler: CUPTI allows one), or it is switched off
/// (TORCH_SYNCFREE_CUPTI=off; a path there names the library to open).
bool subscribeCupti() {
  const char *Wanted = std::getenv("TORCH_SYNCFREE_CUPTI");
  if (Wanted && std::strcmp(Wanted, "off") == 0)
    return false;
  // The library's usual homes: the loader's path, beside the CUDA runtime the
  // program loaded (pip's nvidia/cu13/lib), pip's CUDA 12 layout
  // (nvidia/cuda_runtime/lib beside nvidia/cuda_cupti/lib), the toolkit.
  std::vector<std::string> Candidates;
  if (Wanted && *Wanted)
    Candidates.push_back(Wanted);
  for (const char *Name : {"libcupti.so", "libcupti.so.13", "libcupti.so.12"})
    Candidates.push_back(Name);
  Dl_info Runtime;
  if (void *Symbol = ::dlsym(RTLD_DEFAULT, "cudaGetDeviceCount");
      Symbol && ::dladdr(Symbol, &Runtime) && Runtime.dli_fname) {
    std::string Dir = Runtime.dli_fname;
    Dir.erase(Dir.find_last_of('/') == std::string::npos ? 0 : Dir.find_last_of('/'));
    for (const char *Relative : {"/libcupti.so.13", "/libcupti.so.12", "/libcupti.so",
                                 "/../../cuda_cupti/lib/libcupti.so.12", "/../extras/CUPTI/lib64/libcupti.so"})
      Candidates.push_back(Dir + Relative);
  }
  Candidates.push_back("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so");
  void *Library = nullptr;
  for (const std::string &Name : Candidates)
    if ((Library = ::dlopen(Name.c_str(), RTLD_NOW | RTLD_LOCAL)))
      break;
  if (!Library)
    return false;
  using SubscribeFn = CUptiResult (*)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
  using EnableFn = CUptiResult (*)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
  auto Subscribe = reinterpret_cast<SubscribeFn>(::dlsym(Library, "cuptiSubscribe"));
  auto Enable = reinterpret_cast<EnableFn>(::dlsym(Library, "cuptiEnableCallback"));
  CUpti_SubscriberHandle Subscriber;
  if (!Subscribe || !Enable || Subscribe(&Subscriber, &onRuntimeCall, nullptr) != CUPTI_SUCCESS)
    return false;
  for (CUpti_CallbackId Id : {CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
                              CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
                              CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000,
                              CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,
                              CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
                              CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000})
    if (Enable(1, Subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, Id) != CUPTI_SUCCESS)
      return false;
  return true;
}
#endif

std::atomic<bool> CuptiRecords{false}; // then the interposers only forward

void atExit() {
  if (Recorder *R = Active.load()) {
    R->Stop = true;
    write(*R);
  }
}

/// TORCH_SYNCFREE_PROFILE at start-up: the one line that turns the probe on.
struct AutoStart {
  AutoStart() {
    if (const char *Path = std::getenv("TORCH_SYNCFREE_PROFILE"); Path && *Path)
      start(Path);
  }
} TheAutoStart;

} // namespace

void start(const char *Path) {
  if (Active.load())
    return;
  auto *R = new Recorder; // lives until exit: the handlers may run until then
  R->Path = Path;
  R->First = R->LastStep = Clock::now();
#ifdef TORCH_SYNCFREE_PROBE_WARNINGS
  static SyncWarnings Handler(c10::WarningUtils::get_warning_handler());
  c10::WarningUtils::set_warning_handler(&Handler);
#ifdef TORCH_SYNCFREE_PROBE_CUDA
  c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_WARN);
#endif
#endif
#ifdef TORCH_SYNCFREE_PROBE_CUPTI
  if (subscribeCupti()) {
    R->WaitsFrom = "cupti";
    CuptiRecords = true;
  }
#endif
  Active = R;
  std::atexit(atExit);
  int Seconds = 5;
  if (const char *S = std::getenv("TORCH_SYNCFREE_PROFILE_FLUSH_S"))
    Seconds = std::max(1, std::atoi(S));
  R->Flusher = std::thread([R, Seconds] {
    while (!R->Stop) {
      for (int I = 0; I < Seconds * 10 && !R->Stop; ++I)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (!R->Stop)
        write(*R);
    }
  });
  R->Flusher.detach();
}

void step() {
  Recorder *R = Active.load();
  if (!R)
    return;
  std::lock_guard<std::mutex> Lock(R->Mutex);
  auto Now = Clock::now();
  if (R->Steps) {
    R->StepMsTotal += std::chrono::duration<double, std::milli>(Now - R->LastStep).count();
    ++R->Intervals;
  }
  R->LastStep = Now;
  ++R->Steps;
}

void flush() {
  if (Recorder *R = Active.load())
    write(*R);
}

} // namespace probe
} // namespace torch_syncfree

#ifdef TORCH_SYNCFREE_PROBE_CUDA
// The CUDA runtime's waiting calls, interposed: the program's definitions win
// over libcudart's for every caller in the process (LibTorch's included), and
// each forwards to the real one found with dlsym(RTLD_NEXT). Off, they only
// forward.
namespace {
template <typename Fn> Fn real(const char *Name) {
  return reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, Name));
}
template <typename Call> cudaError_t timed(const char *Kind, Call &&Forward) {
  using torch_syncfree::probe::Active;
  using torch_syncfree::probe::CuptiRecords;
  if (!Active.load() || CuptiRecords.load(std::memory_order_relaxed))
    return Forward();
  auto Start = std::chrono::steady_clock::now();
  cudaError_t Result = Forward();
  double Ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start).count();
  // Skip only stack() itself: with inlining, a deeper skip dropped the
  // caller's own frame (a direct cudaDeviceSynchronize in main went unattributed
  // on the H200 run); the probe's frames are in no analysed file anyway.
  torch_syncfree::probe::record(Kind, "", Ms, 1);
  return Result;
}
} // namespace

extern "C" cudaError_t cudaDeviceSynchronize() {
  static auto Real = real<cudaError_t (*)()>("cudaDeviceSynchronize");
  return timed("cudaDeviceSynchronize", [&] { return Real(); });
}
extern "C" cudaError_t cudaStreamSynchronize(cudaStream_t Stream) {
  static auto Real = real<cudaError_t (*)(cudaStream_t)>("cudaStreamSynchronize");
  return timed("cudaStreamSynchronize", [&] { return Real(Stream); });
}
extern "C" cudaError_t cudaEventSynchronize(cudaEvent_t Event) {
  static auto Real = real<cudaError_t (*)(cudaEvent_t)>("cudaEventSynchronize");
  return timed("cudaEventSynchronize", [&] { return Real(Event); });
}
extern "C" cudaError_t cudaMemcpy(void *Dst, const void *Src, size_t Count, cudaMemcpyKind Kind) {
  static auto Real = real<cudaError_t (*)(void *, const void *, size_t, cudaMemcpyKind)>("cudaMemcpy");
  return timed("cudaMemcpy", [&] { return Real(Dst, Src, Count, Kind); });
}
#endif
