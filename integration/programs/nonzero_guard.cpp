// torch-sync-dynamic-shape's emptiness fix: a guard that builds the whole index list
// with nonzero() only to ask whether it is empty. The rewrite asks any() instead: the
// host still reads one bool (one wait per step either way), but the GPU computes one
// reduction instead of the index list and its size-dependent allocation.
#include "syncprobe.h"

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  auto x = torch::randn({1 << 20}, torch::device(device));
  auto y = torch::zeros_like(x);
  int64_t taken = 0;
  syncprobe::Harness harness("nonzero_guard");
  harness.run([&](int step) {
    auto shifted = x + 0.01 * step;
    auto over = shifted > 4.0;
    if (over.nonzero().size(0) > 0) {
      y = y + torch::where(over, shifted, torch::zeros_like(shifted));
      ++taken;
    }
  });
  harness.result("taken", static_cast<double>(taken));
  harness.result("y", y);
  return 0;
}
