// Gradient accumulation over micro-batches: the optimizer steps every 4
// micro-batches, the loss of each micro-batch is summed for the step's log, and
// the step is skipped when the accumulated gradient norm is not finite.
#include <torch/torch.h>
#include <cmath>
#include <cstdio>

int main() {
  torch::Device device(torch::kCUDA);
  torch::nn::Sequential model(torch::nn::Linear(128, 256), torch::nn::ReLU(), torch::nn::Linear(256, 128));
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  const int accumulation = 4;
  auto data = torch::randn({8192, 128}, device);
  int skipped = 0;
  for (int step = 0; step < 64; ++step) {
    optimizer.zero_grad();
    double step_loss = 0;
    for (int micro = 0; micro < accumulation; ++micro) {
      auto xb = data.narrow(0, ((step * accumulation + micro) % 128) * 64, 64);
      auto loss = (model->forward(xb) - xb).pow(2).mean() / accumulation;
      loss.backward();
      step_loss += loss.item<double>(); // SYNC: false
    }
    double norm = torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0); // SYNC: true
    if (!std::isfinite(norm)) {
      ++skipped;
      continue;
    }
    optimizer.step();
    if (step % 16 == 0)
      std::printf("step %d loss %.5f grad norm %.4f\n", step, step_loss, norm);
  }
  std::printf("skipped %d steps\n", skipped);
  return 0;
}
