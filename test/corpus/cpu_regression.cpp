// CORPUS: cpu-only
// Linear regression on the CPU with manual SGD inside a NoGradGuard block, the
// way tutorials write it before they introduce optimisers. Never touches the GPU.
#include <torch/torch.h>
#include <cstdio>
#include <iostream>

int main() {
  torch::manual_seed(0);
  auto x = torch::linspace(-1, 1, 200).unsqueeze(1);
  auto y = 3 * x + 0.5 + 0.1 * torch::randn({200, 1});
  auto w = torch::zeros({1, 1}, torch::requires_grad());
  auto b = torch::zeros({1}, torch::requires_grad());
  const double lr = 0.1;
  for (int epoch = 0; epoch < 100; ++epoch) {
    auto prediction = torch::matmul(x, w) + b;
    auto loss = torch::mse_loss(prediction, y);
    loss.backward();
    {
      torch::NoGradGuard no_grad;
      w -= lr * w.grad();
      b -= lr * b.grad();
      w.grad().zero_();
      b.grad().zero_();
    }
    if (epoch % 10 == 0)
      std::printf("epoch %d loss %.5f\n", epoch, loss.item<double>());
    if (loss.item<double>() < 1e-3)
      break;
  }
  auto residual = (torch::matmul(x, w) + b - y).abs();
  auto outliers = residual.index({residual > 0.2});
  auto where = torch::nonzero(residual.squeeze(1) > 0.25);
  std::cout << "w " << w.item<float>() << " b " << b.item<float>() << " outliers " << outliers.numel()
            << " far " << where.size(0) << "\n";
  auto host = residual.cpu();
  auto acc = host.accessor<float, 2>();
  double total = 0;
  for (int64_t i = 0; i < acc.size(0); ++i)
    total += acc[i][0];
  auto moved = residual.to(torch::kCPU);
  std::printf("mean residual %.4f %.4f\n", total / acc.size(0), moved.mean().item<double>());
  return 0;
}
