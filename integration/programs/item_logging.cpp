// torch-sync-item: a loss read to the host every step for logging and a metric. The
// check flags these (false dependencies) without a fix: the report shows they remain.
#include "syncprobe.h"
#include <iostream>

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  auto w = torch::randn({64, 64}, torch::device(device)) * 0.01;
  auto x = torch::randn({256, 64}, torch::device(device));
  double running = 0;
  syncprobe::Harness harness("item_logging");
  harness.run([&](int step) {
    auto loss = torch::matmul(x, w).pow(2).mean();
    running += loss.item<double>();
    if (step % 1000 == 999)
      std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
    w = w - 0.001 * w;
  });
  harness.result("running", running);
  harness.result("w", w);
  return 0;
}
