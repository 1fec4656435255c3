// restructuring (issue 41): per-element reads of one tensor in a loop; one bulk copy before the loop gives the same values with one wait.
// Attention pooling over jagged user sessions (the host side of a sequence-model
// extension op): each step computes the session lengths on the device, the op turns
// them into offsets with a cumsum on the device and loops over the sessions, reading
// the bounds of each one element by element with `offsets[i].item<int64_t>()` and
// `offsets[i + 1].item<int64_t>()` (two waits per session), slices the packed event
// embeddings to the session and pools it with a softmax over its keys' query scores.
#include "syncprobe.h"

#include <cmath>

torch::Tensor session_attention_pool(const torch::Tensor &events, const torch::Tensor &lengths,
                                     const torch::Tensor &key_weight, const torch::Tensor &query,
                                     double &events_read) {
  TORCH_CHECK(events.dim() == 2 && lengths.dim() == 1, "events must be 2-D, lengths 1-D");
  const int64_t sessions = lengths.size(0);
  auto offsets = torch::cat({torch::zeros({1}, lengths.options()), lengths.cumsum(0)});
  const double scale = 1.0 / std::sqrt(static_cast<double>(events.size(1)));
  std::vector<torch::Tensor> pooled;
  for (int64_t i = 0; i < sessions; ++i) {
    const int64_t begin = offsets[i].item<int64_t>();
    const int64_t end = offsets[i + 1].item<int64_t>();
    events_read += static_cast<double>(end - begin);
    auto session = events.slice(0, begin, end);
    auto keys = torch::tanh(torch::mm(session, key_weight));
    auto weights = torch::softmax(torch::mv(keys, query) * scale, 0);
    pooled.push_back(torch::tanh(torch::mv(session.t(), weights)));
  }
  return torch::stack(pooled);
}

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  const bool gpu = torch::cuda::is_available();
  const int64_t sessions = 6;
  const int64_t max_len = gpu ? 4096 : 64, dim = gpu ? 256 : 16;
  auto options = torch::device(device);
  auto events = torch::randn({sessions * max_len, dim}, options);
  auto query = torch::randn({dim}, options);
  auto key_weight = torch::randn({dim, dim}, options) / std::sqrt(static_cast<double>(dim));
  auto activity = torch::randint(1, max_len + 1, {sessions},
                                 torch::TensorOptions().dtype(torch::kLong).device(device));
  auto projection = torch::randn({dim, dim}, options) / std::sqrt(static_cast<double>(dim));
  auto checksum = torch::zeros({sessions, dim}, options);
  torch::Tensor users;
  double events_read = 0;
  syncprobe::Harness harness("element_reads");
  harness.run([&](int step) {
    torch::NoGradGuard no_grad;
    // Events per session this step (1..max_len), computed on the device.
    auto lengths = (activity + 37 * step).remainder(max_len) + 1;
    auto pooled = session_attention_pool(events, lengths, key_weight, query, events_read);
    users = torch::mm(pooled, projection);
    checksum = checksum + users;
  });
  harness.result("events_read", events_read);
  harness.result("users", users);
  harness.result("checksum", checksum);
  return 0;
}
