// Mixed-precision style training with a hand-written loss scaler: the scale is
// backed off when gradients overflow, which the host decides every step.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

class LossScaler {
public:
  explicit LossScaler(double init) : scale_(init) {}
  torch::Tensor scale(const torch::Tensor &loss) const { return loss * scale_; }
  bool unscale_and_check(std::vector<torch::Tensor> params) {
    bool finite = true;
    for (auto &p : params) {
      if (!p.grad().defined())
        continue;
      p.grad().div_(scale_);
      if (!torch::isfinite(p.grad()).all().item<bool>()) // SYNC: true
        finite = false;
    }
    return finite;
  }
  void update(bool finite) {
    if (finite) {
      if (++good_steps_ % 100 == 0)
        scale_ *= 2;
    } else {
      scale_ /= 2;
      good_steps_ = 0;
    }
  }
  double value() const { return scale_; }

private:
  double scale_;
  int good_steps_ = 0;
};

int main() {
  torch::Device device(torch::kCUDA);
  torch::nn::Sequential model(torch::nn::Linear(64, 64), torch::nn::GELU(), torch::nn::Linear(64, 1));
  model->to(device);
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-3));
  LossScaler scaler(1024.0);
  auto data = torch::randn({1024, 64}, device);
  auto target = torch::randn({1024, 1}, device);
  int skipped = 0;
  for (int step = 0; step < 200; ++step) {
    auto xb = data.narrow(0, (step % 16) * 64, 64);
    auto yb = target.narrow(0, (step % 16) * 64, 64);
    optimizer.zero_grad();
    auto loss = torch::mse_loss(model->forward(xb), yb);
    scaler.scale(loss).backward();
    bool finite = scaler.unscale_and_check(model->parameters()); // SYNC: true
    if (finite)
      optimizer.step();
    else
      ++skipped;
    scaler.update(finite);
    if (step % 50 == 0)
      std::printf("step %d loss %.5f scale %.0f\n", step, loss.item<double>(), scaler.value()); // SYNC: false
  }
  std::printf("skipped %d steps\n", skipped);
  return 0;
}
