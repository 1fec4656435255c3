// Hand-written sync-free twin of programs/invariant_host_copy.cpp: the lengths tensor
// is copied to the host once per step, before the loop over the features (one wait per
// step instead of one per feature); the loop reads the same values from that copy.
#include "syncprobe.h"

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  const bool gpu = torch::cuda::is_available();
  const int64_t features = 8;
  const int64_t max_len = gpu ? 1024 : 48, dim = gpu ? 512 : 16;
  auto options = torch::device(device);
  auto rows = torch::randn({features * max_len, dim}, options);
  std::vector<torch::Tensor> weights;
  for (int64_t f = 0; f < features; ++f)
    weights.push_back(torch::randn({dim, dim}, options) / std::sqrt(static_cast<double>(dim)));
  auto length_logits = torch::randn({features}, options);
  auto checksum = torch::zeros({features, dim}, options);
  torch::Tensor pooled;
  double rows_read = 0;
  syncprobe::Harness harness("invariant_host_copy");
  harness.run([&](int step) {
    torch::NoGradGuard no_grad;
    auto lengths = torch::sigmoid(length_logits + 0.25 * std::sin(0.7 * step))
                       .mul(static_cast<double>(max_len))
                       .floor()
                       .to(torch::kLong)
                       .clamp(1, max_len);
    auto lengths_host = lengths.to(torch::kCPU); // the step's one wait
    auto length = lengths_host.accessor<int64_t, 1>();
    std::vector<torch::Tensor> outputs;
    for (int64_t f = 0; f < features; ++f) {
      int64_t offset = 0;
      for (int64_t g = 0; g < f; ++g)
        offset += length[g];
      const int64_t count = length[f];
      rows_read += static_cast<double>(count);
      auto segment = rows.narrow(0, offset, count);
      auto projected = torch::tanh(torch::mm(segment, weights[f]));
      outputs.push_back(projected.mean(0));
    }
    pooled = torch::stack(outputs);
    checksum = checksum + pooled;
  });
  harness.result("rows_read", rows_read);
  harness.result("pooled", pooled);
  harness.result("checksum", checksum);
  return 0;
}
