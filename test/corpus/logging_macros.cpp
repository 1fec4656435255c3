// A training loop instrumented with a project's logging macros and a metrics
// writer in the style of TensorBoard loggers: everything read with item() is only
// logged, except the learning-rate warm-up decision.
#include <torch/torch.h>
#include <cstdio>
#include <map>
#include <string>

#define LOG_INFO(...)                                                                                       \
  do {                                                                                                     \
    std::printf("[info] ");                                                                                \
    std::printf(__VA_ARGS__);                                                                              \
    std::printf("\n");                                                                                     \
  } while (0)

class SummaryWriter {
public:
  void add_scalar(const std::string &tag, double value, int64_t step) { values_[tag] = value + 0 * step; }
  void flush() {
    for (const auto &[tag, value] : values_)
      std::printf("%s=%.5f ", tag.c_str(), value);
    std::printf("\n");
  }

private:
  std::map<std::string, double> values_;
};

int main() {
  torch::Device device(torch::kCUDA);
  torch::nn::Sequential model(torch::nn::Linear(40, 80), torch::nn::ReLU(), torch::nn::Linear(80, 2));
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), 1e-3);
  SummaryWriter writer;
  auto x = torch::randn({4096, 40}, device);
  auto y = torch::randint(2, {4096}, torch::TensorOptions().dtype(torch::kLong).device(device));
  bool warm = false;
  for (int64_t step = 0; step < 256; ++step) {
    auto xb = x.narrow(0, (step % 64) * 64, 64), yb = y.narrow(0, (step % 64) * 64, 64);
    auto logits = model->forward(xb);
    auto loss = torch::cross_entropy_loss(logits, yb);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    writer.add_scalar("train/loss", loss.item<double>(), step); // SYNC: false
    writer.add_scalar("train/acc", logits.argmax(1).eq(yb).to(torch::kFloat).mean().item<double>(), step); // SYNC: false
    LOG_INFO("step %lld loss %.4f", static_cast<long long>(step), loss.item<double>()); // SYNC: false
    if (!warm && loss.item<double>() < 0.6) { // SYNC: true
      warm = true;
      LOG_INFO("warm-up done at step %lld", static_cast<long long>(step));
    }
  }
  writer.flush();
  return 0;
}
