// RUN: %check_torch_sync %s torch-sync-item,torch-sync-host-to-device %t -- %mock_flags
// Found by the blind programs of issue 43 (data parallel over two GPUs): an
// element of a const local container of devices given in a list is one of the
// listed devices. A copy between two of them is no host copy, and what it
// makes is on the GPU.
#include <torch/torch.h>
#include <vector>

float two_gpus(torch::Tensor w) {
  const std::vector<torch::Device> devices = {torch::Device(torch::kCUDA, 0), torch::Device(torch::kCUDA, 1)};
  auto x = torch::ones({4}).to(devices[0]);
  // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `ones(...).to(...)` fills the tensor on the host, then copies it to the GPU {{.*}} [torch-sync-host-to-device]
  // CHECK-FIXES: auto x = torch::ones({4}, torch::device(devices[0]));
  auto y = x.to(devices.at(1));
  return y.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `item()` on a GPU tensor {{.*}} [torch-sync-item]
}

// Negative: a container that is not const may change; its elements are unknown.
float changing(torch::Tensor w, std::vector<torch::Device> devices) {
  auto y = w.to(devices[0]);
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `to(<GPU>)` may copy a host tensor to the GPU {{.*}} [torch-sync-host-to-device]
  return y.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `item()` on a tensor that may be on the GPU {{.*}} [torch-sync-item]
}
