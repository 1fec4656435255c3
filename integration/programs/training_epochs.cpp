// A training program as real code writes it, one harness step per epoch: mini-batches
// copied from the host, a running loss and an accuracy count read with item() every
// batch, gradient clipping, progress logging every few batches (two values), and a
// validation loop that counts correct predictions. torch-syncfree removes every
// per-batch sync that is a false dependency: the metrics accumulate on the device
// (deferred-accumulate), the copies stop blocking (host-to-device), clipping stays on
// the device (grad-norm), the two logged values travel in one copy (coalesce).
#include "syncprobe.h"
#include <cstdio>
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
  const int batches = 8, val_batches = 4, log_every = 4;
  std::vector<torch::Tensor> inputs, labels, val_inputs, val_labels;
  for (int i = 0; i < batches; ++i) {
    inputs.push_back(torch::randn({64, 32}));
    labels.push_back(torch::randint(4, {64}));
  }
  for (int i = 0; i < val_batches; ++i) {
    val_inputs.push_back(torch::randn({64, 32}));
    val_labels.push_back(torch::randint(4, {64}));
  }
  auto model = std::make_shared<Mlp>();
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05));

  double last_train_loss = 0, last_val_accuracy = 0;
  double logged_sum = 0; // what the progress lines printed, summed (compared as a result)
  syncprobe::Harness harness("training_epochs");
  harness.run([&](int epoch) {
    model->train();
    double running_loss = 0;
    int64_t correct = 0;
    int64_t seen = 0;
    for (int b = 0; b < batches; ++b) {
      auto data = inputs[b].to(device);
      auto target = labels[b].to(device);
      optimizer.zero_grad();
      auto logits = model->forward(data);
      auto loss = torch::nn::functional::cross_entropy(logits, target);
      loss.backward();
      torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      optimizer.step();
      running_loss += loss.item<double>() * data.size(0);
      correct += logits.argmax(1).eq(target).sum().item<int64_t>();
      seen += data.size(0);
      if ((b + 1) % log_every == 0) {
        auto batch_accuracy = logits.argmax(1).eq(target).to(torch::kFloat).mean();
        float loss_value = loss.item<float>();
        float accuracy_value = batch_accuracy.item<float>();
        logged_sum += loss_value + accuracy_value;
        if (epoch == 0)
          std::printf("epoch %d batch %d loss %.4f acc %.3f\n", epoch, b + 1, loss_value,
                      accuracy_value);
      }
    }
    // Validation.
    torch::NoGradGuard no_grad;
    model->eval();
    int64_t val_correct = 0;
    for (int b = 0; b < val_batches; ++b) {
      auto data = val_inputs[b].to(device);
      auto target = val_labels[b].to(device);
      val_correct += model->forward(data).argmax(1).eq(target).sum().item<int64_t>();
    }
    last_train_loss = running_loss / seen;
    last_val_accuracy = static_cast<double>(val_correct) / (val_batches * 64);
    if (epoch == 0)
      std::printf("epoch %d loss %.4f train acc %.3f val acc %.3f\n", epoch, last_train_loss,
                  static_cast<double>(correct) / seen, last_val_accuracy);
  });
  harness.result("train_loss", last_train_loss);
  harness.result("val_accuracy", last_val_accuracy);
  harness.result("logged_sum", logged_sum);
  harness.result("fc2_weight", model->fc2->weight);
  return 0;
}
