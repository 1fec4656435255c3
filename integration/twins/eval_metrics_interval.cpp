// Hand-written sync-free twin of programs/eval_metrics_interval.cpp: the test set
// pinned once (only when CUDA is available) and split into views of the pinned memory,
// copied with non_blocking=true; the summed loss and the correct count accumulated on
// the device. The progress line still reads the batch loss and the running accuracy,
// but only at its interval (every kLogInterval batches); the totals are read once
// after the pass.
#include "syncprobe.h"
#include <cstdio>

struct Net : torch::nn::Module {
  Net()
      : conv1(torch::nn::Conv2dOptions(1, 10, /*kernel_size=*/5)),
        conv2(torch::nn::Conv2dOptions(10, 20, /*kernel_size=*/5)),
        fc1(320, 50),
        fc2(50, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv2_drop", conv2_drop);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));
    x = torch::relu(torch::max_pool2d(conv2_drop->forward(conv2->forward(x)), 2));
    x = x.view({-1, 320});
    x = torch::relu(fc1->forward(x));
    x = torch::dropout(x, /*p=*/0.5, /*training=*/is_training());
    x = fc2->forward(x);
    return torch::log_softmax(x, /*dim=*/1);
  }

  torch::nn::Conv2d conv1;
  torch::nn::Conv2d conv2;
  torch::nn::Dropout2d conv2_drop;
  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
};

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  const bool gpu = torch::cuda::is_available();
  const int64_t kTestSize = gpu ? 8192 : 256, kTestBatchSize = gpu ? 512 : 32;
  const int64_t kLogInterval = 4;

  auto images = (torch::rand({kTestSize, 1, 28, 28}) - 0.1307) / 0.3081;
  auto labels = torch::randint(10, {kTestSize});
  if (gpu) {
    images = images.pin_memory();
    labels = labels.pin_memory();
  }
  auto image_batches = images.split(kTestBatchSize);
  auto label_batches = labels.split(kTestBatchSize);

  Net model;
  model.to(device);

  double last_loss = 0, last_accuracy = 0;
  syncprobe::Harness harness("eval_metrics_interval");
  harness.run([&](int pass) {
    torch::NoGradGuard no_grad;
    model.eval();
    auto test_loss = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
    auto correct = torch::zeros({}, torch::TensorOptions().dtype(torch::kLong).device(device));
    int64_t seen = 0;
    for (size_t batch_idx = 0; batch_idx < image_batches.size(); ++batch_idx) {
      auto data = image_batches[batch_idx].to(device, /*non_blocking=*/true);
      auto targets = label_batches[batch_idx].to(device, /*non_blocking=*/true);
      auto output = model.forward(data);
      auto loss = torch::nll_loss(output, targets, /*weight=*/{}, torch::Reduction::Sum);
      test_loss.add_(loss);
      auto pred = output.argmax(1);
      correct.add_(pred.eq(targets).sum());
      seen += data.size(0);
      if (batch_idx % kLogInterval == 0)
        std::printf("Test pass %d [%5lld/%5lld] batch loss %.4f | running accuracy %.4f\n", pass,
                    static_cast<long long>(seen), static_cast<long long>(kTestSize),
                    loss.template item<float>() / data.size(0),
                    static_cast<double>(correct.item<int64_t>()) / seen);
    }
    last_loss = test_loss.item<double>() / kTestSize;
    last_accuracy = static_cast<double>(correct.item<int64_t>()) / kTestSize;
  });
  harness.result("test_loss", last_loss);
  harness.result("accuracy", last_accuracy);
  return 0;
}
