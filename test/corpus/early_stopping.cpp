// Training with early stopping and a validation loop: the host decides to stop
// on the validation loss; the training loss is only printed.
#include <torch/torch.h>
#include <cstdio>
#include <limits>

int main() {
  torch::Device device(torch::kCUDA);
  torch::nn::Sequential model(torch::nn::Linear(20, 64), torch::nn::ReLU(), torch::nn::Dropout(0.1),
                              torch::nn::Linear(64, 1));
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), 1e-3);
  auto x = torch::randn({2048, 20}, device), y = torch::randn({2048, 1}, device);
  auto vx = torch::randn({512, 20}, device), vy = torch::randn({512, 1}, device);
  double best = std::numeric_limits<double>::infinity();
  int patience = 0;
  for (int epoch = 0; epoch < 100; ++epoch) {
    model->train();
    for (int64_t b = 0; b < 16; ++b) {
      auto loss = torch::mse_loss(model->forward(x.narrow(0, b * 128, 128)), y.narrow(0, b * 128, 128));
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      if (b == 15)
        std::printf("epoch %d train loss %.5f\n", epoch, loss.item<double>()); // SYNC: false
    }
    model->eval();
    torch::NoGradGuard no_grad;
    double val = torch::mse_loss(model->forward(vx), vy).item<double>(); // SYNC: true
    if (val < best - 1e-4) {
      best = val;
      patience = 0;
    } else if (++patience == 5) {
      std::printf("early stop at epoch %d (best %.5f)\n", epoch, best);
      break;
    }
  }
  return 0;
}
