// Calibrating a decision threshold on a validation set: scores sorted on the GPU,
// the threshold with the best F1 found with a host loop over candidate cut points,
// and the chosen threshold used to count alarms on new data.
#include <torch/torch.h>
#include <cstdio>

int main() {
  torch::Device device(torch::kCUDA);
  auto scores = torch::rand({5000}, device);
  auto labels = (scores + 0.3 * torch::randn({5000}, device) > 0.6).to(torch::kLong);
  double best_f1 = 0, best_threshold = 0.5;
  for (int i = 1; i < 20; ++i) {
    double threshold = i / 20.0;
    auto predicted = scores.gt(threshold);
    auto tp = (predicted & labels.to(torch::kBool)).sum();
    auto precision = tp.to(torch::kDouble) / predicted.sum().clamp_min(1);
    auto recall = tp.to(torch::kDouble) / labels.sum().clamp_min(1);
    double f1 = (2 * precision * recall / (precision + recall).clamp_min(1e-12)).item<double>(); // SYNC: true
    if (f1 > best_f1) {
      best_f1 = f1;
      best_threshold = threshold;
    }
  }
  auto fresh = torch::rand({10000}, device);
  auto alarms = fresh.gt(best_threshold).sum().item<int64_t>(); // SYNC: false
  std::printf("threshold %.2f (F1 %.3f): %lld alarms\n", best_threshold, best_f1, static_cast<long long>(alarms));
  return 0;
}
