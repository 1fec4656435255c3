// REQUIRES: cuda
// RUN: %check_torch_sync --compile-fixed %s 'torch-sync-*' %t -- -std=c++17 %cuda_flags -isystem %S/../mock/include
// CUDA host code: a .cu launcher is parsed with --cuda-host-only; kernels are device
// code and not analysed, the host side is checked like any C++ file.
#include <torch/torch.h>
#include <cuda_runtime.h>
#include <iostream>

__global__ void scale_kernel(float *data, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    data[i] *= factor;
}

float launch_and_report(torch::Tensor x, float *host_out) {
  auto y = x.to(torch::kCUDA).contiguous();
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `to(<GPU>)` may copy a host tensor to the GPU {{.*}}[torch-sync-host-to-device]
  // CHECK-FIXES: auto y = x.to(torch::kCUDA, /*non_blocking=*/true).contiguous();
  int n = static_cast<int>(y.numel());
  scale_kernel<<<(n + 255) / 256, 256>>>(y.data_ptr<float>(), 2.0f, n);
  cudaMemcpy(host_out, y.data_ptr<float>(), n * sizeof(float), cudaMemcpyDeviceToHost);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `cudaMemcpy` {{.*}}[torch-sync-explicit]
  std::cout << "sum " << y.sum().item<float>() << "\n";
  // CHECK-MESSAGES: :[[@LINE-1]]:34: warning: `item()` on a GPU tensor copies the value to the host {{.*}}; false dependency: the value is only logged; {{.*}}[torch-sync-item]
  return y.max().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `item()` on a GPU tensor copies the value to the host {{.*}}; true dependency: the value is returned to the caller; {{.*}}[torch-sync-item]
}

void launch_in_loop(torch::Tensor x, int steps) {
  auto y = torch::randn({1024}, torch::kCUDA);
  for (int s = 0; s < steps; ++s) {
    scale_kernel<<<4, 256>>>(y.data_ptr<float>(), 0.5f, 1024);
    cudaDeviceSynchronize();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `cudaDeviceSynchronize` blocks the host {{.*}} (every iteration of the loop at line [[@LINE-3]]); {{.*}}[torch-sync-explicit]
  }
}
