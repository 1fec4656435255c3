// CORPUS: cpu-only
// Bootstrap confidence intervals of a metric on the host: resampling indices with
// randint, quantiles of the bootstrap distribution, and a permutation test.
#include <torch/torch.h>
#include <cstdio>

double metric(const torch::Tensor &pred, const torch::Tensor &truth) {
  return pred.eq(truth).to(torch::kDouble).mean().item<double>();
}

int main() {
  torch::manual_seed(11);
  const int64_t n = 2000;
  auto truth = torch::randint(2, {n});
  auto pred = torch::where(torch::rand({n}) < 0.8, truth, 1 - truth);
  double observed = metric(pred, truth);
  auto samples = torch::empty({500}, torch::kDouble);
  for (int64_t b = 0; b < samples.size(0); ++b) {
    auto idx = torch::randint(n, {n});
    samples[b] = metric(pred.index_select(0, idx), truth.index_select(0, idx));
  }
  auto sorted = std::get<0>(samples.sort());
  double low = sorted[12].item<double>(), high = sorted[487].item<double>();
  int64_t extreme = 0;
  for (int i = 0; i < 200; ++i) {
    auto shuffled = truth.index_select(0, torch::randperm(n));
    if (metric(pred, shuffled) >= observed)
      ++extreme;
  }
  auto disagreements = torch::nonzero(pred.ne(truth));
  std::printf("accuracy %.4f [%.4f, %.4f], permutation p %.3f, %lld disagreements\n", observed, low, high,
              (extreme + 1) / 201.0, static_cast<long long>(disagreements.size(0)));
  return 0;
}
