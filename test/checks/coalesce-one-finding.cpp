// RUN: %check_torch_sync %s 'torch-sync-coalesce,torch-sync-item,torch-sync-deferred-log' %t -config="{CheckOptions: {torch-sync-coalesce.Fix: true}}" -- %mock_flags
// The reads of a coalesced run that gets its fix are one finding, torch-sync-coalesce's;
// a run without a fix is reported too (issue 41), and its reads keep their own.
// The run's class is its reads': true when the host needs one of the values.
#include <torch/torch.h>
#include <cstdio>

void fixed_run(int steps) {
  auto w = torch::randn({8}, torch::kCUDA);
  for (int step = 0; step < steps; ++step) {
    float a = w.sum().item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: 2 `item()` reads of GPU tensors in a row {{.*}}[torch-sync-coalesce]
    // CHECK-FIXES: float a = static_cast<float>(host_values.data_ptr<double>()[0]);
    float b = w.mean().item<float>();
    std::printf("%f %f\n", a, b);
  }
}

double note_only() {
  auto logits = torch::randn({16, 4}, torch::kCUDA);
  int64_t best = logits.argmax().item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:34: warning: 2 `item()` reads of GPU tensors in a row (lines [[@LINE-1]], [[@LINE+2]]) each wait for the GPU; true dependency: line [[@LINE-1]]: through `best`, the value is returned to the caller; one copy still serves every read; stack them on the device and copy once with `torch::stack({...}).cpu()` (one wait instead of 2) (no fix: stacking these values needs 2 kernels {{.*}} [torch-sync-coalesce]
  // CHECK-MESSAGES: :[[@LINE-2]]:34: warning: `item()` on a GPU tensor {{.*}}[torch-sync-item]
  double total = logits.sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:31: warning: `item()` on a GPU tensor {{.*}}[torch-sync-item]
  return best + total;
}
