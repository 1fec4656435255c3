// torch-sync-print: a tensor streamed to a log every step. Flag only (changing what
// is printed is not a safe fix): the sync remains.
#include "syncprobe.h"
#include <sstream>

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  auto x = torch::randn({8}, torch::device(device));
  std::ostringstream log;
  syncprobe::Harness harness("print_tensor");
  harness.run([&](int step) {
    x = torch::tanh(x + 0.1);
    log << x.sum() << "\n";
  });
  harness.result("x", x);
  harness.result("log_chars", static_cast<double>(log.str().size()));
  return 0;
}
