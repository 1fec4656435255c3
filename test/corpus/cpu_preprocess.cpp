// CORPUS: cpu-only
// Dataset preprocessing on the host: normalisation statistics, filtering of bad
// rows with masks, deduplication with unique, and a tensor built from a vector.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

torch::Tensor load_rows(int64_t n) {
  std::vector<float> values(n * 8);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>((i * 7919) % 1000) / 100.0f - 5.0f;
  return torch::tensor(values).view({n, 8});
}

int main() {
  auto rows = load_rows(1000);
  auto finite = torch::isfinite(rows).all(1);
  auto clean = rows.index({finite});
  auto mean = clean.mean(0), stddev = clean.std(0);
  auto normalised = (clean - mean) / stddev;
  auto labels = (normalised.select(1, 0) > 0).to(torch::kLong);
  auto classes = std::get<0>(torch::_unique(labels));
  auto positives = torch::nonzero(labels).squeeze(1);
  if (normalised.abs().max().item<float>() > 10)
    std::printf("warning: outliers\n");
  double total = 0;
  for (int64_t c = 0; c < classes.size(0); ++c)
    total += labels.eq(classes[c]).sum().item<int64_t>();
  std::printf("%lld rows, %lld classes, %lld positives, %.0f labelled\n",
              static_cast<long long>(normalised.size(0)), static_cast<long long>(classes.size(0)),
              static_cast<long long>(positives.size(0)), total);
  auto contiguous = normalised.contiguous();
  float *data = contiguous.data_ptr<float>();
  std::printf("first value %.3f\n", data[0]);
  return 0;
}
