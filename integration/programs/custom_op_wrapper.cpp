// The host side of a custom op: argument checks on tensor values, a nonzero() whose
// size sizes the output, and the output allocation. The checks and the output size
// are true dependencies: the syncs remain and the report says why.
#include "syncprobe.h"

torch::Tensor sparse_rows(const torch::Tensor &x, double threshold) {
  TORCH_CHECK(x.dim() == 2, "x must be 2-D");
  TORCH_CHECK(x.abs().max().item<float>() < 1e6, "x has huge values");
  auto rows = (x.abs().amax(1) > threshold).nonzero().squeeze(1);
  auto out = torch::empty({rows.size(0), x.size(1)}, x.options());
  out.copy_(x.index_select(0, rows));
  return out;
}

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  auto x = torch::randn({512, 64}, torch::device(device));
  double rows_total = 0;
  torch::Tensor last;
  syncprobe::Harness harness("custom_op_wrapper");
  harness.run([&](int step) {
    last = sparse_rows(x, 3.0);
    rows_total += last.size(0);
  });
  harness.result("rows_total", rows_total);
  harness.result("last", last);
  return 0;
}
