// A worker process of a batch run (UnitWorker.h): one unit, analysed as the
// run would in-process (RunOptions.h says how the run's options reach it).
#include "CheckRunner.h"
#include "UnitWorker.h"
#include "batch/Batch.h"

using namespace clang::tidy;

namespace torch_syncfree {

int runWorker(RunOptions Options, llvm::StringRef RequestPath, llvm::StringRef ResponsePath,
              std::unique_ptr<clang::tooling::CompilationDatabase> Fixed) {
  becomeWorker();
  std::string Error;
  std::optional<WorkerRequest> Request = readWorkerRequest(RequestPath, Error);
  if (!Request)
    return usageError(Error);
  if (std::optional<int> Exit = resolveWorkerOptions(Options, *Request))
    return *Exit;
  Batch B;
  if (std::optional<int> Exit = loadDatabase(Options, std::move(Fixed), B))
    return *Exit;
  auto Misses = std::make_shared<LookupMisses>();
  auto UnitFS = makeUnitFileSystem(Options, Error, Misses);
  if (!UnitFS)
    return usageError(Error);
  ClangTidyContext Context(makeOptionsProvider(Options));
  UnitRunOptions Run;
  Run.SharedPch = Request->SharedPch;
  Run.EmbedRoots = userProjectRoots(Options); // the same run's arguments: the same roots
  bool ParsedPlainly = false;
  Run.ParsedPlainly = &ParsedPlainly;
  std::vector<std::string> ReadFiles;
  if (Request->WantReadFiles)
    Run.ReadFiles = &ReadFiles;
  std::vector<FindingRecord> Findings = runChecks(Context, *B.Compilations, {Request->File}, UnitFS, Run);
  pauseForTesting("worker"); // test/tool/untrusted-worker-files.test
  if (!writeWorkerResponse(ResponsePath, Findings, ParsedPlainly, ReadFiles,
                           Request->WantReadFiles ? Misses->paths() : std::vector<std::string>()))
    return usageError("cannot write the worker response '" + ResponsePath + "'");
  return ExitClean;
}

} // namespace torch_syncfree
