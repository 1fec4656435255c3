// torch-sync-deferred-accumulate: one harness step is an epoch of 8 micro-batches
// whose loss and accuracy are accumulated on the host with item() every batch
// (16 waits per step). The rewrite accumulates on the device and reads each total
// once after the batch loop (2 waits per step), printing the same metrics.
#include "syncprobe.h"
#include <vector>

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  torch::nn::Linear model(32, 4);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05));
  std::vector<torch::Tensor> inputs, labels;
  for (int b = 0; b < 8; ++b) {
    inputs.push_back(torch::randn({64, 32}, torch::device(device)));
    labels.push_back(torch::randint(4, {64}, torch::TensorOptions().dtype(torch::kLong).device(device)));
  }
  double total_loss = 0;
  int64_t total_correct = 0;
  syncprobe::Harness harness("deferred_metrics");
  harness.run([&](int step) {
    double running = 0;
    int64_t correct = 0;
    for (int b = 0; b < 8; ++b) {
      optimizer.zero_grad();
      auto logits = model->forward(inputs[b]);
      auto loss = torch::nn::functional::cross_entropy(logits, labels[b]);
      loss.backward();
      optimizer.step();
      running += loss.item<double>() * 64;
      correct += logits.argmax(1).eq(labels[b]).sum().item<int64_t>();
    }
    total_loss += running;
    total_correct += correct;
  });
  harness.result("total_loss", total_loss);
  harness.result("total_correct", static_cast<double>(total_correct));
  harness.result("weight", model->weight);
  return 0;
}
