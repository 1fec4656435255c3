// RUN: %check_torch_sync %s 'torch-sync-*' %t -- %mock_flags
// A template is analysed once, in its first instantiation in the TU: calls on
// dependent types (a training function over its loader type, as in LibTorch's
// examples) are found there. A template the TU never instantiates is analysed
// in its definition (non-dependent calls only).
#include <torch/torch.h>
#include <cstdio>
#include <vector>

template <typename DataLoader>
void train(DataLoader &loader, torch::Device device) {
  double total = 0;
  for (auto &batch : loader) {
    auto data = batch.data.to(device);
    // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: `to(<GPU>)` may copy a host tensor to the GPU
    auto loss = data.sum();
    total += loss.template item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: `total` accumulates `item()` every iteration{{.*}}(no fix: no gain while `loss.template item<float>()` at line [[@LINE+1]] still waits every iteration (no fix of this run removes it); {{.*}}) [torch-sync-deferred-accumulate]
    std::printf("%f\n", loss.template item<float>());
    // CHECK-MESSAGES: :[[@LINE-1]]:39: warning: `item()` on a tensor that may be on the GPU waits for the GPU every iteration although its value is only logged
  }
  std::printf("%f\n", total);
}
// A user's batch struct and a device parameter: the copy may go from the GPU to
// the host, so no non_blocking (issue 43, item 12). The sum is not moved to the
// device: the loss logged every iteration still waits (issue 43, item 14).
// CHECK-FIXES: auto data = batch.data.to(device);
// CHECK-FIXES: total += loss.template item<double>();

struct Batch {
  torch::Tensor data;
};
struct OtherBatch {
  torch::Tensor data;
};
// Two instantiations: one report per site.
void run(std::vector<Batch> &a, std::vector<OtherBatch> &b, torch::Device device) {
  train(a, device);
  train(b, device);
}

// A class template's method, instantiated once.
template <typename T>
struct Meter {
  T value{};
  float read(torch::Tensor t) { return t.template item<float>() + value; }
  // CHECK-MESSAGES: :[[@LINE-1]]:51: warning: `item()` on a tensor that may be on the GPU
};
float use_meter(torch::Tensor t) { return Meter<float>{}.read(t); }

// Never instantiated here: only its non-dependent calls are analysed.
template <typename T>
float never_used(T &holder, torch::Tensor t) {
  float a = holder.data.template item<float>();
  float b = t.item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: `item()` on a tensor that may be on the GPU
  return a + b;
}
