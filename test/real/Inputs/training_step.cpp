// A training step against the REAL LibTorch headers: every check's positive
// cases and fixes, plus negatives, parsed with 1.13 and 2.11. The fixed file is
// compiled with clang++ -fsyntax-only against the same headers.
#include <torch/torch.h>
#include <cstdio>
#include <iostream>
#include <vector>

struct Net : torch::nn::Module {
  Net() : fc(register_module("fc", torch::nn::Linear(8, 2))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};

double train(std::vector<torch::Tensor> &inputs, std::vector<torch::Tensor> &targets) {
  torch::Device device = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  auto net = std::make_shared<Net>();
  net->to(device);
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.1));
  auto scale = torch::ones({2}).to(device);
  // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: `ones(...).to(...)` fills the tensor on the host, then copies it to the GPU and blocks the host; false dependency: the values can be made on the GPU directly; create it on the device: no copy at all [torch-sync-host-to-device]
  // CHECK-FIXES: auto scale = torch::ones({2}, torch::device(device));
  double running = 0;
  // CHECK-FIXES: torch::Tensor running_on_device; // running, summed on the device
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto x = inputs[i].to(device);
    // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: `to(<GPU>)` may copy a host tensor to the GPU {{.*}} (every iteration of the loop at line [[@LINE-2]]); pass `non_blocking=true`
    // CHECK-FIXES: auto x = inputs[i].to(device, /*non_blocking=*/true);
    auto y = targets[i].cuda();
    // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: `cuda()` may copy a host tensor to the GPU
    // CHECK-FIXES: auto y = targets[i].to(torch::kCUDA, /*non_blocking=*/true);
    optimizer.zero_grad();
    auto loss = torch::mse_loss(net->forward(x) * scale, y);
    loss.backward();
    optimizer.step();
    running += loss.item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: `running` accumulates `item()` every iteration, so every iteration waits for the GPU; false dependency: the sum is read only after the loop {{.*}}[torch-sync-deferred-accumulate]
    // CHECK-FIXES: running_on_device.add_(running_step);
    std::cout << "loss " << loss.item().toFloat() << "\n";
    // CHECK-MESSAGES: :[[@LINE-1]]:34: warning: `item()` on a tensor that may be on the GPU waits for the GPU every iteration although its value is only logged; false dependency: the value is only logged {{.*}}[torch-sync-deferred-log]
    // The host's own decisions every 10 steps: true dependencies, but not a wait in
    // every iteration, so the rewrites above still save waits (issue 25's no-gain rule;
    // test/checks/no-gain-rewrites.cpp has the per-iteration case).
    if (i % 10 == 9 && loss.item<float>() < 1e-3f)
      // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `item()` {{.*}}; true dependency: the value decides a branch
      break;
    if (i % 10 == 9) {
      auto host = loss.detach().cpu();
      // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: `cpu()` on a tensor that may be on the GPU {{.*}}; true dependency: through `host`, the host reads the tensor's memory
      std::printf("%f\n", host.data_ptr<float>()[0]);
    }
  }
  // CHECK-FIXES: running += running_on_device.item<double>();
  // Negatives: CPU tensors, already asynchronous copies, Module::to.
  auto cpu_only = torch::rand({4});
  double total = cpu_only.sum().item<double>();
  auto pinned = torch::rand({4}).pin_memory();
  auto async = pinned.to(torch::kCUDA, /*non_blocking=*/true);
  net->to(torch::kCPU);
  auto z = torch::zeros({3}, torch::kFloat).to(torch::kCUDA);
  // CHECK-MESSAGES: :[[@LINE-1]]:45: warning: `zeros(...).to(...)` fills
  // CHECK-FIXES: auto z = torch::zeros({3}, torch::TensorOptions(torch::kFloat).device(torch::kCUDA));
  return running + total + async.numel() + z.numel();
}
