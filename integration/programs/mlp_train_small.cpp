// A 3-layer MLP classifier trained the way tutorials write it: batches sliced from a
// pageable CPU dataset and copied with `.to(device)`, the loss and accuracy summed
// with `item()`, gradients clipped with the norm summed for the epoch log, progress
// printed every 8 batches. One harness step = one epoch of 16 batches.
// Launch-bound size: hidden 1024, batch 256 (mlp_train_large: GPU-bound).
#include "syncprobe.h"
#include <cstdio>

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  const bool gpu = torch::cuda::is_available();
  const int64_t hidden = gpu ? 1024 : 64, batch = gpu ? 256 : 32, features = gpu ? 512 : 32;
  const int64_t classes = 10, batches = 16;
  torch::nn::Sequential model(torch::nn::Linear(features, hidden), torch::nn::ReLU(),
                              torch::nn::Linear(hidden, hidden), torch::nn::ReLU(),
                              torch::nn::Linear(hidden, classes));
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  auto inputs = torch::randn({batches * batch, features});
  auto labels = torch::randint(classes, {batches * batch});
  double epoch_loss = 0, epoch_norm = 0, epoch_accuracy = 0;
  syncprobe::Harness harness("mlp_train_small");
  harness.run([&](int epoch) {
    double loss_sum = 0, norm_sum = 0;
    int64_t correct = 0;
    for (int64_t b = 0; b < batches; ++b) {
      auto x = inputs.narrow(0, b * batch, batch).to(device);
      auto y = labels.narrow(0, b * batch, batch).to(device);
      optimizer.zero_grad();
      auto logits = model->forward(x);
      auto loss = torch::nn::functional::cross_entropy(logits, y);
      loss.backward();
      norm_sum += torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      optimizer.step();
      loss_sum += loss.item<double>();
      correct += logits.argmax(1).eq(y).sum().item<int64_t>();
      if (epoch == 0 && b % 8 == 0)
        std::printf("batch %lld loss %.5f\n", static_cast<long long>(b), loss.item<double>());
    }
    epoch_loss = loss_sum / batches;
    epoch_norm = norm_sum / batches;
    epoch_accuracy = static_cast<double>(correct) / static_cast<double>(batches * batch);
  });
  harness.result("loss", epoch_loss);
  harness.result("grad_norm", epoch_norm);
  harness.result("accuracy", epoch_accuracy);
  return 0;
}
