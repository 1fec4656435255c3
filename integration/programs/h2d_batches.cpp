// torch-sync-host-to-device: host batches copied to the GPU every step, a constant
// made on the host and copied, and a staging copy_ into a device buffer. All three
// block the host; the fixed program passes non_blocking or creates on the device.
#include "syncprobe.h"

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  auto weight = torch::randn({32, 32}).to(device);
  auto bias = torch::zeros({32}).to(device);
  auto staging = torch::empty({128, 32}, torch::device(device));
  auto total = torch::zeros({}, torch::device(device));
  syncprobe::Harness harness("h2d_batches");
  harness.run([&](int step) {
    // 128 x 32 float = 16 KB: small enough that a non_blocking copy from pageable
    // memory does not wait (measured: 16 KB did not, 256 MB did).
    auto batch = torch::randn({128, 32});
    auto x = batch.to(device);
    auto scale = torch::ones({32}).to(device);
    staging.copy_(torch::randn({128, 32}));
    auto y = torch::relu(torch::matmul(x, weight) + bias) * scale + staging;
    total += y.mean();
  });
  harness.result("total", total);
  return 0;
}
