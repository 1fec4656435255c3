// Opt-in and guard fixes that depend on the header version, compiled against
// both real header trees: TORCH_CHECK -> at::_assert_async (with the message only
// where the headers declare the two-argument form) and nonzero-emptiness -> any().
#include <torch/torch.h>

int checked_step(torch::Tensor x) {
  auto y = torch::randn({16}, torch::kCUDA) + x;
  TORCH_CHECK(y.isfinite().all().item<bool>(), "non-finite values");
  // CHECK-MESSAGES: :[[@LINE-1]]:34: warning: `item<bool>()` on a tensor that may be on the GPU {{.*}}[torch-sync-host-bool]
  // CHECK113-FIXES: at::_assert_async(y.isfinite().all());
  // CHECK211-FIXES: at::_assert_async(y.isfinite().all(), "non-finite values");
  int hits = 0;
  if ((y > 0).nonzero().size(0) > 0)
    // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: `nonzero` on a tensor that may be on the GPU {{.*}}[torch-sync-dynamic-shape]
    // CHECK-FIXES: if ((y > 0).any().item<bool>() /* torch-syncfree: one bool, no index list */)
    ++hits;
  auto mask = y < -1;
  if (torch::nonzero(mask).numel() == 0)
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: `nonzero` on a tensor that may be on the GPU {{.*}}[torch-sync-dynamic-shape]
    // CHECK-FIXES: if ((mask.dim() == 0 || !mask.any().item<bool>() /* torch-syncfree: one bool, no index list */))
    ++hits;
  return hits;
}
