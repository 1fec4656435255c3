// RUN: %check_torch_sync --compile-fixed %s 'torch-sync-deferred-accumulate,torch-sync-mask-index,torch-sync-scalar-index' %t -- %mock_flags
// Fixes in one loop compose in one run: the deferred accumulation edits only
// around the summand (before it, the item call's tail, after it), so a
// mask-index or scalar-index rewrite inside the summand applies too.
#include <torch/torch.h>
#include <vector>

double masked_total(std::vector<torch::Tensor> &xs) {
  double total = 0;
  for (auto &x : xs) {
    auto g = x.cuda();
    auto mask = g > 0;
    total += g.index({mask}).sum().item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: selecting with a boolean mask
    // CHECK-MESSAGES: :[[@LINE-2]]:36: warning: `total` accumulates `item()` every iteration
  }
  return total;
}
// CHECK-FIXES:      torch::Tensor total_on_device; // total, summed on the device
// CHECK-FIXES:      auto total_step = torch::where(mask, g, 0).sum().detach();
// CHECK-FIXES-NEXT: if (total_on_device.defined())
// CHECK-FIXES-NEXT:   total_on_device.add_(total_step);
// CHECK-FIXES:      total += total_on_device.item<double>();

double best_rows(std::vector<torch::Tensor> &xs, int64_t n) {
  double sum = 0;
  for (auto &x : xs) {
    auto g = x.cuda();
    auto best = g.sum(1).argmax();
    sum += g.index({best}).sum().item<double>() * n;
    // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: indexing with a 0-dim integer tensor
    // CHECK-MESSAGES: :[[@LINE-2]]:34: warning: `sum` accumulates `item()` every iteration
  }
  return sum;
}
// CHECK-FIXES:      auto sum_step = g.index({best.unsqueeze(0)}).squeeze(0).sum().detach();
// CHECK-FIXES-NEXT: if (sum_on_device.defined())
// CHECK-FIXES-NEXT:   sum_on_device.add_(sum_step, n);

// The summand needs parentheses to take `.detach()`: inserted around it.
double sum_of_two(std::vector<torch::Tensor> &xs, torch::Tensor bias) {
  double s = 0;
  for (auto &x : xs) {
    auto g = x.cuda();
    s += (g.sum() + bias.cuda().sum()).item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:40: warning: `s` accumulates `item()` every iteration
  }
  return s;
}
// CHECK-FIXES:      auto s_step = (g.sum() + bias.cuda().sum()).detach();
