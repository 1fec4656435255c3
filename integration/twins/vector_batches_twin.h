// The hand-written sync-free training loop shared by the twins of
// programs/vector_batches_small.cpp and programs/vector_batches_large.cpp (the
// programs stay standalone files: they are what the tool rewrites). The same vectors
// of host batches, pinned once before training (only when CUDA is available) and
// copied with non_blocking=true; the epoch's loss and correct count summed on the
// device with in-place adds and read once per epoch.
#pragma once
#include "syncprobe.h"
#include <cstdio>
#include <vector>

struct VectorBatchesNet : torch::nn::Module {
  VectorBatchesNet(int64_t features, int64_t hidden, int64_t classes)
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

inline int vectorBatchesTwin(const char *name, int64_t gpu_hidden, int64_t gpu_batch) {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  const bool gpu = torch::cuda::is_available();
  const int64_t features = gpu ? 512 : 32, hidden = gpu ? gpu_hidden : 64, batch_size = gpu ? gpu_batch : 32;
  const int64_t classes = 10, num_batches = 16;

  std::vector<torch::Tensor> batch_inputs, batch_labels;
  for (int64_t i = 0; i < num_batches; ++i) {
    batch_inputs.push_back(torch::randn({batch_size, features}));
    batch_labels.push_back(torch::randint(classes, {batch_size}));
  }
  if (gpu) { // page-locked once, so that the per-batch copies can run asynchronously
    for (auto &t : batch_inputs)
      t = t.pin_memory();
    for (auto &t : batch_labels)
      t = t.pin_memory();
  }

  auto net = std::make_shared<VectorBatchesNet>(features, hidden, classes);
  net->to(device);
  torch::optim::Adam optimizer(net->parameters(), torch::optim::AdamOptions(1e-3));

  double mean_loss = 0, accuracy = 0;
  syncprobe::Harness harness(name);
  harness.run([&](int epoch) {
    net->train();
    // The host summed item<double>() of each float loss: a double accumulator adds
    // the same values in the same order.
    auto epoch_loss = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
    auto correct = torch::zeros({}, torch::TensorOptions().dtype(torch::kLong).device(device));
    for (size_t i = 0; i < batch_inputs.size(); ++i) {
      torch::Tensor data = batch_inputs[i].to(device, /*non_blocking=*/true);
      torch::Tensor target = batch_labels[i].to(device, /*non_blocking=*/true);
      optimizer.zero_grad();
      torch::Tensor output = net->forward(data);
      torch::Tensor loss = torch::nn::functional::cross_entropy(output, target);
      loss.backward();
      optimizer.step();
      epoch_loss.add_(loss.detach());
      correct.add_(output.argmax(1).eq(target).sum());
    }
    mean_loss = epoch_loss.item<double>() / batch_inputs.size();
    accuracy = static_cast<double>(correct.item<int64_t>()) / (num_batches * batch_size);
    if (epoch == 0)
      std::printf("epoch %d loss %.5f accuracy %.4f\n", epoch, mean_loss, accuracy);
  });
  harness.result("mean_loss", mean_loss);
  harness.result("accuracy", accuracy);
  harness.result("fc3_weight", net->fc3->weight);
  return 0;
}
