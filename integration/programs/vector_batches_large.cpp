// A classifier trained on batches kept in two std::vector<torch::Tensor> (inputs and
// labels), filled on the CPU before training as a hand-rolled loader would (pageable
// host tensors), each batch copied with `.to(device)` inside the loop. A 3-layer MLP
// module (Linear/ReLU) trained with Adam; the epoch's loss is summed with
// `loss.item<double>()` and its correct predictions with `item<int64_t>()`.
// One harness step = one epoch over 16 batches.
// GPU-bound size: features 512, hidden 4096, batch 2048 (CPU: 32, 64, 32);
// vector_batches_small is the same loop at a launch-bound size.
#include "syncprobe.h"
#include <cstdio>
#include <vector>

struct Net : torch::nn::Module {
  Net(int64_t features, int64_t hidden, int64_t classes)
      : fc1(register_module("fc1", torch::nn::Linear(features, hidden))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, hidden))),
        fc3(register_module("fc3", torch::nn::Linear(hidden, classes))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x));
    x = torch::relu(fc2->forward(x));
    return fc3->forward(x);
  }

  torch::nn::Linear fc1, fc2, fc3;
};

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  const bool gpu = torch::cuda::is_available();
  const int64_t features = gpu ? 512 : 32, hidden = gpu ? 4096 : 64, batch_size = gpu ? 2048 : 32;
  const int64_t classes = 10, num_batches = 16;

  // The training set, batched once on the host.
  std::vector<torch::Tensor> batch_inputs, batch_labels;
  for (int64_t i = 0; i < num_batches; ++i) {
    batch_inputs.push_back(torch::randn({batch_size, features}));
    batch_labels.push_back(torch::randint(classes, {batch_size}));
  }

  auto net = std::make_shared<Net>(features, hidden, classes);
  net->to(device);
  torch::optim::Adam optimizer(net->parameters(), torch::optim::AdamOptions(1e-3));

  double mean_loss = 0, accuracy = 0;
  syncprobe::Harness harness("vector_batches_large");
  harness.run([&](int epoch) {
    net->train();
    double epoch_loss = 0;
    int64_t correct = 0;
    for (size_t i = 0; i < batch_inputs.size(); ++i) {
      torch::Tensor data = batch_inputs[i].to(device);
      torch::Tensor target = batch_labels[i].to(device);
      optimizer.zero_grad();
      torch::Tensor output = net->forward(data);
      torch::Tensor loss = torch::nn::functional::cross_entropy(output, target);
      loss.backward();
      optimizer.step();
      epoch_loss += loss.item<double>();
      correct += output.argmax(1).eq(target).sum().item<int64_t>();
    }
    mean_loss = epoch_loss / batch_inputs.size();
    accuracy = static_cast<double>(correct) / (num_batches * batch_size);
    if (epoch == 0)
      std::printf("epoch %d loss %.5f accuracy %.4f\n", epoch, mean_loss, accuracy);
  });
  harness.result("mean_loss", mean_loss);
  harness.result("accuracy", accuracy);
  harness.result("fc3_weight", net->fc3->weight);
  return 0;
}
