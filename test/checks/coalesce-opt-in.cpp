// RUN: %check_torch_sync %s 'torch-sync-coalesce,torch-sync-item' %t -- %mock_flags
// RUN: %check_torch_sync --check-prefix=ALONE %s 'torch-sync-coalesce' %t.alone -- %mock_flags
// torch-sync-coalesce's fix is opt-in (`torch-sync-coalesce.Fix: true`). By default
// every read keeps its own finding (torch-sync-item here) and the run is reported
// too, with the remedy and why it has no fix (issue 41: runs are reported by
// default); with the read checks off, the run alone.
#include <torch/torch.h>
#include <cstdio>

void three_reads(int steps) {
  auto w = torch::randn({8}, torch::kCUDA);
  for (int step = 0; step < steps; ++step) {
    float a = w.sum().item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: 2 `item()` reads of GPU tensors in a row (lines [[@LINE-1]], [[@LINE+5]]) each wait for the GPU; false dependency: the values can travel to the host in one copy (every iteration of the loop at line [[@LINE-2]]); stack them on the device and copy once with `torch::stack({...}).cpu()` (one wait instead of 2) (the fix is opt-in{{.*}} [torch-sync-coalesce]
    // CHECK-MESSAGES: :[[@LINE-2]]:23: warning: `item()` {{.*}}[torch-sync-item]
    // CHECK-FIXES: float a = w.sum().item<float>();
    // ALONE-MESSAGES: :[[@LINE-4]]:23: warning: 2 `item()` reads of GPU tensors in a row {{.*}}stack them on the device and copy once with `torch::stack({...}).cpu()` (one wait instead of 2) (the fix is opt-in, `torch-sync-coalesce.Fix: true`: the values are ready after the first read, so the copies it saves are short round trips, and on an H200 the stack and copy cost more) [torch-sync-coalesce]
    // ALONE-FIXES: float a = w.sum().item<float>();
    float b = w.mean().item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: `item()` {{.*}}[torch-sync-item]
    // CHECK-FIXES: float b = w.mean().item<float>();
    std::printf("%f %f\n", a, b);
  }
}
