// torch-sync-explicit: a torch::cuda::synchronize() left in the step. PyTorch's sync
// debug mode does not see it; the host-wait probe does. Flag only: the report shows
// the second oracle catching what the first misses.
#include "syncprobe.h"

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  auto x = torch::randn({4096}, torch::device(device));
  syncprobe::Harness harness("explicit_sync");
  harness.run([&](int step) {
    x = torch::sin(x) * 0.9 + 0.1;
    if (torch::cuda::is_available())
      torch::cuda::synchronize();
  });
  harness.result("x", x);
  return 0;
}
