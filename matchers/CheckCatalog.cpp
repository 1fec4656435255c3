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
    {"torch-sync-tensor-factory",
     "torch::tensor({list} or vector, <GPU options>) copies with a blocking copy",
     "docs/checks/torch-sync-tensor-factory.md"},
    {"torch-sync-mask-index", "index({bool_mask}) and masked_select have data-dependent sizes",
     "docs/checks/torch-sync-mask-index.md"},
    {"torch-sync-index-put",
     "index_put_ with integer indices and a host scalar, CPU indices on GPU tensors, "
     "masked_fill_ with a device value",
     "docs/checks/torch-sync-index-put.md"},
    {"torch-sync-scalar-index", "a 0-dim integer GPU tensor used as an index",
     "docs/checks/torch-sync-scalar-index.md"},
    {"torch-sync-dynamic-shape",
     "nonzero, unique, repeat_interleave, bincount, histc: output sizes from GPU data",
     "docs/checks/torch-sync-dynamic-shape.md"},
    {"torch-sync-host-bool", "is_nonzero, equal, allclose, item<bool>() make a host bool",
     "docs/checks/torch-sync-host-bool.md"},
    {"torch-sync-checked-linalg", "linalg ops that check their result on the host",
     "docs/checks/torch-sync-checked-linalg.md"},
    {"torch-sync-grad-norm", "clip_grad_norm_ returns a host double",
     "docs/checks/torch-sync-grad-norm.md"},
    {"torch-sync-explicit", "synchronize calls and blocking cudaMemcpy",
     "docs/checks/torch-sync-explicit.md"},
    {"torch-sync-print", "printing tensor values copies them to the host",
     "docs/checks/torch-sync-print.md"},
    {"torch-sync-deferred-accumulate",
     "metric += t.item<T>() in a loop, read after it: accumulate on the device",
     "docs/checks/torch-sync-deferred-accumulate.md"},
    {"torch-sync-call-in-loop",
     "a call in a loop to a function of this file that makes the host wait",
     "docs/checks/torch-sync-call-in-loop.md"},
    {"torch-sync-pageable-copy",
     "a non_blocking copy between the GPU and pageable host memory still makes the host wait",
     "docs/checks/torch-sync-pageable-copy.md"},
    {"torch-sync-coalesce",
     "several item() reads of GPU tensors in a row: one stack(...).cpu() waits once",
     "docs/checks/torch-sync-coalesce.md"},
    {"torch-sync-deferred-log",
     "item() read every iteration of a loop only to be logged: log at an interval",
     "docs/checks/torch-sync-deferred-log.md"},
    {"torch-sync-graph-capture",
     "a sync between capture_begin() and capture_end() of a CUDA graph breaks the capture",
     "docs/checks/torch-sync-graph-capture.md", "error"},
};

llvm::ArrayRef<CheckInfo> checkCatalog() { return Catalog; }

const CheckInfo *findCheck(llvm::StringRef Name) {
  for (const CheckInfo &Info : Catalog)
    if (Info.Name == Name)
      return &Info;
  return nullptr;
}

} // namespace torch_syncfree
