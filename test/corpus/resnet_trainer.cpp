// A CIFAR-style trainer: a residual block model, a data loader of host batches,
// a cosine learning-rate schedule, gradient clipping, top-1 accuracy, a running
// average of the loss for the progress line, and a checkpoint of the best model.
#include <torch/torch.h>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

struct ResidualBlockImpl : torch::nn::Module {
  ResidualBlockImpl(int64_t channels)
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, channels, 3).padding(1)))),
        conv2(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, channels, 3).padding(1)))),
        bn1(register_module("bn1", torch::nn::BatchNorm2d(channels))),
        bn2(register_module("bn2", torch::nn::BatchNorm2d(channels))) {}
  torch::Tensor forward(torch::Tensor x) {
    auto y = torch::relu(bn1->forward(conv1->forward(x)));
    y = bn2->forward(conv2->forward(y));
    return torch::relu(x + y);
  }
  torch::nn::Conv2d conv1, conv2;
  torch::nn::BatchNorm2d bn1, bn2;
};
TORCH_MODULE(ResidualBlock);

struct NetImpl : torch::nn::Module {
  NetImpl()
      : stem(register_module("stem", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 32, 3).padding(1)))),
        block1(register_module("block1", ResidualBlock(32))), block2(register_module("block2", ResidualBlock(32))),
        fc(register_module("fc", torch::nn::Linear(32, 10))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(stem->forward(x));
    x = block2->forward(block1->forward(x));
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc->forward(x);
  }
  torch::nn::Conv2d stem;
  ResidualBlock block1, block2;
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

struct Batch {
  torch::Tensor images, labels;
};

std::vector<Batch> make_batches(int count) {
  std::vector<Batch> batches;
  for (int i = 0; i < count; ++i)
    batches.push_back({torch::randn({32, 3, 32, 32}), torch::randint(10, {32})});
  return batches;
}

double evaluate(Net &model, const std::vector<Batch> &batches, torch::Device device) {
  torch::NoGradGuard no_grad;
  model->eval();
  int64_t correct = 0, seen = 0;
  for (const auto &batch : batches) {
    auto images = batch.images.to(device); // SYNC: false
    auto labels = batch.labels.to(device); // SYNC: false
    correct += model->forward(images).argmax(1).eq(labels).sum().item<int64_t>(); // SYNC: false
    seen += labels.size(0);
  }
  return static_cast<double>(correct) / static_cast<double>(seen);
}

int main() {
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  Net model;
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9).weight_decay(5e-4));
  auto train = make_batches(20), val = make_batches(5);
  const int epochs = 5;
  double best_accuracy = 0;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    model->train();
    double lr = 0.05 * (1 + std::cos(M_PI * epoch / epochs));
    for (auto &group : optimizer.param_groups())
      static_cast<torch::optim::SGDOptions &>(group.options()).lr(lr);
    double running = 0;
    int step = 0;
    for (auto &batch : train) {
      auto images = batch.images.to(device); // SYNC: false
      auto labels = batch.labels.to(device); // SYNC: false
      optimizer.zero_grad();
      auto loss = torch::cross_entropy_loss(model->forward(images), labels);
      loss.backward();
      torch::nn::utils::clip_grad_norm_(model->parameters(), 5.0); // SYNC: false
      optimizer.step();
      running = 0.9 * running + 0.1 * loss.item<double>(); // SYNC: false
      if (++step % 5 == 0)
        std::printf("epoch %d step %d lr %.4f loss %.4f\n", epoch, step, lr, running);
    }
    double accuracy = evaluate(model, val, device); // SYNC: true
    std::printf("epoch %d accuracy %.4f\n", epoch, accuracy);
    if (accuracy > best_accuracy) {
      best_accuracy = accuracy;
      torch::save(model, "best.pt"); // SYNC: true
    }
  }
  return 0;
}
