// torch-sync-device-to-host: a result copied to the host every step and read there
// (a true dependency). Flag only: the report shows the sync remains.
#include "syncprobe.h"

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  auto x = torch::randn({1024}, torch::device(device));
  double checksum = 0;
  syncprobe::Harness harness("d2h_readback");
  harness.run([&](int step) {
    x = torch::tanh(x * 1.01 + 0.01);
    auto host = x.cpu();
    checksum += host.data_ptr<float>()[step % 1024];
  });
  harness.result("checksum", checksum);
  harness.result("x", x);
  return 0;
}
