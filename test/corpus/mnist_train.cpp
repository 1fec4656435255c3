// MNIST-style training loop in the style of LibTorch's examples: a templated train
// function over the data loader type, per-batch loss logging, an accuracy count.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

struct Net : torch::nn::Module {
  Net() {
    fc1 = register_module("fc1", torch::nn::Linear(784, 128));
    fc2 = register_module("fc2", torch::nn::Linear(128, 10));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x.view({-1, 784})));
    return torch::log_softmax(fc2->forward(x), 1);
  }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

template <typename Loader>
void train(Net &model, torch::Device device, Loader &loader, torch::optim::Optimizer &optimizer,
           size_t epoch) {
  model.train();
  size_t batch_idx = 0;
  for (auto &batch : loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device); // SYNC: false false
    optimizer.zero_grad();
    auto output = model.forward(data);
    auto loss = torch::nll_loss(output, targets);
    AT_ASSERT(!std::isnan(loss.template item<float>())); // SYNC: true
    loss.backward();
    optimizer.step();
    if (batch_idx++ % 10 == 0)
      std::printf("Train Epoch: %zu [%zu] Loss: %.4f\n", epoch, batch_idx, loss.template item<float>()); // SYNC: interval
  }
}

template <typename Loader>
void test(Net &model, torch::Device device, Loader &loader, size_t dataset_size) {
  torch::NoGradGuard no_grad;
  model.eval();
  double test_loss = 0;
  int32_t correct = 0;
  for (const auto &batch : loader) {
    auto data = batch.data.to(device); // SYNC: false
    auto targets = batch.target.to(device); // SYNC: false
    auto output = model.forward(data);
    test_loss += torch::nll_loss(output, targets, {}, torch::Reduction::Sum).template item<float>(); // SYNC: false
    auto pred = output.argmax(1);
    correct += pred.eq(targets).sum().template item<int64_t>(); // SYNC: false
  }
  test_loss /= dataset_size;
  std::printf("Test set: Average loss: %.4f | Accuracy: %.3f\n", test_loss,
              static_cast<double>(correct) / dataset_size);
}

int main() {
  torch::manual_seed(1);
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  Net model;
  model.to(device);
  torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(0.01).momentum(0.5));
  // Batches as a torch::data loader yields them: Example<> pairs made on the CPU.
  std::vector<torch::data::Example<>> batches;
  for (int i = 0; i < 8; ++i)
    batches.push_back({torch::randn({64, 1, 28, 28}), torch::randint(10, {64})});
  for (size_t epoch = 1; epoch <= 3; ++epoch) {
    train(model, device, batches, optimizer, epoch); // SYNC: true
    test(model, device, batches, batches.size() * 64); // SYNC: false
  }
  return 0;
}
