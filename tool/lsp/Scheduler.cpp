#include "lsp/Scheduler.h"

#include <thread>

namespace torch_syncfree {
namespace lsp {

struct Scheduler::Worker {
  std::string Uri;
  std::mutex Mutex;
  std::condition_variable Changed;
  std::optional<DocumentVersion> Pending; ///< the newest version not analysed yet
  std::chrono::steady_clock::time_point Due;
  std::optional<DocumentVersion> Latest;  ///< the newest version (re-analysis)
  uint64_t Newest = 0;                    ///< its generation
  bool Analysed = false, Stopping = false;
  std::atomic<bool> Cancelled{false};
  std::shared_ptr<DocumentState> State = std::make_shared<DocumentState>();
};

void Scheduler::Slots::acquire() {
  std::unique_lock<std::mutex> Lock(Mutex);
  Changed.wait(Lock, [&] { return Free > 0; });
  --Free;
}

void Scheduler::Slots::release() {
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    ++Free;
  }
  Changed.notify_one();
}

Scheduler::Scheduler(AnalyseFn Analyse, Callbacks Done, unsigned MaxConcurrent)
    : Analyse(std::move(Analyse)), Done(std::move(Done)), Running(std::max(1u, MaxConcurrent)) {}

Scheduler::~Scheduler() {
  std::lock_guard<std::mutex> Lock(Mutex);
  for (auto &[Uri, W] : Workers) {
    std::lock_guard<std::mutex> WorkerLock(W->Mutex);
    W->Stopping = true;
    W->Cancelled = true;
    W->Changed.notify_all();
  }
}

void Scheduler::update(DocumentVersion Version, std::chrono::milliseconds Delay) {
  std::shared_ptr<Worker> W;
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    std::shared_ptr<Worker> &Slot = Workers[Version.Uri];
    if (!Slot) {
      Slot = std::make_shared<Worker>();
      Slot->Uri = Version.Uri;
      // The thread holds its worker: it outlives remove() until it ends.
      std::thread([this, Owned = Slot] { run(Owned); }).detach();
    }
    W = Slot;
  }
  std::lock_guard<std::mutex> Lock(W->Mutex);
  W->Newest = Version.Generation;
  W->Latest = Version;
  W->Pending = std::move(Version);
  W->Due = std::chrono::steady_clock::now() + Delay;
  W->Cancelled = true; // an analysis of an older version: stop it
  W->Changed.notify_all();
}

void Scheduler::remove(const std::string &Uri) {
  std::shared_ptr<Worker> W;
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = Workers.find(Uri);
    if (It == Workers.end())
      return;
    W = It->second;
    Workers.erase(It);
  }
  std::lock_guard<std::mutex> Lock(W->Mutex);
  W->Stopping = true;
  W->Cancelled = true;
  W->Changed.notify_all();
}

void Scheduler::reanalyse(const std::string &Uri) {
  std::shared_ptr<Worker> W;
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = Workers.find(Uri);
    if (It == Workers.end())
      return;
    W = It->second;
  }
  std::lock_guard<std::mutex> Lock(W->Mutex);
  if (W->Pending || !W->Latest)
    return; // the pending version will use the new preamble anyway
  W->Pending = W->Latest;
  W->Due = std::chrono::steady_clock::now();
  W->Changed.notify_all();
}

void Scheduler::run(std::shared_ptr<Worker> W) {
  std::unique_lock<std::mutex> Lock(W->Mutex);
  while (true) {
    W->Changed.wait(Lock, [&] { return W->Stopping || W->Pending; });
    if (W->Stopping)
      return;
    if (std::chrono::steady_clock::now() < W->Due) {
      W->Changed.wait_until(Lock, W->Due); // an edit may move it again
      continue;
    }
    DocumentVersion Version = std::move(*W->Pending);
    W->Pending.reset();
    W->Cancelled = false;
    bool First = !W->Analysed;
    Lock.unlock();

    Running.acquire();
    if (First && Done.Started)
      Done.Started(Version);
    auto Start = std::chrono::steady_clock::now();
    std::string Uri = W->Uri;
    AnalysisResult Result =
        Analyse(Version, W->State, W->Cancelled, [this, Uri] { reanalyse(Uri); });
    auto Took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - Start);
    Running.release();

    Lock.lock();
    if (W->Stopping)
      return;
    // Stale or cancelled: the newer version is pending already.
    if (Result.Cancelled || Version.Generation != W->Newest)
      continue;
    W->Analysed = true;
    Lock.unlock();
    Done.Finished(Version, std::move(Result), Took);
    Lock.lock();
  }
}

} // namespace lsp
} // namespace torch_syncfree
