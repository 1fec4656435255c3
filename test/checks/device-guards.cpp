// RUN: %check_torch_sync %s torch-sync-item %t -- %mock_flags
// A use that runs only after a test a CPU tensor or device passes reads a CPU
// tensor (issue 43: CPU kernels of custom ops start with
// `TORCH_CHECK(!x.is_cuda(), ..)`; a dead `else` of `if (device.is_cuda())`).
// The test holds when the use is in the branch it selects, or after a
// statement that leaves unless it passes, and nothing redefines the variable
// in between.
#include <torch/torch.h>
#include <stdexcept>

#define CHECK_CPU(x) TORCH_CHECK(!(x).is_cuda(), #x " must be a CPU tensor")
#define ASSERT_CPU(x)                                                                              \
  do {                                                                                             \
    if ((x).device().type() != torch::kCPU)                                                        \
      throw std::runtime_error("CPU only");                                                        \
  } while (0)

// --- negative: the use runs only on the CPU ---------------------------------
double checked(const torch::Tensor &x) {
  TORCH_CHECK(x.is_cpu(), "x must be on the CPU");
  return x.sum().item<double>();
}
double checkedByMacro(torch::Tensor x, torch::Tensor y) {
  CHECK_CPU(x);
  ASSERT_CPU(y);
  return x.item<double>() + y.item<double>();
}
double asserted(const torch::Tensor &x) {
  TORCH_INTERNAL_ASSERT(x.device().is_cpu());
  return x.item<double>();
}
double branches(const torch::Tensor &x) {
  if (x.is_cuda())
    return 0;
  return x.item<double>();
}
double elseBranch(const torch::Tensor &x) {
  if (x.is_cuda()) {
    return 1;
  } else {
    return x.max().item<double>();
  }
}
double conditional(const torch::Tensor &x) { return !x.is_cuda() ? x.item<double>() : 0.0; }
double conjunction(const torch::Tensor &x, bool verbose) {
  return verbose && x.get_device() < 0 && x.item<double>() > 0 ? 1 : 0;
}
double deviceTest(torch::Device device) {
  if (device.is_cuda())
    return 0;
  auto t = torch::ones({3}, torch::TensorOptions().device(device));
  return t.sum().item<double>();
}
double comparedType(const torch::Tensor &x) {
  if (x.device() == torch::Device(torch::kCPU))
    return x.item<double>();
  if (x.device().type() != torch::kCUDA)
    return x.item<double>();
  return 0;
}
double inLoop(const torch::Tensor &x, int n) {
  double total = 0;
  for (int i = 0; i < n; ++i) {
    if (!x.is_cpu())
      continue;
    total += x.item<double>();
  }
  return total;
}

// A device string with an index names its type (`"cpu:0"` is the CPU).
double indexedString(const torch::Tensor &x) {
  if (x.device() != torch::Device("cpu:0"))
    return 0;
  return x.item<double>();
}

// --- positive: the test does not hold where the value is read ---------------
double cudaOnly(const torch::Tensor &x) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  return x.item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `item()` on a tensor that may be on the GPU
}
double cudaString(const torch::Tensor &x) {
  if (x.device() == torch::Device("cuda:1"))
    return x.item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `item()` on a tensor that may be on the GPU
  return 0;
}
double otherTensor(const torch::Tensor &x, const torch::Tensor &y) {
  CHECK_CPU(x);
  return y.item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `item()` on a tensor that may be on the GPU
}
double movedAfter(torch::Tensor x) {
  CHECK_CPU(x);
  x = x.cuda();
  return x.item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `item()` on a tensor that may be on the GPU
}
double movedInLoop(torch::Tensor x, int n) {
  CHECK_CPU(x);
  double total = 0;
  for (int i = 0; i < n; ++i) {
    total += x.item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: `item()` on a tensor that may be on the GPU
    x = x.cuda();
  }
  return total;
}
double disjunction(const torch::Tensor &x, bool force) {
  if (x.is_cpu() || force)
    return x.item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `item()` on a tensor that may be on the GPU
  return 0;
}
double notLeaving(const torch::Tensor &x) {
  if (x.is_cuda())
    x.add_(x);
  return x.item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `item()` on a tensor that may be on the GPU
}
double thenOfCuda(const torch::Tensor &x) {
  if (x.is_cuda())
    return x.item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `item()` on a tensor that may be on the GPU
  return 0;
}
double breakInMacro(const torch::Tensor &x) {
  do {
    if (x.is_cuda())
      break;
  } while (0);
  return x.item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `item()` on a tensor that may be on the GPU
}
