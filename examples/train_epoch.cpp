// A small LibTorch training loop whose per-step syncs are all false
// dependencies: blocking batch copies, a class-weight constant built on the
// GPU every step, and a loss sum and an accuracy count read with item() every
// step although they are printed only once per epoch. Nothing in the step
// needs a value on the host, so every sync can go:
//   torch-syncfree --fix --dry-run examples/train_epoch.cpp -- <flags>
// shows the rewrites (scripts/run-example.sh runs it), and a second run on the
// fixed file finds nothing. examples/train_loop.cpp is a similar loop with an
// early stop on the loss: there the step waits anyway, and the fixes are withheld.
#include <torch/torch.h>

#include <cstdio>
#include <vector>

struct Batch {
  torch::Tensor data;
  torch::Tensor target;
};

std::vector<Batch> make_dataset(int batches, int64_t batch_size) {
  std::vector<Batch> dataset;
  for (int i = 0; i < batches; ++i)
    dataset.push_back({torch::randn({batch_size, 8}), torch::randint(2, {batch_size})});
  return dataset;
}

int main() {
  torch::manual_seed(0);
  torch::Device device = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  torch::nn::Linear model(8, 2);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1));
  auto dataset = make_dataset(20, 64);

  for (int epoch = 0; epoch < 3; ++epoch) {
    double epoch_loss = 0;
    int64_t correct = 0;
    int64_t seen = 0;
    for (const Batch &batch : dataset) {
      auto data = batch.data.to(device);
      auto target = batch.target.to(device);
      auto class_weights = torch::tensor({1.0f, 2.0f}, torch::TensorOptions().device(device));
      optimizer.zero_grad();
      auto logits = model->forward(data);
      auto loss = torch::cross_entropy_loss(logits, target, class_weights);
      loss.backward();
      optimizer.step();

      epoch_loss += loss.item<double>();
      correct += logits.argmax(1).eq(target).sum().item<int64_t>();
      seen += data.size(0);
    }
    std::printf("epoch %d mean loss %.4f accuracy %.4f\n", epoch, epoch_loss / dataset.size(),
                static_cast<double>(correct) / seen);
  }
  return 0;
}
