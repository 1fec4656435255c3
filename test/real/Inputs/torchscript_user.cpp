// TorchScript users: a model loaded with torch::jit::load, a custom autograd
// Function, c10::fmap over lambdas, a custom class registered with TORCH_LIBRARY
// and the JIT frontend's headers. <torch/script.h> made the tool's parse fail
// (issue 21): instantiations it skipped left a lambda's c10::fmap undefined.
#include <torch/torch.h>
#include <torch/script.h>
#include <torch/custom_class.h>
#include <torch/csrc/jit/frontend/sugared_value.h>
#include <ATen/core/functional.h>
#include <iostream>
#include <string>
#include <vector>

struct ScaleBy : torch::autograd::Function<ScaleBy> {
  static torch::Tensor forward(torch::autograd::AutogradContext *ctx, torch::Tensor x, double k) {
    ctx->saved_data["k"] = k;
    return x * k;
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext *ctx,
                                               torch::autograd::tensor_list grads) {
    double k = ctx->saved_data["k"].toDouble();
    return {grads[0] * k, torch::Tensor()};
  }
};

struct RunningMax : torch::CustomClassHolder {
  double best = 0;
  void push(double v) { best = v > best ? v : best; }
  double get() const { return best; }
};

TORCH_LIBRARY(torchscript_user, m) {
  m.class_<RunningMax>("RunningMax")
      .def(torch::init<>())
      .def("push", &RunningMax::push)
      .def("get", &RunningMax::get);
}

double score_model(const std::string &path, const std::vector<torch::Tensor> &batches) {
  torch::jit::script::Module module = torch::jit::load(path);
  torch::Device device(torch::kCUDA);
  module.to(device);
  module.eval();
  torch::NoGradGuard no_grad;
  double total = 0;
  for (const torch::Tensor &batch : batches) {
    std::vector<torch::jit::IValue> inputs{batch.to(device)};
    // CHECK-MESSAGES: :[[@LINE-1]]:50: warning: `to(<GPU>)` may copy a host tensor to the GPU and blocks the host until the copy is done; false dependency: the host does not need to wait for a copy to the GPU (every iteration of the loop at line [[@LINE-2]]){{.*}}[torch-sync-host-to-device]
    // CHECK-FIXES: std::vector<torch::jit::IValue> inputs{batch.to(device, /*non_blocking=*/true)};
    torch::Tensor out = module.forward(inputs).toTensor();
    total += out.sum().item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: `total` accumulates `item()` every iteration, so every iteration waits for the GPU; false dependency: the sum is read only after the loop{{.*}}[torch-sync-deferred-accumulate]
    // CHECK-FIXES: total_on_device.add_(total_step);
  }
  // CHECK-FIXES: total += total_on_device.item<double>(); /* NOLINT(torch-sync-*): torch-syncfree, one read after the loop */
  std::vector<double> doubled = c10::fmap(std::vector<double>{total}, [](double v) { return 2 * v; });
  return doubled[0];
}

int main(int argc, char **argv) {
  torch::Tensor w = torch::ones({4}, torch::device(torch::kCUDA).requires_grad(true));
  torch::Tensor y = ScaleBy::apply(w, 3.0).sum();
  y.backward();
  if (argc > 1) {
    std::vector<torch::Tensor> batches{torch::rand({2, 4})};
    std::cout << "score " << score_model(argv[1], batches) << "\n";
  }
  std::cout << "grad " << w.grad().sum().item<float>() << "\n";
  // CHECK-MESSAGES: :[[@LINE-1]]:42: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; false dependency: the value is only logged{{.*}}[torch-sync-item]
  return 0;
}
