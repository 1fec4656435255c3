// Training with metrics gathered in a struct and a std::map, printed by a logger
// function at the end of each epoch; a learning-rate schedule decided on the host
// from the validation loss.
#include <torch/torch.h>
#include <cstdio>
#include <map>
#include <string>

struct EpochMetrics {
  double loss = 0;
  double accuracy = 0;
};

void log_metrics(int epoch, const EpochMetrics &m, const std::map<std::string, double> &extra) {
  std::printf("epoch %d loss %.4f acc %.3f", epoch, m.loss, m.accuracy);
  for (const auto &[key, value] : extra)
    std::printf(" %s %.4f", key.c_str(), value);
  std::printf("\n");
}

int main() {
  torch::Device device(torch::kCUDA);
  torch::nn::Linear model(16, 4);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), 0.1);
  auto x = torch::randn({512, 16}, device);
  auto y = torch::randint(4, {512}, torch::TensorOptions().dtype(torch::kLong).device(device));
  double lr = 0.1, best = 1e9;
  for (int epoch = 0; epoch < 20; ++epoch) {
    EpochMetrics metrics;
    std::map<std::string, double> extra;
    for (int64_t b = 0; b < 8; ++b) {
      auto xb = x.narrow(0, b * 64, 64), yb = y.narrow(0, b * 64, 64);
      optimizer.zero_grad();
      auto logits = model->forward(xb);
      auto loss = torch::cross_entropy_loss(logits, yb);
      loss.backward();
      optimizer.step();
      metrics.loss += loss.item<double>() / 8; // SYNC: false
      metrics.accuracy += logits.argmax(1).eq(yb).to(torch::kFloat).mean().item<double>() / 8; // SYNC: false
    }
    extra["weight_norm"] = model->weight.norm().item<double>(); // SYNC: false
    log_metrics(epoch, metrics, extra);
    auto val_loss = torch::cross_entropy_loss(model->forward(x), y).item<double>(); // SYNC: true
    if (val_loss < best) {
      best = val_loss;
    } else {
      lr *= 0.5;
      for (auto &group : optimizer.param_groups())
        static_cast<torch::optim::SGDOptions &>(group.options()).lr(lr);
    }
  }
  return 0;
}
