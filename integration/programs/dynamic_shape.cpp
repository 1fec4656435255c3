// torch-sync-dynamic-shape: nonzero's output size comes from GPU data; the host
// needs it to size the output (a true dependency): the sync remains.
#include "syncprobe.h"

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  auto x = torch::randn({4096}, torch::device(device));
  double found = 0;
  syncprobe::Harness harness("dynamic_shape");
  harness.run([&](int step) {
    x = torch::sin(x + 0.3);
    auto hits = (x > 0.9).nonzero();
    found += hits.size(0);
  });
  harness.result("found", found);
  return 0;
}
