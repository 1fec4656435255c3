// Hand-written sync-free twin of programs/many_small_kernels.cpp: the constants are
// made on the device and the logged maximum is accumulated on the device and read once.
#include "syncprobe.h"

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  auto state = torch::randn({4096}, torch::device(device));
  auto logged = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
  syncprobe::Harness harness("many_small_kernels");
  harness.run([&](int step) {
    for (int i = 0; i < 16; ++i) {
      auto shift = torch::full({4096}, 0.001 * i, torch::device(device));
      state = torch::sin(state) + shift;
      state = state / (state.norm() + 1.0);
      logged += state.abs().max().to(torch::kDouble);
    }
  });
  harness.result("state", state);
  harness.result("logged", logged.item<double>());
  return 0;
}
