// RUN: %check_torch_sync %s 'torch-sync-item,torch-sync-host-bool' %t -- %mock_flags
// Code in a branch that never runs is not analysed (issue 13): `if constexpr` with
// a false condition, `if` on a constant false flag (a project's debug check macro),
// the `else` of a constant true condition. A branch on a run-time value is.
#include <torch/torch.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace config {
constexpr bool debug = false;
constexpr bool verbose = true;
} // namespace config
#define CHECK_FINITE(enabled, t)                                                           \
  do {                                                                                     \
    if (enabled && !std::isfinite((t).sum().item<float>()))                               \
      std::abort();                                                                        \
  } while (0)

void step(const torch::Tensor &w, bool trace) {
  auto g = w.cuda();
  if constexpr (config::debug)
    std::printf("%f\n", g.sum().item<float>());
  if (config::debug)
    std::printf("%f\n", g.mean().item<float>());
  CHECK_FINITE(config::debug, g);
  if (config::verbose) {
  } else {
    std::printf("%f\n", g.max().item<float>());
  }
  if (config::verbose)
    std::printf("%f\n", g.min().item<float>());
  // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: `item()` on a GPU tensor {{.*}}[torch-sync-item]
  if (trace)
    std::printf("%f\n", g.abs().sum().item<float>());
  // CHECK-MESSAGES: :[[@LINE-1]]:39: warning: `item()` on a GPU tensor {{.*}}[torch-sync-item]
  CHECK_FINITE(trace, g);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `item()` on a GPU tensor {{.*}}[torch-sync-item]
}

// Issue 21: code after a throw (or return) in the same block never runs; a
// label after the jump makes what follows it reachable again.
float after_throw(torch::Tensor t, bool bad) {
  auto g = t.cuda();
  if (bad) {
    throw std::runtime_error("bad input");
    std::printf("%f\n", g.sum().item<float>());
  }
  return 0.f;
}
int after_return_and_label(torch::Tensor t, int n) {
  auto g = t.cuda();
  for (int i = 0; i < n; ++i) {
    if (i > 2) {
      continue;
      std::printf("%f\n", g.sum().item<float>());
    }
  }
  goto done;
  std::printf("%f\n", g.mean().item<float>());
done:
  std::printf("%f\n", g.max().item<float>());
  // CHECK-MESSAGES: :[[@LINE-1]]:31: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; false dependency: the value is only logged
  return 0;
}
