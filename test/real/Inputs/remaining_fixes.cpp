// The fix forms not covered by the other real-header inputs, compiled against both
// header trees: mask-index mean, index-put with CPU indices, copies with a dtype or
// a tensor as target, copy_ from the host.
#include <torch/torch.h>

torch::Tensor remaining(torch::Device device) {
  auto x = torch::randn({64}, torch::kCUDA);
  auto avg = x.index({x.isnan().logical_not()}).mean();
  // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: selecting with a boolean mask {{.*}}[torch-sync-mask-index]
  // CHECK-FIXES: auto avg = (torch::where(x.isnan().logical_not(), x, 0).sum() / x.isnan().logical_not().sum());
  auto host_idx = torch::randint(64, {8}, torch::kLong);
  auto y = x.index({host_idx});
  // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: a CPU index tensor used on a GPU tensor {{.*}}[torch-sync-index-put]
  // CHECK-FIXES: auto y = x.index({host_idx.to(x.device(), /*non_blocking=*/true)});
  auto host = torch::rand({16});
  auto d = host.to(device, torch::kHalf);
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `to(<GPU>)` {{.*}}[torch-sync-host-to-device]
  // CHECK-FIXES: auto d = host.to(device, torch::kHalf, /*non_blocking=*/true);
  auto e = host.to(x);
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `to(<GPU>)` {{.*}}[torch-sync-host-to-device]
  // CHECK-FIXES: auto e = host.to(x, /*non_blocking=*/true);
  auto dst = torch::empty({16}, torch::kCUDA);
  dst.copy_(host);
  // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: `copy_()` copies a host tensor {{.*}}[torch-sync-host-to-device]
  // CHECK-FIXES: dst.copy_(host, /*non_blocking=*/true);
  return avg + y.sum() + d.sum() + e.sum() + dst.sum();
}
