// RUN: %check_torch_sync %s torch-sync-deferred-log %t -- %mock_flags
// RUN: %check_torch_sync --check-prefix=BOTH %s torch-sync-deferred-log,torch-sync-item %t.both -- %mock_flags
// An item() read every iteration only to be logged. With torch-sync-item also
// enabled (BOTH), the site is reported once, by this check.
#include <torch/torch.h>
#include <cstdio>
#include <iostream>

void no_interval(int steps) {
  auto w = torch::randn({8}, torch::kCUDA);
  for (int step = 0; step < steps; ++step) {
    auto loss = (w * step).sum();
    std::cout << "loss " << loss.item<float>() << "\n";
    // CHECK-MESSAGES: :[[@LINE-1]]:34: warning: `item()` on a GPU tensor waits for the GPU every iteration although its value is only logged; false dependency: the value is only logged (every iteration of the loop at line [[@LINE-3]]); log every N iterations (`if (step % N == 0)`), or accumulate on the device and print after the loop (no fix: what is printed would change) [torch-sync-deferred-log]
    // BOTH-MESSAGES: :[[@LINE-2]]:34: warning: `item()` on a GPU tensor waits for the GPU every iteration {{.*}}[torch-sync-deferred-log]
  }
}

void read_outside_interval(int steps) {
  auto w = torch::randn({8}, torch::kCUDA);
  for (int step = 0; step < steps; ++step) {
    auto loss = (w * step).sum();
    float value = loss.item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: `item()` on a GPU tensor waits for the GPU every iteration although its value is only logged; false dependency: through `value`, the value is only logged (every iteration of the loop at line [[@LINE-3]]); it is printed only under the log interval at line [[@LINE+2]]: read it inside that `if` [torch-sync-deferred-log]
    // BOTH-MESSAGES: :[[@LINE-2]]:24: warning: `item()` on a GPU tensor waits {{.*}}[torch-sync-deferred-log]
    if (step % 100 == 0)
      // CHECK-MESSAGES: :[[@LINE-1]]:5: note: log interval here
      // BOTH-MESSAGES: :[[@LINE-2]]:5: note: log interval here
      std::printf("step %d loss %f\n", step, value);
  }
}

void interval_elsewhere(int steps, torch::Tensor maybe_gpu) {
  for (int step = 0; step < steps; ++step) {
    auto loss = maybe_gpu.sum() * step;
    if ((step + 1) % 50 == 0)
      std::printf("step %d\n", step);
    std::cerr << loss.item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: `item()` on a tensor that may be on the GPU {{.*}}; the loop already has a log interval at line [[@LINE-3]]: log it there (no fix: what is printed would change) [torch-sync-deferred-log]
    // CHECK-MESSAGES: :[[@LINE-4]]:5: note: log interval here
    // BOTH-MESSAGES: :[[@LINE-3]]:23: warning: `item()` on a tensor that may be on the GPU {{.*}}[torch-sync-deferred-log]
    // BOTH-MESSAGES: :[[@LINE-6]]:5: note: log interval here
  }
}

// --- negatives -----------------------------------------------------------------
float negatives(int steps) {
  auto w = torch::randn({8}, torch::kCUDA);
  auto host = torch::randn({8});
  float last = 0;
  for (int step = 0; step < steps; ++step) {
    auto loss = (w * step).sum();
    if (step % 10 == 0)
      std::cout << loss.item<float>();              // already once per interval: no finding (issue 25)
    if (step % 10 == 5) {
      float at_interval = loss.item<float>();       // read under the interval, via a variable
      std::cout << at_interval;
    }
    // (under the interval: no finding from torch-sync-item either; ReportIntervalReads reports them)
    std::cout << host.sum().item<float>();          // CPU tensor
    auto host_copy = loss.to(torch::kCPU, /*non_blocking=*/true);
    std::cout << host_copy.item<float>();           // read from a CPU copy: no wait here
    last = loss.item<float>();                       // not only logged: torch-sync-item's
    // BOTH-MESSAGES: :[[@LINE-1]]:17: warning: `item()` on a GPU tensor copies {{.*}}[torch-sync-item]
  }
  torch::nn::Linear net(8, 8);
  for (int step = 0; step < steps; ++step)
    net->to(torch::kCUDA);                           // Module::to: no value read at all
  std::cout << w.sum().item<float>();               // not in a loop: torch-sync-item's
  // BOTH-MESSAGES: :[[@LINE-1]]:24: warning: `item()` on a GPU tensor copies {{.*}}[torch-sync-item]
  return last;
}

// Macros and templates: reported at the expansion / once per template.
#define LOG_VALUE(t) std::cout << (t).item<float>()
void macro_and_template_cases(int steps) {
  auto w = torch::randn({8}, torch::kCUDA);
  for (int step = 0; step < steps; ++step)
    LOG_VALUE(w.sum());
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `item()` on a GPU tensor waits for the GPU every iteration
  // BOTH-MESSAGES: :[[@LINE-2]]:5: warning: `item()` on a GPU tensor waits for the GPU every iteration
}
template <int N> void log_n(const torch::Tensor &t) {
  for (int i = 0; i < N; ++i)
    std::cout << t.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:26: warning: `item()` on a tensor that may be on the GPU waits
  // BOTH-MESSAGES: :[[@LINE-2]]:26: warning: `item()` on a tensor that may be on the GPU waits
}
template void log_n<1>(const torch::Tensor &);
template void log_n<2>(const torch::Tensor &);
