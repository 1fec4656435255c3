// One translation unit analysed in a process of its own (issue 23: "one TU
// cannot take down the run"). The batch run's threads each start
// `torch-syncfree --internal-worker-request=R --internal-worker-response=W
// <the run's own arguments>` for a unit and wait for it at most --tu-timeout
// seconds: a crash, a fatal error, an abort, memory exhaustion or a hang in
// clang or a check ends that process only, and becomes that unit's error.
// The worker re-reads the same options and compile database as the run (what
// the run resolved once comes in its request: batch/RunOptions.h), so it
// analyses the unit exactly as the run would in-process; its findings come back
// losslessly as JSON (FindingJson.h), with the hashes of the files it read
// (the fix writer applies fixes only to those exact contents).
#ifndef TORCH_SYNCFREE_UNIT_WORKER_H
#define TORCH_SYNCFREE_UNIT_WORKER_H

#include "FindingRecord.h"
#include "SharedPch.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>
#include <vector>

namespace torch_syncfree {

/// What the run asks a worker to analyse (the rest comes from the arguments).
struct WorkerRequest {
  std::string File;        ///< the translation unit's main file, absolute
  std::string SharedPch;   ///< the shared PCH the run validated for it; "" for none
  std::string LineFilter;  ///< the run's effective line filter (--diff already resolved)
  bool WantReadFiles = false; ///< the results cache needs the files read
  /// The run's RunOptions::ProfileAddsIntervalReads and ProfileAddsModuleMoves
  /// (decided once, from the run's configuration).
  bool ProfileAddsIntervalReads = false;
  bool ProfileAddsModuleMoves = false;
};

/// What came back: the findings, or why there are none.
struct WorkerResult {
  std::vector<FindingRecord> Findings;
  bool ParsedPlainly = false;
  std::vector<std::string> ReadFiles;
  std::vector<std::string> AbsentFiles; ///< lookups that found nothing (LookupMisses)
  /// Not empty: the unit's error ("clang crashed while analysing it (signal 11)",
  /// a timeout); Findings is then empty.
  std::string Failure;
};

/// Starts Self with the internal options and RunArguments, waits at most
/// TimeoutSeconds (then kills it) and reads its response.
WorkerResult runUnitInWorker(llvm::StringRef Self, llvm::ArrayRef<std::string> RunArguments,
                             const WorkerRequest &Request, unsigned TimeoutSeconds);

/// Whether this process can create the files a worker exchanges with the run
/// ($TMPDIR); Why says what failed otherwise.
bool workerFilesAvailable(std::string &Why);

/// The worker's side: its request, or nullopt with Error set.
std::optional<WorkerRequest> readWorkerRequest(llvm::StringRef Path, std::string &Error);
/// Writes the response (with the read contents' hashes of this process),
/// atomically; false when it cannot be written.
bool writeWorkerResponse(llvm::StringRef Path, const std::vector<FindingRecord> &Findings,
                         bool ParsedPlainly, const std::vector<std::string> &ReadFiles,
                         const std::vector<std::string> &AbsentFiles);
/// A shared PCH's compile step (SharedPch.h, compilePch) in a worker process
/// `torch-syncfree --internal-pch-request=R --internal-worker-response=W`, at
/// most TimeoutSeconds: a header that crashes or hangs clang fails that build.
PchCompileResult runPchInWorker(llvm::StringRef Self, const clang::tooling::CompileCommand &Command,
                                const std::string &Header, const std::string &Output,
                                unsigned TimeoutSeconds);
/// The worker side: compiles the request's PCH and writes the result; the exit status.
int runPchWorker(llvm::StringRef RequestPath, llvm::StringRef ResponsePath);

/// Worker set-up: no core files, and the worker dies with the run that started it.
void becomeWorker();

} // namespace torch_syncfree

#endif
