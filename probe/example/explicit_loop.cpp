// The probe's example (docs/profiles.md): a training-style loop with a logged
// loss, an explicit cudaDeviceSynchronize and a blocking copy to the host. Run
// with TORCH_SYNCFREE_PROFILE=profile.json, then
//   torch-syncfree --profile=profile.json explicit_loop.cpp -- <flags>
#include <torch/torch.h>
#include <torch_syncfree/probe.h>
#include <cuda_runtime_api.h>
#include <cstdio>

int main() {
  torch::manual_seed(0);
  torch::Device device(torch::kCUDA);
  auto w = torch::randn({256, 256}, device);
  double total = 0;
  for (int step = 0; step < 20; ++step) {
    auto x = torch::randn({256, 256}, device);
    auto loss = torch::mm(x, w).pow(2).mean();
    total += loss.item<double>();
    cudaDeviceSynchronize();
    auto host = loss.to(torch::kCPU);
    if (step % 5 == 0)
      std::printf("step %d loss %.4f host %.4f\n", step, loss.item<float>(), host.item<float>());
    torch_syncfree::probe::step();
  }
  std::printf("RESULT total %.6f\n", total);
  return 0;
}
