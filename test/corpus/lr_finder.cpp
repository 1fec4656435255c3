// A learning-rate range test: the learning rate grows every step, the smoothed
// loss is recorded for a plot, and the test stops when the loss diverges.
#include <torch/torch.h>
#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  torch::Device device(torch::kCUDA);
  torch::nn::Sequential model(torch::nn::Linear(32, 128), torch::nn::ReLU(), torch::nn::Linear(128, 10));
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), 1e-6);
  auto x = torch::randn({4096, 32}, device);
  auto y = torch::randint(10, {4096}, torch::TensorOptions().dtype(torch::kLong).device(device));
  std::vector<double> lrs, losses;
  double lr = 1e-6, smoothed = 0, best = 1e9;
  for (int step = 0; step < 100; ++step) {
    for (auto &group : optimizer.param_groups())
      static_cast<torch::optim::SGDOptions &>(group.options()).lr(lr);
    auto xb = x.narrow(0, (step % 64) * 64, 64), yb = y.narrow(0, (step % 64) * 64, 64);
    optimizer.zero_grad();
    auto loss = torch::cross_entropy_loss(model->forward(xb), yb);
    loss.backward();
    optimizer.step();
    double value = loss.item<double>(); // SYNC: true
    smoothed = step == 0 ? value : 0.98 * smoothed + 0.02 * value;
    lrs.push_back(lr);
    losses.push_back(smoothed);
    best = std::min(best, smoothed);
    if (smoothed > 4 * best)
      break;
    lr *= 1.15;
  }
  for (size_t i = 0; i < lrs.size(); i += 10)
    std::printf("lr %.2e loss %.4f\n", lrs[i], losses[i]);
  return 0;
}
