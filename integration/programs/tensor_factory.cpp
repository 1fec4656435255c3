// torch-sync-tensor-factory: a small tensor built every step from host values
// directly on the GPU waits; building on the CPU and moving with non_blocking does not.
#include "syncprobe.h"
#include <vector>

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  auto acc = torch::zeros({16}, torch::device(device));
  syncprobe::Harness harness("tensor_factory");
  harness.run([&](int step) {
    std::vector<float> weights(16);
    for (int i = 0; i < 16; ++i)
      weights[i] = 0.01f * ((i * 7 + step) % 13);
    auto w = torch::tensor(weights, torch::TensorOptions().dtype(torch::kFloat).device(device));
    acc = acc * 0.5 + w;
  });
  harness.result("acc", acc);
  return 0;
}
