// Host-side wrapper of a custom operator: argument validation with TORCH_CHECK,
// a fast path chosen on a property of the data, and the output allocated from
// a size computed on the device.
#include <torch/torch.h>
#include <vector>

torch::Tensor segment_sum(const torch::Tensor &values, const torch::Tensor &segments) {
  TORCH_CHECK(values.dim() == 1, "values must be 1-D");
  TORCH_CHECK(values.size(0) == segments.size(0), "one segment id per value");
  TORCH_CHECK(segments.min().item<int64_t>() >= 0, "segment ids must be non-negative"); // SYNC: true
  int64_t count = segments.max().item<int64_t>() + 1; // SYNC: true
  auto out = torch::zeros({count}, values.options());
  out.index_add_(0, segments, values);
  return out;
}

torch::Tensor normalize_rows(const torch::Tensor &x) {
  TORCH_INTERNAL_ASSERT(x.defined());
  auto norms = x.norm(2, 1, true);
  if (torch::equal(norms, torch::ones_like(norms))) // SYNC: true
    return x;
  return x / norms.clamp_min(1e-12);
}

torch::Tensor fused_or_fallback(const torch::Tensor &a, const torch::Tensor &b) {
  if (a.is_cuda() && b.is_cuda() && a.sizes() == b.sizes())
    return torch::addcmul(a, a, b, 0.5);
  return a + 0.5 * a * b;
}

int main() {
  auto values = torch::randn({1000}, torch::kCUDA);
  auto segments = torch::randint(0, 10, {1000}, torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA));
  auto sums = segment_sum(values, segments);
  auto rows = normalize_rows(torch::randn({16, 8}, torch::kCUDA));
  auto mixed = fused_or_fallback(rows, rows);
  return sums.size(0) > 0 && mixed.size(0) == 16 ? 0 : 1;
}
