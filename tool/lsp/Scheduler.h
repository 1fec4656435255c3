// The language server's scheduling layer (clangd's TUScheduler shape): one
// worker thread per open document, which analyses the newest version of its
// text after a debounce, cancels an analysis its document outgrew (an edit
// arrives while it runs: the parse stops at the next top-level declaration),
// drops results that are stale when they arrive, and analyses again when a
// preamble it waited for is ready. A counting semaphore bounds how many
// analyses run at once; the preamble builder (Analysis.h) runs beside them.
#ifndef TORCH_SYNCFREE_LSP_SCHEDULER_H
#define TORCH_SYNCFREE_LSP_SCHEDULER_H

#include "lsp/Analysis.h"
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace torch_syncfree {
namespace lsp {

/// One version of a document, as the server handed it over.
struct DocumentVersion {
  std::string Uri, Path, Text;
  std::optional<int64_t> Version; ///< the client's, when it sent one
  uint64_t Generation = 0;        ///< the server's count of the document's edits
};

class Scheduler {
public:
  using AnalyseFn = std::function<AnalysisResult(const DocumentVersion &,
                                                 const std::shared_ptr<DocumentState> &,
                                                 const std::atomic<bool> &Cancelled,
                                                 std::function<void()> Reanalyse)>;
  struct Callbacks {
    /// Before the first analysis of a document (progress reports).
    std::function<void(const DocumentVersion &)> Started;
    /// A result that is current (never a stale or cancelled one).
    std::function<void(const DocumentVersion &, AnalysisResult, std::chrono::milliseconds)> Finished;
  };
  Scheduler(AnalyseFn Analyse, Callbacks Done, unsigned MaxConcurrent);
  ~Scheduler();

  /// A new version of Uri, analysed Delay after its last update (0: at once).
  void update(DocumentVersion Version, std::chrono::milliseconds Delay);
  /// Uri was closed: its worker ends after the analysis it is in (cancelled).
  void remove(const std::string &Uri);
  /// Analyse Uri's last version again (a preamble it waited for is ready).
  void reanalyse(const std::string &Uri);

private:
  struct Worker;
  void run(std::shared_ptr<Worker> W);

  /// Bounds concurrent analyses (std::counting_semaphore is C++20).
  class Slots {
  public:
    explicit Slots(unsigned N) : Free(N) {}
    void acquire();
    void release();

  private:
    std::mutex Mutex;
    std::condition_variable Changed;
    unsigned Free;
  };

  AnalyseFn Analyse;
  Callbacks Done;
  Slots Running;
  std::mutex Mutex;
  std::map<std::string, std::shared_ptr<Worker>> Workers;
};

} // namespace lsp
} // namespace torch_syncfree

#endif
