// Custom operator raggedops::ragged_to_padded: packs a ragged batch (values
// [N, D] plus per-sequence lengths [B]) into a padded [B, T, D] tensor and a
// [B, T] validity mask. Registered for CPU and CUDA through TORCH_LIBRARY; a
// small driver exercises it the way a data loader would.
#include <torch/library.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

namespace raggedops {

static void check_inputs(const at::Tensor& values, const at::Tensor& lengths) {
  TORCH_CHECK(values.dim() == 2, "values must be [N, D], got ", values.sizes());
  TORCH_CHECK(lengths.dim() == 1 && lengths.scalar_type() == at::kLong,
              "lengths must be a 1-D int64 tensor");
  TORCH_CHECK(values.device() == lengths.device(), "values on ", values.device(),
              " but lengths on ", lengths.device());
  TORCH_CHECK(lengths.min().item<int64_t>() >= 0, "lengths must be non-negative");  // SYNC: true
  const int64_t total = lengths.sum().item().toLong();  // SYNC: true
  TORCH_CHECK(total == values.size(0), "sum(lengths) = ", total, " but values has ",
              values.size(0), " rows");
}

static void pad_cpu(const at::Tensor& values, const at::Tensor& lengths, at::Tensor& out) {
  auto len = lengths.accessor<int64_t, 1>();
  AT_DISPATCH_FLOATING_TYPES(values.scalar_type(), "ragged_to_padded_cpu", [&] {
    auto in = values.accessor<scalar_t, 2>();
    auto o = out.accessor<scalar_t, 3>();
    int64_t row = 0;
    for (int64_t b = 0; b < len.size(0); ++b) {
      const int64_t n = std::min<int64_t>(len[b], o.size(1));
      for (int64_t t = 0; t < n; ++t)
        for (int64_t d = 0; d < in.size(1); ++d) o[b][t][d] = in[row + t][d];
      row += len[b];
    }
  });
}

std::tuple<at::Tensor, at::Tensor> ragged_to_padded(const at::Tensor& values,
                                                    const at::Tensor& lengths,
                                                    c10::optional<int64_t> max_len,
                                                    double pad_value) {
  check_inputs(values, lengths);
  // Pad to the longest sequence unless the caller fixes T (then truncate).
  const int64_t T = max_len.value_or(lengths.max().item<int64_t>());  // SYNC: true
  const int64_t B = lengths.size(0);
  auto out = at::full({B, T, values.size(1)}, pad_value, values.options());
  auto mask = at::arange(T, lengths.options()).unsqueeze(0) < lengths.unsqueeze(1);
  if (values.is_cpu()) {
    pad_cpu(values.contiguous(), lengths.contiguous(), out);
    return {out, mask};
  }

  // Device path: compute (sequence, position) of every value row, no host loop.
  auto starts = at::cumsum(lengths, 0) - lengths;
  auto seq = at::repeat_interleave(at::arange(B, lengths.options()), lengths, /*dim=*/0,
                                   /*output_size=*/values.size(0));
  auto pos = at::arange(values.size(0), lengths.options()) - starts.index_select(0, seq);
  if (max_len.has_value()) {
    auto keep = pos < T;
    auto kept_seq = seq.index({keep});  // SYNC: false
    auto kept_pos = pos.index({keep});  // SYNC: false
    auto kept_val = values.index({keep});  // SYNC: false
    out.index_put_({kept_seq, kept_pos}, kept_val);
  } else {
    out.index_put_({seq, pos}, values);
  }
  return {out, mask};
}

TORCH_LIBRARY(raggedops, m) {
  m.def("ragged_to_padded(Tensor values, Tensor lengths, int? max_len=None, "
        "float pad_value=0.0) -> (Tensor, Tensor)");
}
TORCH_LIBRARY_IMPL(raggedops, CPU, m) { m.impl("ragged_to_padded", &ragged_to_padded); }
TORCH_LIBRARY_IMPL(raggedops, CUDA, m) { m.impl("ragged_to_padded", &ragged_to_padded); }

}  // namespace raggedops

int main() {
  TORCH_CHECK(torch::cuda::is_available(), "driver needs a CUDA device");
  torch::manual_seed(0);
  std::mt19937 rng(0);
  std::uniform_int_distribution<int64_t> len_dist(0, 64);
  const torch::Device dev(torch::kCUDA);
  const auto lopts = torch::TensorOptions().dtype(torch::kLong).device(dev);
  const int64_t kBatch = 32, kDim = 64, kIters = 400;

  int64_t padded_elems = 0, real_elems = 0;
  torch::Tensor mask;
  torch::cuda::synchronize();  // SYNC: intentional
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t it = 0; it < kIters; ++it) {
    std::vector<int64_t> lens(kBatch);
    for (auto& l : lens) l = len_dist(rng);
    const int64_t total = std::accumulate(lens.begin(), lens.end(), int64_t{0});
    auto lengths = torch::tensor(lens, lopts);  // SYNC: false
    auto values = torch::randn({total, kDim}, torch::TensorOptions().device(dev));

    torch::Tensor padded;
    std::tie(padded, mask) = raggedops::ragged_to_padded(values, lengths, c10::nullopt, 0.0);  // SYNC: true
    padded_elems += padded.numel();
    real_elems += values.numel();

    // Fixed-length variant used by the batched attention kernel downstream.
    auto fixed = std::get<0>(raggedops::ragged_to_padded(values, lengths, 48, 0.0));  // SYNC: true
    if (it % 100 == 0) {
      // Cross-check the device path against the CPU fallback.
      auto ref = std::get<0>(raggedops::ragged_to_padded(values.cpu(), lengths.cpu(), 48, 0.0));  // SYNC: true true
      TORCH_CHECK(torch::allclose(fixed.cpu(), ref), "CUDA/CPU mismatch at iteration ", it);  // SYNC: true
      std::printf("iter %ld: padded to %ld, fixed %s on %s\n", static_cast<long>(it),
                  static_cast<long>(padded.size(1)), c10::str(fixed.sizes()).c_str(),
                  fixed.device().str().c_str());
    }
  }
  torch::cuda::synchronize();  // SYNC: intentional
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%.3f ms/iter, padding overhead %.1f%%\n", ms / kIters,
              100.0 * (padded_elems - real_elems) / static_cast<double>(padded_elems));
  std::cout << "last mask (first 2 rows):\n" << mask.slice(0, 0, 2) << "\n";  // SYNC: false
  return 0;
}
