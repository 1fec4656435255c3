// A classifier training loop as real code writes it: batches moved with .to(device),
// a class-weight constant created on the host and copied, per-step loss logging,
// an accuracy count, gradient clipping, and a validation pass.
#include "syncprobe.h"
#include <cstdio>
#include <iostream>
#include <vector>

struct Mlp : torch::nn::Module {
  Mlp() {
    fc1 = register_module("fc1", torch::nn::Linear(32, 64));
    fc2 = register_module("fc2", torch::nn::Linear(64, 4));
  }
  torch::Tensor forward(torch::Tensor x) { return fc2->forward(torch::relu(fc1->forward(x))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  // A synthetic data set on the host, as a loader would produce it.
  std::vector<torch::Tensor> inputs, labels;
  for (int i = 0; i < 16; ++i) {
    inputs.push_back(torch::randn({64, 32}));
    labels.push_back(torch::randint(4, {64}));
  }
  auto model = std::make_shared<Mlp>();
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05));
  auto class_weights = torch::ones({4}).to(device);

  double running_loss = 0;
  int64_t correct = 0, seen = 0;
  syncprobe::Harness harness("train_classifier");
  harness.run([&](int step) {
    auto data = inputs[step % inputs.size()].to(device);
    auto target = labels[step % labels.size()].to(device);
    optimizer.zero_grad();
    auto logits = model->forward(data);
    auto loss = torch::nn::functional::cross_entropy(
        logits, target, torch::nn::functional::CrossEntropyFuncOptions().weight(class_weights));
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    optimizer.step();
    running_loss += loss.item<double>() * data.size(0);
    correct += logits.argmax(1).eq(target).sum().item<int64_t>();
    seen += data.size(0);
    if (step % 1000 == 999)
      std::printf("step %d loss %.4f\n", step, loss.item<float>());
  });
  // Validation pass.
  torch::NoGradGuard no_grad;
  auto val_in = torch::randn({256, 32}).to(device);
  auto val_logits = model->forward(val_in);
  harness.result("running_loss", running_loss / seen);
  harness.result("accuracy", static_cast<double>(correct) / seen);
  harness.result("val_logits", val_logits);
  return 0;
}
