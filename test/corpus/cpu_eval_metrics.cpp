// CORPUS: cpu-only
// Offline evaluation of saved predictions: precision, recall and F1 per class,
// a ROC-AUC by sorting scores, all on host tensors loaded from vectors.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

struct ClassReport {
  double precision, recall, f1;
};

ClassReport report_for(const torch::Tensor &pred, const torch::Tensor &truth, int64_t c) {
  auto p = pred.eq(c), t = truth.eq(c);
  double tp = (p & t).sum().item<int64_t>();
  double fp = (p & t.logical_not()).sum().item<int64_t>();
  double fn = (p.logical_not() & t).sum().item<int64_t>();
  double precision = tp / std::max(tp + fp, 1.0), recall = tp / std::max(tp + fn, 1.0);
  return {precision, recall, 2 * precision * recall / std::max(precision + recall, 1e-12)};
}

double roc_auc(const torch::Tensor &scores, const torch::Tensor &labels) {
  auto order = scores.argsort(0, true);
  auto sorted = labels.index_select(0, order).to(torch::kDouble);
  auto tps = sorted.cumsum(0), fps = (1 - sorted).cumsum(0);
  auto positives = tps[-1].item<double>(), negatives = fps[-1].item<double>();
  if (positives == 0 || negatives == 0)
    return 0.5;
  auto tpr = tps / positives, fpr = fps / negatives;
  return torch::trapz(tpr, fpr).item<double>();
}

int main() {
  std::vector<int64_t> preds, truth;
  std::vector<float> scores;
  for (int i = 0; i < 500; ++i) {
    truth.push_back(i % 3);
    preds.push_back((i * 7) % 3);
    scores.push_back(static_cast<float>((i * 13) % 100) / 100.0f);
  }
  auto pred_t = torch::tensor(preds), truth_t = torch::tensor(truth), score_t = torch::tensor(scores);
  for (int64_t c = 0; c < 3; ++c) {
    auto r = report_for(pred_t, truth_t, c);
    std::printf("class %lld: P %.3f R %.3f F1 %.3f\n", static_cast<long long>(c), r.precision, r.recall, r.f1);
  }
  std::printf("AUC %.4f\n", roc_auc(score_t, truth_t.eq(0).to(torch::kLong)));
  return 0;
}
