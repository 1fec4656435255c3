// RUN: %check_torch_sync %s torch-sync-explicit %t -- %mock_flags
#include <torch/torch.h>
#include <c10/cuda/CUDAStream.h>
#include <chrono>
#include <cstdio>

void positives(float *device_buffer, float *host_buffer) {
  for (int step = 0; step < 10; ++step) {
    torch::cuda::synchronize();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `synchronize` blocks the host until the GPU work it covers is done (PyTorch's sync debug mode does not see this one); false dependency: no timer or host-buffer release next to it needs the GPU to be idle (every iteration of the loop at line [[@LINE-2]]); remove it, or wait on an event for just the work that is needed [torch-sync-explicit]
  }
  cudaDeviceSynchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `cudaDeviceSynchronize` blocks the host {{.*}} (PyTorch's sync debug mode does not see this one); false dependency
  cudaMemcpy(host_buffer, device_buffer, 16, cudaMemcpyDeviceToHost);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `cudaMemcpy` blocks the host
  c10::cuda::getCurrentCUDAStream().synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `synchronize` blocks the host
}

double timed() {
  auto start = std::chrono::steady_clock::now();
  auto x = torch::randn({1024}, torch::kCUDA).sum();
  torch::cuda::synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `synchronize` blocks the host {{.*}}; intentional barrier: it brackets a timer or the release of a buffer; for timing, CUDA events measure without stalling the host [torch-sync-explicit]
  auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(stop - start).count();
}

void negatives(float *a, float *b) {
  cudaMemcpy(a, b, 16, cudaMemcpyDeviceToDevice);   // device to device
  cudaMemcpyAsync(a, b, 16, cudaMemcpyHostToDevice); // asynchronous
}

// Macros and templates: a barrier spelled in a macro body is reported at the
// expansion; a template is checked once, in its definition.
#define SYNC_ALL() torch::cuda::synchronize()
void macro_and_template_cases() {
  for (int i = 0; i < 3; ++i)
    SYNC_ALL();
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `synchronize` blocks the host
}
template <int N> void step_n() {
  for (int i = 0; i < N; ++i)
    torch::cuda::synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `synchronize` blocks the host
}
template void step_n<1>();
template void step_n<2>();
