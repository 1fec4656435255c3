#include "CheckCatalog.h"

namespace torch_syncfree {

static const CheckInfo Catalog[] = {
    {"torch-sync-item",
     "item<T>(), item() and _local_scalar_dense copy a GPU value to the host and wait",
     "docs/checks/torch-sync-item.md"},
    {"torch-sync-device-to-host",
     "cpu() and to(CPU device) on a GPU tensor block until the copy is done",
     "docs/checks/torch-sync-device-to-host.md"},
    {"torch-sync-host-to-device",
     "cuda(), to(GPU device) and copy_ from the host without non_blocking block the host",
     "docs/checks/torch-sync-host-to-device.md"},
};

llvm::ArrayRef<CheckInfo> checkCatalog() { return Catalog; }

const CheckInfo *findCheck(llvm::StringRef Name) {
  for (const CheckInfo &Info : Catalog)
    if (Info.Name == Name)
      return &Info;
  return nullptr;
}

} // namespace torch_syncfree
