// Hand-written sync-free twin of programs/eager_fallback.cpp: the default of the
// optional padded length is evaluated lazily, `max_len.has_value() ? *max_len :
// lengths.max().item<int64_t>()`, so the device max is read on the host (one wait)
// only on the steps where the caller passes no length (every 10th), not on every call.
#include "syncprobe.h"

#include <cmath>
#include <limits>

torch::Tensor pack_sequences(const torch::Tensor &x, const torch::Tensor &lengths,
                             c10::optional<int64_t> max_len) {
  TORCH_CHECK(x.dim() == 2 && lengths.dim() == 1, "x must be 2-D, lengths 1-D");
  const int64_t batch = lengths.size(0), dim = x.size(1);
  // The longest sequence is read on the host only when the caller gave no length.
  const int64_t L = max_len.has_value() ? *max_len : lengths.max().item<int64_t>();
  // Row of x for every (sequence, position); padding positions gather row 0 and are zeroed.
  auto starts = lengths.cumsum(0) - lengths;
  auto positions = torch::arange(L, lengths.options());
  auto padding = (positions.unsqueeze(0) < lengths.unsqueeze(1)).logical_not(); // [batch, L]
  auto rows = (starts.unsqueeze(1) + positions.unsqueeze(0)).masked_fill(padding, 0);
  return x.index_select(0, rows.reshape({-1}))
      .view({batch, L, dim})
      .masked_fill(padding.unsqueeze(-1), 0.0);
}

torch::Tensor encode(const torch::Tensor &padded, const torch::Tensor &lengths,
                     const torch::Tensor &query_weight) {
  const int64_t batch = padded.size(0), len = padded.size(1), dim = padded.size(2);
  auto positions = torch::arange(len, lengths.options());
  auto valid = positions.unsqueeze(0) < lengths.unsqueeze(1); // [batch, len]
  auto queries = torch::mm(padded.reshape({batch * len, dim}), query_weight).view({batch, len, dim});
  auto scores = torch::bmm(queries, padded.transpose(1, 2)) * (1.0 / std::sqrt(static_cast<double>(dim)));
  scores = scores.masked_fill(valid.logical_not().unsqueeze(1), -std::numeric_limits<double>::infinity());
  auto attended = torch::tanh(torch::bmm(torch::softmax(scores, -1), padded));
  auto summed = (attended * valid.unsqueeze(-1).to(attended.scalar_type())).sum(1);
  return summed / lengths.unsqueeze(1).to(summed.scalar_type());
}

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  const bool gpu = torch::cuda::is_available();
  const int64_t batch = 16;
  const int64_t max_len = gpu ? 512 : 24, dim = gpu ? 256 : 16;
  auto options = torch::device(device);
  // Packed rows of all sequences (capacity batch * max_len).
  auto x = torch::randn({batch * max_len, dim}, options);
  auto query_weight = torch::randn({dim, dim}, options) / std::sqrt(static_cast<double>(dim));
  auto activity = torch::randint(1, max_len + 1, {batch},
                                 torch::TensorOptions().dtype(torch::kLong).device(device));
  auto checksum = torch::zeros({batch, dim}, options);
  torch::Tensor pooled;
  double padded_rows = 0;
  syncprobe::Harness harness("eager_fallback");
  harness.run([&](int step) {
    torch::NoGradGuard no_grad;
    // Rows per sequence this step (1..max_len), computed on the device.
    auto lengths = (activity + 29 * step).remainder(max_len) + 1;
    // The caller pads to its bucket size, except every 10th step (tight padding).
    c10::optional<int64_t> bucket;
    if (step % 10 != 0)
      bucket = max_len;
    auto padded = pack_sequences(x, lengths, bucket);
    padded_rows += static_cast<double>(padded.size(0) * padded.size(1));
    pooled = encode(padded, lengths, query_weight);
    checksum = checksum + pooled;
  });
  harness.result("padded_rows", padded_rows);
  harness.result("pooled", pooled);
  harness.result("checksum", checksum);
  return 0;
}
