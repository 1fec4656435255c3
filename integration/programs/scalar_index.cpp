// torch-sync-scalar-index: picking the best row with a 0-dim argmax tensor reads the
// index on the host; a one-element index tensor does not.
#include "syncprobe.h"

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  auto table = torch::randn({256, 32}, torch::device(device));
  auto acc = torch::zeros({32}, torch::device(device));
  syncprobe::Harness harness("scalar_index");
  harness.run([&](int step) {
    auto scores = table.sum(1);
    auto best = scores.argmax();
    auto row = table.index({best});
    acc = acc + row;
    table = table * 0.999;
  });
  harness.result("acc", acc);
  return 0;
}
