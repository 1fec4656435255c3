// A small LibTorch training loop with the syncs real training code has: per-step
// loss logging, an accuracy count, blocking batch copies, a create-then-copy constant,
// an early stop and a host read-back. The early stop reads the loss every step, so the
// step waits anyway: fixes that would save nothing are withheld (see train_epoch.cpp).
#include <torch/torch.h>

#include <cstdio>
#include <iostream>
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
  auto class_weights = torch::ones({2}).to(device);

  for (int epoch = 0; epoch < 3; ++epoch) {
    double running_loss = 0;
    int64_t correct = 0;
    int64_t seen = 0;
    for (size_t step = 0; step < dataset.size(); ++step) {
      auto data = dataset[step].data.to(device);
      auto target = dataset[step].target.to(device);
      optimizer.zero_grad();
      auto logits = model->forward(data) * class_weights;
      auto loss = torch::nn::functional::cross_entropy(logits, target);
      loss.backward();
      optimizer.step();

      running_loss += loss.item<double>() * data.size(0);
      correct += logits.argmax(1).eq(target).sum().item<int64_t>();
      seen += data.size(0);
      std::cout << "epoch " << epoch << " step " << step << " loss " << loss.item<float>()
                << "\n";
      if (loss.item<float>() < 1e-4f)
        break;
    }
    std::printf("epoch %d mean loss %.4f accuracy %.4f\n", epoch, running_loss / seen,
                static_cast<double>(correct) / seen);
  }
  auto weights = model->parameters()[0].detach().cpu();
  std::printf("w00 %.6f\n", weights.data_ptr<float>()[0]);
  return 0;
}
