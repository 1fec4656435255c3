// Copy/compute overlap in a CUDA extension (.cu): batches staged in pinned memory,
// copied asynchronously, an event recorded after each copy; the host waits on the
// event before it refills the staging buffer (the wait protects that memory).
#include <torch/torch.h>
#include <cuda_runtime.h>
#include <cstdio>

int main() {
  torch::Device device(torch::kCUDA);
  auto source = torch::randn({64, 1024, 256});
  auto staging = torch::empty({1024, 256}, torch::TensorOptions().pinned_memory(true));
  auto weight = torch::randn({256, 256}, device);
  cudaEvent_t copied;
  cudaEventCreate(&copied);
  auto result = torch::zeros({1024, 256}, device);
  for (int64_t b = 0; b < source.size(0); ++b) {
    staging.copy_(source[b]);
    auto on_device = staging.to(device, /*non_blocking=*/true);
    cudaEventRecord(copied, nullptr);
    result = result + torch::matmul(on_device, weight);
    cudaEventSynchronize(copied); // SYNC: intentional
  }
  cudaEventDestroy(copied);
  std::printf("result norm %.3f\n", result.norm().item<double>()); // SYNC: false
  return 0;
}
