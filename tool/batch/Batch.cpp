// The batch run's driver: its stages in order (Batch.h).
#include "batch/Batch.h"

#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

namespace torch_syncfree {

int usageError(const llvm::Twine &Message) {
  llvm::errs() << "torch-syncfree: error: " << Message << "\n";
  return ExitUsage;
}

std::string counted(size_t N, llvm::StringRef Noun) {
  return std::to_string(N) + " " + Noun.str() + (N == 1 ? "" : "s");
}

int runBatch(const RunOptions &Options, std::unique_ptr<clang::tooling::CompilationDatabase> Fixed) {
  Batch B;
  B.Formatter = makeFormatter(Options, B);
  if (std::optional<int> Exit = runConfigCommands(Options))
    return *Exit;
  if (std::optional<int> Exit = loadInputs(Options, std::move(Fixed), B))
    return *Exit;
  analyseUnits(Options, B);
  if (std::optional<int> Exit = postProcess(Options, B))
    return *Exit;
  printFindings(Options, B);
  if (std::optional<int> Exit = exportAndFix(Options, B))
    return *Exit;
  printSummary(Options, B);
  if (B.Crashed) {
    // A recovered crash skipped its frames' destructors: objects it left
    // registered with LLVM's globals (timers, say) must not be torn down.
    // Exit as clang does after a recovered cc1 crash: without cleanup.
    llvm::outs().flush();
    llvm::errs().flush();
    llvm::sys::Process::Exit(exitStatus(Options, B), /*NoCleanup=*/true);
  }
  return exitStatus(Options, B);
}

} // namespace torch_syncfree
