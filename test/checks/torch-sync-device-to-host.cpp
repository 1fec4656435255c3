// RUN: %check_torch_sync %s torch-sync-device-to-host %t -- %mock_flags
#include <torch/torch.h>
#include <cstdio>
#include <iostream>

// --- positive ---------------------------------------------------------------
float read_back(torch::Tensor maybe_gpu) {
  auto host = maybe_gpu.cpu();
  // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: `cpu()` on a tensor that may be on the GPU copies it to the host and waits for all queued GPU work; true dependency: through `host`, the host reads the tensor's memory; copy once, later: into pinned memory with `non_blocking=true` and one synchronization before the host reads it [torch-sync-device-to-host]
  float *p = host.data_ptr<float>();
  float first = maybe_gpu.to(torch::kCPU).data_ptr<float>()[0];
  // CHECK-MESSAGES: :[[@LINE-1]]:27: warning: `to(<CPU>)` on a tensor that may be on the GPU {{.*}}; true dependency: the host reads the tensor's memory;
  auto acc = maybe_gpu.to(torch::Device("cpu")).accessor<float, 1>();
  // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: `to(<CPU>)` {{.*}}; true dependency: the host reads the tensor's memory;
  return p[0] + first + acc[0];
}

void logging() {
  auto g = torch::randn({4}, torch::kCUDA);
  std::cout << g.cpu() << "\n";
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `cpu()` on a GPU tensor {{.*}}; false dependency: the value is only logged; do the work on the device, or copy after the step or at a log interval [torch-sync-device-to-host]
  auto h = g.to(torch::TensorOptions().device(torch::kCPU).dtype(torch::kDouble));
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `to(<CPU>)` on a GPU tensor {{.*}}; false dependency: the value is stored in `h` but never read;
  g.cpu();
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `cpu()` on a GPU tensor {{.*}}; false dependency: the value is unused;
  for (int i = 0; i < 3; ++i)
    g.cpu().print();
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: `cpu()` on a GPU tensor {{.*}}; false dependency: the value is only logged (every iteration of the loop at line [[@LINE-2]]);
}

// --- negative ---------------------------------------------------------------
void negatives(torch::Tensor maybe_gpu) {
  auto c = torch::rand({3});
  auto a = c.cpu();                                   // already on the CPU
  auto b = maybe_gpu.to(torch::kCPU, /*non_blocking=*/true);  // already asynchronous
  auto d = maybe_gpu.to(torch::kDouble);              // a dtype conversion, no device
  auto e = maybe_gpu.to(torch::kCUDA);                // towards the GPU: another check
  auto f = torch::zeros({2}, torch::kCPU).to(torch::kCPU);
  std::cout << a << b << d << e << f;
}

struct Net : torch::nn::Module {};
void module_to(Net &net) { net.to(torch::kCPU); } // nn::Module::to is not Tensor::to

#define TO_HOST(t) (t).cpu()
void in_macro(torch::Tensor t) {
  auto h = TO_HOST(t);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `cpu()` on a tensor that may be on the GPU {{.*}}; false dependency: the value is stored in `h` but never read;
}

template <typename T> void generic(T t) { auto h = t.cpu(); } // dependent: not a tensor yet
void silenced(torch::Tensor t) {
  auto h = t.cpu(); // NOLINT(torch-sync-device-to-host)
}

// A self-reassignment names the variable once (issue 13: "through `y`, through `y`").
float reassigned_copy(const torch::Tensor &x) {
  auto y = x.cuda().to(torch::kCPU);
  // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: `to(<CPU>)` on a GPU tensor copies it to the host and waits for all queued GPU work; true dependency: through `y`, the host reads the tensor's memory;
  y = y.to(torch::kCPU);
  return y.data_ptr<float>()[0];
}
