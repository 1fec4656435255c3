// torch-sync-host-bool: a finiteness check in TORCH_CHECK and an early stop on
// is_nonzero decide on the host (true dependencies): the syncs remain.
#include "syncprobe.h"

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  auto x = torch::randn({1024}, torch::device(device));
  int stops = 0;
  syncprobe::Harness harness("host_bool");
  harness.run([&](int step) {
    x = torch::tanh(x * 1.1);
    TORCH_CHECK(x.isfinite().all().item<bool>(), "non-finite state");
    if ((x.abs() > 10).any().is_nonzero())
      ++stops;
  });
  harness.result("stops", stops);
  harness.result("x", x);
  return 0;
}
