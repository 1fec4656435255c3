// Checkpointing: the training step counter and best metric stored in tensors,
// resumed from disk; at the end the model is moved to the CPU and saved for
// deployment, and the final metrics are printed.
#include <torch/torch.h>
#include <cstdio>
#include <fstream>
#include <string>

int main() {
  torch::Device device(torch::kCUDA);
  torch::nn::Linear model(32, 8);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), 1e-3);
  auto step = torch::zeros({}, torch::kLong);
  auto best = torch::full({}, 1e9, torch::TensorOptions().dtype(torch::kDouble).device(device));
  std::ifstream existing("checkpoint.pt");
  if (existing.good()) {
    torch::load(model, "checkpoint.pt");
    torch::load(step, "step.pt");
  }
  auto x = torch::randn({512, 32}, device), y = torch::randn({512, 8}, device);
  for (int i = 0; i < 200; ++i) {
    auto loss = torch::mse_loss(model->forward(x), y);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    best = torch::minimum(best, loss.detach().to(torch::kDouble));
    step += 1;
    if (step.item<int64_t>() % 100 == 0) {
      torch::save(model, "checkpoint.pt"); // SYNC: true
      torch::save(step, "step.pt");
    }
  }
  model->to(torch::kCPU);
  torch::save(model, "deploy.pt");
  std::printf("trained to step %lld, best loss %.5f\n", static_cast<long long>(step.item<int64_t>()),
              best.item<double>()); // SYNC: false
  return 0;
}
