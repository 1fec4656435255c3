// RUN: %check_torch_sync %s torch-sync-tensor-factory %t -- %mock_flags
#include <torch/torch.h>
#include <vector>

void positives(torch::Device device, const std::vector<float> &host) {
  auto a = torch::tensor({1.0, 2.0, 3.0}, torch::kCUDA);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `torch::tensor(<list>, <GPU options>)` builds the values on the host and copies them to the GPU with a blocking copy; false dependency: the host does not need to wait for the copy; build it on the CPU with the same dtype, then `.to(device, /*non_blocking=*/true)` [torch-sync-tensor-factory]
  // CHECK-FIXES: auto a = torch::tensor({1.0, 2.0, 3.0}).to(torch::kCUDA, /*non_blocking=*/true);
  auto b = torch::tensor(host, torch::TensorOptions().dtype(torch::kFloat).device(device));
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `torch::tensor(<list>, <GPU options>)`
  // CHECK-FIXES: auto b = torch::tensor(host, torch::TensorOptions().dtype(torch::kFloat)).to(device, /*non_blocking=*/true);
  const auto opts = torch::TensorOptions().device(torch::kCUDA);
  for (int i = 0; i < 3; ++i) {
    auto c = torch::tensor({i, i + 1}, opts);
    // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: {{.*}} (every iteration of the loop at line [[@LINE-2]]);
    // CHECK-FIXES: auto c = torch::tensor({i, i + 1}, opts.device(torch::kCPU)).to(opts.device(), /*non_blocking=*/true);
  }
  auto d = torch::tensor({1.0, 2.0}, torch::device(device));
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `torch::tensor(<list>, <GPU options>)`
  // CHECK-FIXES: auto d = torch::tensor({1.0, 2.0}).to(device, /*non_blocking=*/true);
  auto g = torch::tensor({1.0}, torch::TensorOptions().device(device).requires_grad(true));
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `torch::tensor(<list>, <GPU options>)`
}

void negatives(const std::vector<float> &host) {
  auto s = torch::tensor(0.5, torch::kCUDA);          // a scalar does not wait (2.11)
  auto c = torch::tensor({1.0, 2.0});                 // made on the CPU
  auto d = torch::tensor(host, torch::kDouble);       // dtype only: CPU
  auto e = torch::tensor(host).to(torch::kCUDA, true);  // already the remedy
}

// Macros and templates: a sync spelled in a macro body is reported at the
// expansion and never rewritten; a template is checked once, in its definition.
#define GPU_TENSOR(...) torch::tensor({__VA_ARGS__}, torch::kCUDA)
// CHECK-FIXES: #define GPU_TENSOR(...) torch::tensor({__VA_ARGS__}, torch::kCUDA)
void macro_and_template_cases() {
  auto m = GPU_TENSOR(1.0, 2.0);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `torch::tensor(<list>, <GPU options>)`
  // CHECK-FIXES: auto m = GPU_TENSOR(1.0, 2.0);
}
template <typename T> torch::Tensor on_gpu(T a, T b) {
  return torch::tensor({a, b}, torch::kCUDA);
  // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: `torch::tensor(<list>, <GPU options>)`
  // CHECK-FIXES: return torch::tensor({a, b}).to(torch::kCUDA, /*non_blocking=*/true);
}
template torch::Tensor on_gpu<double>(double, double);
template torch::Tensor on_gpu<int>(int, int);
