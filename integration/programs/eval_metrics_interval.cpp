// An evaluation pass in the style of pytorch/examples' cpp/mnist `test()`: a small
// CNN (two conv layers, max-pooling, dropout, two linear layers) in eval mode under
// torch::NoGradGuard, test images split into batches on the host (pageable) and each
// copied with `.to(device)`, the summed NLL loss and the correct predictions read with
// `item()` every batch, and a progress line every kLogInterval batches with the
// batch's loss and the running accuracy. One harness step = one pass over the test set.
// Sizes: 8192 images of 1x28x28 in batches of 512 (16 batches) on the GPU;
// 256 images in batches of 32 (8 batches) on the CPU.
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

  // The test set, normalized as the MNIST example does, kept on the host.
  auto images = (torch::rand({kTestSize, 1, 28, 28}) - 0.1307) / 0.3081;
  auto labels = torch::randint(10, {kTestSize});
  auto image_batches = images.split(kTestBatchSize);
  auto label_batches = labels.split(kTestBatchSize);

  Net model;
  model.to(device);

  double last_loss = 0, last_accuracy = 0;
  syncprobe::Harness harness("eval_metrics_interval");
  harness.run([&](int pass) {
    torch::NoGradGuard no_grad;
    model.eval();
    double test_loss = 0;
    int64_t correct = 0, seen = 0;
    for (size_t batch_idx = 0; batch_idx < image_batches.size(); ++batch_idx) {
      auto data = image_batches[batch_idx].to(device);
      auto targets = label_batches[batch_idx].to(device);
      auto output = model.forward(data);
      auto loss = torch::nll_loss(output, targets, /*weight=*/{}, torch::Reduction::Sum);
      test_loss += loss.template item<float>();
      auto pred = output.argmax(1);
      correct += pred.eq(targets).sum().template item<int64_t>();
      seen += data.size(0);
      if (batch_idx % kLogInterval == 0)
        std::printf("Test pass %d [%5lld/%5lld] batch loss %.4f | running accuracy %.4f\n", pass,
                    static_cast<long long>(seen), static_cast<long long>(kTestSize),
                    loss.template item<float>() / data.size(0),
                    static_cast<double>(correct) / seen);
    }
    test_loss /= kTestSize;
    last_loss = test_loss;
    last_accuracy = static_cast<double>(correct) / kTestSize;
  });
  harness.result("test_loss", last_loss);
  harness.result("accuracy", last_accuracy);
  return 0;
}
