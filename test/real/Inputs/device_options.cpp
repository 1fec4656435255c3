// Checked by test/real/device-options.test against both header trees.
#include <torch/torch.h>
#include <vector>

double like_a_cpu_source(const std::vector<int64_t> &sizes, double fill, torch::Dtype dt, int64_t n) {
  auto x = torch::rand({3});
  auto opts = torch::TensorOptions(torch::kDouble);
  double s = x.new_zeros({n, 2}, torch::TensorOptions(torch::kDouble)).sum().item<double>();
  s += torch::rand_like(x, opts).sum().item<double>() + torch::zeros_like(x, opts).sum().item<double>();
  s += x.new_empty(sizes, opts).sum().item<double>() + x.new_full(sizes, fill).sum().item<double>();
  s += x.new_ones({n}, torch::dtype(torch::kFloat).requires_grad(true)).sum().item<double>();
  s += torch::full_like(x, fill, x.options().dtype(torch::kLong)).sum().item<double>();
  s += x.to(torch::kDouble).sum().item<double>() + x.to(dt).sum().item<double>() + x.to(opts).sum().item<double>();
  s += x.new_zeros(sizes, dt, c10::nullopt, c10::nullopt, c10::nullopt).sum().item<double>();
  return s + torch::zeros({n}, x.options()).sum().item<double>();  // CPU throughout: no finding
}

double like_a_gpu_source(const std::vector<int64_t> &sizes, double fill) {
  auto g = torch::rand({3}, torch::kCUDA);
  double s = g.new_zeros({2}, torch::TensorOptions(torch::kDouble)).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:75: warning: `item()` on a GPU tensor
  s += g.new_full(sizes, fill).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:38: warning: `item()` on a GPU tensor
  s += torch::rand_like(g, g.options().dtype(torch::kDouble)).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:69: warning: `item()` on a GPU tensor
  auto x = torch::rand({3});
  s += x.new_zeros(sizes, torch::kFloat, c10::nullopt, torch::Device(torch::kCUDA), c10::nullopt).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:105: warning: `item()` on a GPU tensor
  return s + g.new_zeros({2}, torch::device(torch::kCPU)).sum().item<double>();  // CPU: no finding
}

double options_from_the_caller(torch::TensorOptions opts) {
  auto x = torch::rand({3});
  return torch::zeros_like(x, opts).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:43: warning: `item()` on a tensor that may be on the GPU
}
