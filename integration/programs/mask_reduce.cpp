// torch-sync-mask-index: the sum and mean of the positive entries, computed by
// selecting with a boolean mask, wait for the mask's count; torch::where does not.
#include "syncprobe.h"

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  auto x = torch::randn({8192}, torch::device(device));
  auto total = torch::zeros({}, torch::device(device));
  auto mean_total = torch::zeros({}, torch::device(device));
  syncprobe::Harness harness("mask_reduce");
  harness.run([&](int step) {
    x = torch::sin(x + 0.1);
    auto positive = x > 0;
    total += x.index({positive}).sum();
    mean_total += x.index({positive}).mean();
  });
  harness.result("total", total);
  harness.result("mean_total", mean_total);
  return 0;
}
