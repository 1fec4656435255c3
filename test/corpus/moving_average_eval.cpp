// An exponential moving average of the weights for evaluation: the shadow
// parameters are updated on the device after each step; evaluation losses of the
// raw and the averaged model are collected and printed side by side.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

int main() {
  torch::Device device(torch::kCUDA);
  torch::nn::Linear model(64, 64);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), 1e-3);
  std::vector<torch::Tensor> shadow;
  for (const auto &p : model->parameters())
    shadow.push_back(p.detach().clone());
  auto x = torch::randn({1024, 64}, device), y = torch::randn({1024, 64}, device);
  std::vector<double> raw_losses, ema_losses;
  for (int step = 0; step < 300; ++step) {
    auto loss = torch::mse_loss(model->forward(x.narrow(0, (step % 16) * 64, 64)), y.narrow(0, (step % 16) * 64, 64));
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    {
      torch::NoGradGuard no_grad;
      auto params = model->parameters();
      for (size_t i = 0; i < params.size(); ++i)
        shadow[i].mul_(0.99).add_(params[i], 0.01);
    }
    if (step % 100 == 99) {
      torch::NoGradGuard no_grad;
      raw_losses.push_back(torch::mse_loss(model->forward(x), y).item<double>()); // SYNC: interval
      auto ema_out = torch::addmm(shadow[1], x, shadow[0].t());
      ema_losses.push_back(torch::mse_loss(ema_out, y).item<double>()); // SYNC: interval
    }
  }
  for (size_t i = 0; i < raw_losses.size(); ++i)
    std::printf("eval %zu: raw %.5f ema %.5f\n", i, raw_losses[i], ema_losses[i]);
  return 0;
}
