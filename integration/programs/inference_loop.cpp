// Batch inference over a dataset: batches sliced from a pageable CPU tensor and
// copied with `.to(device)`, class probabilities from a 3-layer MLP, and two metrics
// (confident predictions, summed top probability) read with `item()` per batch.
// One harness step = one pass over 16 batches.
#include "syncprobe.h"
#include <cstdio>

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  const bool gpu = torch::cuda::is_available();
  const int64_t hidden = gpu ? 2048 : 64, batch = gpu ? 1024 : 32, features = gpu ? 512 : 32;
  const int64_t batches = 16;
  torch::nn::Sequential model(torch::nn::Linear(features, hidden), torch::nn::ReLU(),
                              torch::nn::Linear(hidden, hidden), torch::nn::ReLU(),
                              torch::nn::Linear(hidden, 10));
  model->to(device);
  model->eval();
  auto dataset = torch::randn({batches * batch, features});
  int64_t last_confident = 0;
  double last_score = 0;
  syncprobe::Harness harness("inference_loop");
  harness.run([&](int pass) {
    torch::NoGradGuard no_grad;
    int64_t confident = 0;
    double score_sum = 0;
    for (int64_t b = 0; b < batches; ++b) {
      auto x = dataset.narrow(0, b * batch, batch).to(device);
      auto probs = torch::softmax(model->forward(x * (1.0 + 0.01 * pass)), 1);
      auto top = probs.amax(1);
      confident += top.gt(0.2).sum().item<int64_t>();
      score_sum += top.sum().item<double>();
    }
    last_confident = confident;
    last_score = score_sum;
  });
  harness.result("confident", static_cast<double>(last_confident));
  harness.result("score_sum", last_score);
  return 0;
}
