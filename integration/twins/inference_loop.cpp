// Hand-written sync-free twin of programs/inference_loop.cpp: a pinned dataset,
// non_blocking copies, metrics summed on the device with in-place adds, read once.
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
  if (gpu)
    dataset = dataset.pin_memory();
  int64_t last_confident = 0;
  double last_score = 0;
  syncprobe::Harness harness("inference_loop");
  harness.run([&](int pass) {
    torch::NoGradGuard no_grad;
    auto confident = torch::zeros({}, torch::TensorOptions().dtype(torch::kLong).device(device));
    auto score_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
    for (int64_t b = 0; b < batches; ++b) {
      auto x = dataset.narrow(0, b * batch, batch).to(device, /*non_blocking=*/true);
      auto probs = torch::softmax(model->forward(x * (1.0 + 0.01 * pass)), 1);
      auto top = probs.amax(1);
      confident.add_(top.gt(0.2).sum());
      score_sum.add_(top.sum());
    }
    last_confident = confident.item<int64_t>();
    last_score = score_sum.item<double>();
  });
  harness.result("confident", static_cast<double>(last_confident));
  harness.result("score_sum", last_score);
  return 0;
}
