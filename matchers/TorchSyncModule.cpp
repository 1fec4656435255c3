// Registers the torch-syncfree checks with clang-tidy's module registry. The
// same object file serves the plugin (clang-tidy --load) and the standalone tool.
#include "SyncCheck.h"

#include "clang-tidy/ClangTidyModule.h"

using namespace clang::tidy;

namespace torch_syncfree {

// Each check's factory, defined at the end of its .cpp (TORCH_SYNC_CHECK_FACTORY).
#define TORCH_SYNC_CHECK(Class, Name, Summary, Level)                                                        \
  std::unique_ptr<SyncCheck> make##Class(llvm::StringRef, ClangTidyContext *);
#include "Checks.def"
#undef TORCH_SYNC_CHECK

using CheckMaker = std::unique_ptr<SyncCheck> (*)(llvm::StringRef, ClangTidyContext *);

static void add(ClangTidyCheckFactories &Factories, const std::shared_ptr<AnalysisHub> &Hub,
                llvm::StringRef Name, CheckMaker Make) {
  Factories.registerCheckFactory(Name, [Hub, Make](llvm::StringRef CheckName, ClangTidyContext *Context) {
    std::unique_ptr<SyncCheck> Check = Make(CheckName, Context);
    Check->shareAnalysesThrough(Hub);
    return Check;
  });
}

class TorchSyncModule : public ClangTidyModule {
public:
  void addCheckFactories(ClangTidyCheckFactories &Factories) override {
    // One hub for the checks this factory set creates: they share the
    // analysis of each TU (one oracle, one index) and the reads one check's
    // fix takes over. A factory set checks one TU at a time (clang-tidy's
    // run, a batch worker's runChecks, an editor analysis).
    auto Hub = std::make_shared<AnalysisHub>();
#define TORCH_SYNC_CHECK(Class, Name, Summary, Level) add(Factories, Hub, Name, make##Class);
#include "Checks.def"
  }
};

} // namespace torch_syncfree

static ClangTidyModuleRegistry::Add<torch_syncfree::TorchSyncModule>
    RegisterTorchSync("torch-sync-module", "Checks for host-device synchronisations in LibTorch code.");

// Referenced by the standalone tool so the linker keeps this registration.
volatile int TorchSyncModuleAnchorSource = 0;
