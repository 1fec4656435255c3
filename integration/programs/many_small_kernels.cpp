// A step with many small kernels where syncs dominate: a host-side loop reads a
// scalar (a norm) every iteration to normalise, and moves host constants each time.
// Its hand-written sync-free twin (twins/many_small_kernels.cpp) is the limit.
#include "syncprobe.h"
#include <cstdio>

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  auto state = torch::randn({4096}, torch::device(device));
  double logged = 0;
  syncprobe::Harness harness("many_small_kernels");
  harness.run([&](int step) {
    for (int i = 0; i < 16; ++i) {
      auto shift = torch::full({4096}, 0.001 * i).to(device);
      state = torch::sin(state) + shift;
      state = state / (state.norm() + 1.0);
      logged += state.abs().max().item<double>();
    }
  });
  harness.result("state", state);
  harness.result("logged", logged);
  return 0;
}
