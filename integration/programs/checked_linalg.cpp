// torch-sync-checked-linalg: linalg_inv checks the factorisation on the host every
// step. Flag only (the _ex rewrite changes error behaviour): the sync remains.
#include "syncprobe.h"

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  auto a = torch::eye(16, torch::device(device)) * 2 + torch::randn({16, 16}, torch::device(device)) * 0.01;
  auto acc = torch::zeros({16, 16}, torch::device(device));
  syncprobe::Harness harness("checked_linalg");
  harness.run([&](int step) {
    auto inv = torch::linalg_inv(a);
    acc = acc + inv * 0.01;
  });
  harness.result("acc", acc);
  return 0;
}
