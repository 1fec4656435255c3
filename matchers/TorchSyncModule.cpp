// Registers the torch-syncfree checks with clang-tidy's module registry. The
// same object file serves the plugin (clang-tidy --load) and the standalone tool.
#include "checks/CatalogChecks.h"
#include "checks/DeviceToHostCheck.h"
#include "checks/HostToDeviceCheck.h"
#include "checks/ItemCheck.h"

#include "clang-tidy/ClangTidyModule.h"

using namespace clang::tidy;

namespace torch_syncfree {

class TorchSyncModule : public ClangTidyModule {
public:
  void addCheckFactories(ClangTidyCheckFactories &Factories) override {
    Factories.registerCheck<ItemCheck>("torch-sync-item");
    Factories.registerCheck<DeviceToHostCheck>("torch-sync-device-to-host");
    Factories.registerCheck<HostToDeviceCheck>("torch-sync-host-to-device");
    Factories.registerCheck<TensorFactoryCheck>("torch-sync-tensor-factory");
    Factories.registerCheck<MaskIndexCheck>("torch-sync-mask-index");
    Factories.registerCheck<IndexPutCheck>("torch-sync-index-put");
    Factories.registerCheck<ScalarIndexCheck>("torch-sync-scalar-index");
    Factories.registerCheck<DynamicShapeCheck>("torch-sync-dynamic-shape");
    Factories.registerCheck<HostBoolCheck>("torch-sync-host-bool");
    Factories.registerCheck<CheckedLinalgCheck>("torch-sync-checked-linalg");
    Factories.registerCheck<GradNormCheck>("torch-sync-grad-norm");
    Factories.registerCheck<ExplicitSyncCheck>("torch-sync-explicit");
    Factories.registerCheck<PrintCheck>("torch-sync-print");
    Factories.registerCheck<DeferredAccumulateCheck>("torch-sync-deferred-accumulate");
    Factories.registerCheck<GraphCaptureCheck>("torch-sync-graph-capture");
    Factories.registerCheck<DeferredLogCheck>("torch-sync-deferred-log");
    Factories.registerCheck<CoalesceCheck>("torch-sync-coalesce");
    Factories.registerCheck<CallInLoopCheck>("torch-sync-call-in-loop");
    Factories.registerCheck<PageableCopyCheck>("torch-sync-pageable-copy");
  }
};

} // namespace torch_syncfree

static ClangTidyModuleRegistry::Add<torch_syncfree::TorchSyncModule>
    RegisterTorchSync("torch-sync-module", "Checks for host-device synchronisations in LibTorch code.");

// Referenced by the standalone tool so the linker keeps this registration.
volatile int TorchSyncModuleAnchorSource = 0;
