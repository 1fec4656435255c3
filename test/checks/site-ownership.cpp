// RUN: %check_torch_sync %s 'torch-sync-item,torch-sync-deferred-log,torch-sync-deferred-accumulate,torch-sync-coalesce,torch-sync-grad-norm' %t -config="{CheckOptions: {torch-sync-coalesce.Fix: true}}" -- %mock_flags
// One finding per sync site, whichever checks run: Checks.def's precedence
// (TORCH_SYNC_SITE_OWNER) decides which check reports a read several report.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

// Two reads in one summand: the accumulation is deferred-accumulate's finding
// at its first read (no fix); the second read keeps its own finding.
float two_reads_one_summand(int steps) {
  auto a = torch::randn({}, torch::kCUDA);
  auto b = torch::randn({}, torch::kCUDA);
  float m = 0;
  for (int i = 0; i < steps; ++i) {
    m += a.item<float>() + b.item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `m` accumulates `item()` every iteration, {{.*}}(no fix: the summand is not a plain `t.item<T>()` (times a host value)) [torch-sync-deferred-accumulate]
    // CHECK-MESSAGES: :[[@LINE-2]]:30: warning: `item()` on a GPU tensor {{.*}}false dependency: the value is summed into `m`, which the function returns: its caller needs the total once, not each read {{.*}}[torch-sync-item]
  }
  return m;
}

// Accumulated reads in a row are deferred-accumulate's, with or without its fix
// (here the metrics are also printed in the loop): never coalesced, never item's.
void accumulated_in_a_row(int steps) {
  auto w = torch::randn({8}, torch::kCUDA);
  double sum = 0, mean = 0;
  for (int i = 0; i < steps; ++i) {
    sum += w.sum().item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: `sum` accumulates `item()` every iteration, {{.*}}(no fix: `sum` is also used inside the loop) [torch-sync-deferred-accumulate]
    mean += w.mean().item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: `mean` accumulates `item()` every iteration, {{.*}}(no fix: `mean` is also used inside the loop) [torch-sync-deferred-accumulate]
    std::printf("%f %f\n", sum, mean);
  }
}

// A norm summed into a host metric is deferred-accumulate's, not grad-norm's.
double accumulated_norm(torch::nn::Module &model, int steps) {
  double norms = 0;
  for (int i = 0; i < steps; ++i) {
    norms += torch::nn::utils::clip_grad_norm_(model.parameters(), 1.0);
    // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `norms` accumulates the host norm `clip_grad_norm_` returns every iteration, {{.*}}(no fix: `norms` is also used inside the loop) [torch-sync-deferred-accumulate]
    std::printf("%f\n", norms);
  }
  return norms;
}
