// A micro-benchmark of a convolution: CUDA events and explicit synchronisation
// around the timed region, a checksum printed at the end.
#include <torch/torch.h>
#include <chrono>
#include <cstdio>

int main() {
  torch::Device device(torch::kCUDA);
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(64, 64, 3).padding(1));
  conv->to(device);
  auto input = torch::randn({32, 64, 56, 56}, device);
  for (int i = 0; i < 5; ++i)
    conv->forward(input);
  torch::cuda::synchronize(); // SYNC: intentional
  auto start = std::chrono::steady_clock::now();
  torch::Tensor out;
  for (int i = 0; i < 50; ++i)
    out = conv->forward(input);
  torch::cuda::synchronize(); // SYNC: intentional
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("conv: %.3f ms per call\n", ms / 50);
  std::printf("checksum %.4f\n", out.sum().item<double>()); // SYNC: false
  return 0;
}
