// RUN: %check_torch_sync %s 'torch-sync-item,torch-sync-print,torch-sync-deferred-log,torch-sync-device-to-host' %t -- %mock_flags
// RUN: %check_torch_sync --check-prefix=ALL %s 'torch-sync-item,torch-sync-print,torch-sync-deferred-log,torch-sync-device-to-host' %t.all -config="{CheckOptions: {ReportIntervalReads: true}}" -- %mock_flags
// Issue 25: a value read only at a log interval (`if (step % N == 0)`) follows
// the remedy already (one wait per N steps): not reported by default;
// ReportIntervalReads reports it with the interval. Reads every iteration,
// and reads the host needs, stay reported either way.
#include <torch/torch.h>
#include <cstdio>
#include <iostream>

const int kLogInterval = 10;

void mnist_style(torch::Tensor data) {
  auto x = data.cuda();
  size_t batch_index = 0;
  for (int step = 0; step < 100; ++step) {
    auto loss = (x * step).sum();
    if (batch_index++ % kLogInterval == 0)
      std::printf("loss %.4f\n", loss.item<float>());
    // ALL-MESSAGES: :[[@LINE-1]]:39: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; false dependency: the value is only logged (under the log interval `batch_index++ % kLogInterval == 0` at line [[@LINE-2]]); keep the value on the device as a 0-dim tensor and read it after the step or at a log interval [torch-sync-item]
    if ((step + 1) % 25 == 0) {
      float value = loss.item<float>();
      // ALL-MESSAGES: :[[@LINE-1]]:26: warning: `item()` on a GPU tensor {{.*}}; false dependency: through `value`, the value is only logged (under the log interval `(step + 1) % 25 == 0` at line [[@LINE-2]]);
      std::cout << value << " " << loss << "\n";
      // ALL-MESSAGES: :[[@LINE-1]]:33: warning: printing a GPU tensor {{.*}} (under the log interval `(step + 1) % 25 == 0` at line [[@LINE-4]]); print after the step or at a log interval [torch-sync-print]
      auto host = loss.cpu();
      // ALL-MESSAGES: :[[@LINE-1]]:24: warning: `cpu()` on a GPU tensor {{.*}} (under the log interval `(step + 1) % 25 == 0` at line [[@LINE-6]]);
      std::cout << host << "\n";
    }
  }
}

bool negatives(torch::Tensor data) {
  auto x = data.cuda();
  for (int step = 0; step < 100; ++step) {
    auto loss = (x * step).sum();
    std::printf("every step %.4f\n", loss.item<float>());
    // CHECK-MESSAGES: :[[@LINE-1]]:43: warning: `item()` on a GPU tensor waits for the GPU every iteration although its value is only logged; {{.*}}[torch-sync-deferred-log]
    // ALL-MESSAGES: :[[@LINE-2]]:43: warning: `item()` on a GPU tensor waits for the GPU every iteration although its value is only logged; {{.*}}[torch-sync-deferred-log]
    if (step % 10 == 0 && loss.item<float>() < 0.01f)
      return true; // the host decides: a true dependency, reported at the interval too
    // CHECK-MESSAGES: :[[@LINE-2]]:32: warning: `item()` on a GPU tensor {{.*}}; true dependency
    // ALL-MESSAGES: :[[@LINE-3]]:32: warning: `item()` on a GPU tensor {{.*}}; true dependency
  }
  return false;
}

// The interval spelled by a logging macro counts too; a function template is
// analysed in its instantiation: the every-step read is reported, the interval's not.
#define LOG_EVERY(n, step, value) \
  if ((step) % (n) == 0)          \
  std::printf("%f\n", value)
template <typename T> void templated(torch::Tensor data) {
  auto x = data.cuda();
  for (int step = 0; step < 100; ++step) {
    auto loss = (x * step).sum();
    LOG_EVERY(10, step, loss.item<T>());
    // ALL-MESSAGES: :[[@LINE-1]]:30: warning: `item()` on a GPU tensor {{.*}}; false dependency: the value is only logged (under the log interval `LOG_EVERY` at line [[@LINE-1]]);
    if (step % 5 == 0)
      std::printf("%f\n", loss.item<T>());
    // ALL-MESSAGES: :[[@LINE-1]]:32: warning: `item()` on a GPU tensor {{.*}} (under the log interval `step % 5 == 0` at line [[@LINE-2]]);
    std::printf("%f\n", loss.item<T>());
    // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: `item()` on a GPU tensor waits for the GPU every iteration although its value is only logged; {{.*}}[torch-sync-deferred-log]
    // ALL-MESSAGES: :[[@LINE-2]]:30: warning: `item()` on a GPU tensor waits for the GPU every iteration although its value is only logged; {{.*}}[torch-sync-deferred-log]
  }
}
template void templated<double>(torch::Tensor);
