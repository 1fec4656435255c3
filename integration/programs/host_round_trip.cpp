// restructuring (issue 41): a host value copied to the device and read back on the host; reading the host original gives the same values without the waits.
// Masked self-attention over a padded batch with a packed output (the host side of a
// sequence-model extension op): each step the caller builds the sequence lengths on the
// host as a std::vector<int64_t>; the op wraps them in a CPU tensor, copies it to the
// device (the key-padding mask needs it there), runs a masked softmax attention over
// the padded batch, and then strips the padding: a loop over the sequences reads each
// length back from the device tensor with `lengths[b].item<int64_t>()` (one wait per
// sequence) to narrow its rows before concatenating them into the packed output.
#include "syncprobe.h"

#include <cmath>
#include <limits>

torch::Tensor masked_attention_packed(const torch::Tensor &padded,
                                      const std::vector<int64_t> &seq_lens,
                                      const torch::Tensor &query_weight,
                                      const torch::Tensor &key_weight) {
  TORCH_CHECK(padded.dim() == 3, "padded must be [batch, len, dim]");
  const int64_t batch = padded.size(0), len = padded.size(1), dim = padded.size(2);
  TORCH_CHECK(static_cast<int64_t>(seq_lens.size()) == batch, "one length per sequence");
  auto lengths_cpu = torch::tensor(seq_lens, torch::kLong);
  auto lengths = lengths_cpu.to(padded.device());
  // Key-padding mask on the device: position < length.
  auto positions = torch::arange(len, lengths.options());
  auto padding = (positions.unsqueeze(0) < lengths.unsqueeze(1)).logical_not(); // [batch, len]
  auto flat = padded.reshape({batch * len, dim});
  auto queries = torch::mm(flat, query_weight).view({batch, len, dim});
  auto keys = torch::mm(flat, key_weight).view({batch, len, dim});
  auto scores = torch::bmm(queries, keys.transpose(1, 2)) * (1.0 / std::sqrt(static_cast<double>(dim)));
  scores = scores.masked_fill(padding.unsqueeze(1), -std::numeric_limits<double>::infinity());
  auto attended = torch::bmm(torch::softmax(scores, -1), padded);
  // Strip the padding: the valid rows of every sequence, packed.
  std::vector<torch::Tensor> pieces;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t n = lengths[b].item<int64_t>();
    pieces.push_back(attended[b].narrow(0, 0, n));
  }
  return torch::cat(pieces);
}

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  const bool gpu = torch::cuda::is_available();
  const int64_t batch = 8;
  const int64_t max_len = gpu ? 1024 : 24, dim = gpu ? 256 : 16;
  auto options = torch::device(device);
  auto padded = torch::randn({batch, max_len, dim}, options);
  auto query_weight = torch::randn({dim, dim}, options) / std::sqrt(static_cast<double>(dim));
  auto key_weight = torch::randn({dim, dim}, options) / std::sqrt(static_cast<double>(dim));
  auto checksum = torch::zeros({dim}, options);
  torch::Tensor packed;
  double tokens = 0;
  syncprobe::Harness harness("host_round_trip");
  harness.run([&](int step) {
    torch::NoGradGuard no_grad;
    // Sequence lengths this step (1..max_len), known on the host (e.g. from the tokenizer).
    std::vector<int64_t> seq_lens(batch);
    for (int64_t b = 0; b < batch; ++b)
      seq_lens[b] = 1 + (7919 * b + 37 * step) % max_len;
    packed = masked_attention_packed(padded, seq_lens, query_weight, key_weight);
    tokens += static_cast<double>(packed.size(0));
    checksum = checksum + packed.sum(0);
  });
  harness.result("tokens", tokens);
  harness.result("packed", packed);
  harness.result("checksum", checksum);
  return 0;
}
