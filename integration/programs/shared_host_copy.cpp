// restructuring (issue 41): one device tensor read on the host twice in one function; one host copy serves both reads.
// Jagged attention pooling (the host side of a ragged-batch extension op): each step
// computes the number of rows of every segment on the device; the op turns them into
// inclusive offsets with `lengths.cumsum(0)`, reads the total with
// `csum[-1].item<int64_t>()` to size the key projection of the rows in use, and a few
// lines later copies the whole `csum` to the host with `.cpu()` to read the per-segment
// bounds through data_ptr, slicing each segment for a softmax pooling over its keys'
// query scores. Two waits per step on the same tensor.
#include "syncprobe.h"

#include <cmath>

torch::Tensor jagged_attention_pool(const torch::Tensor &values, const torch::Tensor &lengths,
                                    const torch::Tensor &key_weight, const torch::Tensor &query,
                                    double &rows_used) {
  TORCH_CHECK(values.dim() == 2 && lengths.dim() == 1, "values must be 2-D, lengths 1-D");
  const int64_t segments = lengths.size(0);
  auto csum = lengths.cumsum(0);
  // Rows in use: the packed buffer is filled up to the last inclusive offset.
  const int64_t total = csum[-1].item<int64_t>();
  TORCH_CHECK(total <= values.size(0), "lengths exceed the packed buffer");
  auto keys = torch::tanh(torch::mm(values.narrow(0, 0, total), key_weight));
  const double scale = 1.0 / std::sqrt(static_cast<double>(values.size(1)));
  auto scores = torch::mv(keys, query) * scale;
  // Segment bounds on the host, to slice the packed rows.
  auto csum_host = csum.cpu();
  const int64_t *ends = csum_host.data_ptr<int64_t>();
  std::vector<torch::Tensor> pooled;
  for (int64_t i = 0; i < segments; ++i) {
    const int64_t begin = i == 0 ? 0 : ends[i - 1];
    const int64_t count = ends[i] - begin;
    auto weights = torch::softmax(scores.narrow(0, begin, count), 0);
    pooled.push_back(torch::tanh(torch::mv(keys.narrow(0, begin, count).t(), weights)));
  }
  rows_used += static_cast<double>(total);
  return torch::stack(pooled);
}

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  const bool gpu = torch::cuda::is_available();
  const int64_t segments = 8;
  const int64_t max_len = gpu ? 2048 : 48, dim = gpu ? 512 : 16;
  auto options = torch::device(device);
  // Packed rows of all segments (capacity segments * max_len).
  auto values = torch::randn({segments * max_len, dim}, options);
  auto key_weight = torch::randn({dim, dim}, options) / std::sqrt(static_cast<double>(dim));
  auto query = torch::randn({dim}, options);
  auto activity = torch::randint(1, max_len + 1, {segments},
                                 torch::TensorOptions().dtype(torch::kLong).device(device));
  auto projection = torch::randn({dim, dim}, options) / std::sqrt(static_cast<double>(dim));
  auto checksum = torch::zeros({segments, dim}, options);
  torch::Tensor embeddings;
  double rows_used = 0;
  syncprobe::Harness harness("shared_host_copy");
  harness.run([&](int step) {
    torch::NoGradGuard no_grad;
    // Rows per segment this step (1..max_len), computed on the device.
    auto lengths = (activity + 53 * step).remainder(max_len) + 1;
    auto pooled = jagged_attention_pool(values, lengths, key_weight, query, rows_used);
    embeddings = torch::mm(pooled, projection);
    checksum = checksum + embeddings;
  });
  harness.result("rows_used", rows_used);
  harness.result("embeddings", embeddings);
  harness.result("checksum", checksum);
  return 0;
}
