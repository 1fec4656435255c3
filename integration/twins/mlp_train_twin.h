// The hand-written sync-free MLP training loop shared by the twins of
// programs/mlp_train_small.cpp and programs/mlp_train_large.cpp (the programs stay
// standalone files: they are what the tool rewrites). A pinned dataset and
// non_blocking copies, loss/accuracy/norm summed on the device with in-place adds,
// clipping on the device (LibTorch's arithmetic, one multi-tensor scaling), one read
// per epoch; progress lines as the originals print
// them (a read every 8 batches of the first epoch).
#pragma once
#include "syncprobe.h"
#include <cstdio>
#include <torch/version.h>
#include <vector>

inline int mlpTrainTwin(const char *name, int64_t gpu_hidden, int64_t gpu_batch) {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  const bool gpu = torch::cuda::is_available();
  const int64_t hidden = gpu ? gpu_hidden : 64, batch = gpu ? gpu_batch : 32, features = gpu ? 512 : 32;
  const int64_t classes = 10, batches = 16;
  torch::nn::Sequential model(torch::nn::Linear(features, hidden), torch::nn::ReLU(),
                              torch::nn::Linear(hidden, hidden), torch::nn::ReLU(),
                              torch::nn::Linear(hidden, classes));
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  auto inputs = torch::randn({batches * batch, features});
  auto labels = torch::randint(classes, {batches * batch});
  if (gpu) {
    inputs = inputs.pin_memory();
    labels = labels.pin_memory();
  }
  auto params = model->parameters();
  double epoch_loss = 0, epoch_norm = 0, epoch_accuracy = 0;
  syncprobe::Harness harness(name);
  harness.run([&](int epoch) {
    auto loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
    auto norm_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
    auto correct = torch::zeros({}, torch::TensorOptions().dtype(torch::kLong).device(device));
    for (int64_t b = 0; b < batches; ++b) {
      auto x = inputs.narrow(0, b * batch, batch).to(device, /*non_blocking=*/true);
      auto y = labels.narrow(0, b * batch, batch).to(device, /*non_blocking=*/true);
      optimizer.zero_grad();
      auto logits = model->forward(x);
      auto loss = torch::nn::functional::cross_entropy(logits, y);
      loss.backward();
      std::vector<torch::Tensor> grads;
      for (const auto &p : params)
        if (p.grad().defined())
          grads.push_back(p.grad());
      // Per-parameter norms as LibTorch's clip_grad_norm_ sums them: `_foreach_norm`
      // sums in another order on CUDA, and training amplifies the last bits (the twin
      // must print the original's results, like the rewrite).
      std::vector<torch::Tensor> norms;
      for (const auto &g : grads)
        norms.push_back(g.norm(2));
      auto total = torch::stack(norms).norm(2);
      auto coef = (1.0 / (total + 1e-6)).clamp_max(1.0);
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1) // _foreach_mul_(TensorList, Tensor)
      at::_foreach_mul_(grads, coef);
#else
      for (auto &g : grads)
        g.mul_(coef);
#endif
      norm_sum.add_(total);
      optimizer.step();
      loss_sum.add_(loss.detach());
      correct.add_(logits.argmax(1).eq(y).sum());
      if (epoch == 0 && b % 8 == 0)
        std::printf("batch %lld loss %.5f\n", static_cast<long long>(b), loss.item<double>());
    }
    epoch_loss = loss_sum.item<double>() / batches;
    epoch_norm = norm_sum.item<double>() / batches;
    epoch_accuracy = static_cast<double>(correct.item<int64_t>()) / static_cast<double>(batches * batch);
  });
  harness.result("loss", epoch_loss);
  harness.result("grad_norm", epoch_norm);
  harness.result("accuracy", epoch_accuracy);
  return 0;
}
