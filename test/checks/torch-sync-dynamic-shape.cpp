// RUN: %check_torch_sync %s torch-sync-dynamic-shape %t -- %mock_flags
#include <torch/torch.h>

void positives(torch::Tensor maybe_gpu) {
  auto x = torch::randn({64}, torch::kCUDA);
  auto nz = (x > 0).nonzero();
  // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: `nonzero` on a GPU tensor has an output size that depends on the data, so the host waits for the GPU; true dependency: the output's size is computed from GPU values; with a known bound use `at::nonzero_static(x, size, fill)`; as a guard use `.any()` kept on the device [torch-sync-dynamic-shape]
  auto w = torch::argwhere(x > 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `argwhere` on a GPU tensor
  auto parts = torch::where(x > 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: `where` on a GPU tensor
  auto u = torch::_unique2(maybe_gpu);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `_unique2` on a tensor that may be on the GPU
  auto r = x.repeat_interleave(x.to(torch::kLong));
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `repeat_interleave` on a GPU tensor {{.*}}; pass `output_size` when the total is known [torch-sync-dynamic-shape]
  auto b = x.to(torch::kLong).bincount();
  // CHECK-MESSAGES: :[[@LINE-1]]:31: warning: `bincount` on a GPU tensor
  auto h = x.histc(10);
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `histc` on a GPU tensor {{.*}}; pass an explicit range (`min`, `max`) [torch-sync-dynamic-shape]
}

void negatives() {
  auto x = torch::randn({64}, torch::kCUDA);
  auto sel = torch::where(x > 0, x, 0);                            // three arguments: fixed shape
  auto r = x.repeat_interleave(x.to(torch::kLong), 0, 128);        // output_size given
  auto h = x.histc(10, -1, 1);                                     // explicit range
  x.masked_scatter_(x > 0, x);                                     // measured: no wait
  auto host = torch::randn({64});
  auto nz = (host > 0).nonzero();                                  // CPU
  auto fixed = at::nonzero_static(x > 0, 64);                      // already the remedy
}
