// torch-sync-index-put: writing a host scalar through integer indices and gathering
// with an index tensor kept on the CPU both wait; a device scalar_tensor and an index
// moved with non_blocking do not.
#include "syncprobe.h"

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  auto x = torch::randn({4096}, torch::device(device));
  auto idx = torch::randint(4096, {64}, torch::TensorOptions().dtype(torch::kLong).device(device));
  auto host_idx = torch::randint(4096, {64}, torch::kLong);
  auto acc = torch::zeros({64}, torch::device(device));
  syncprobe::Harness harness("index_put");
  harness.run([&](int step) {
    x = x * 1.001 + 0.001;
    x.index_put_({idx}, 0.5);
    acc = acc + x.index({host_idx});
  });
  harness.result("x", x);
  harness.result("acc", acc);
  return 0;
}
