// RUN: %check_torch_sync %s torch-sync-item %t -- %mock_flags
// A tensor whose elements the host reads through `data_ptr<T>()` is on the CPU
// in any run that works (a CUDA pointer dereferenced on the host faults), as
// one read through `accessor<T, N>()` is; so are the tensor parameters of a
// host kernel, a function that reads one on the host and never names the GPU
// (issue 43: the CPU wrappers of a custom-op library read `size.item<int>()`
// next to `input.data_ptr<float>()`).
#include <torch/torch.h>
#include <cstring>
#include <vector>

void blur(float *data, int n) {
  for (int i = 1; i < n; ++i)
    data[i] = 0.5f * (data[i] + data[i - 1]);
}
void launchOnDevice(float *data, int n);

// --- negative: the elements are read on the host -----------------------------
double dereferenced(const torch::Tensor &x) {
  const float *p = x.data_ptr<float>();
  double first = p[0];
  return first + x.sum().item<double>();
}
double throughContiguous(const torch::Tensor &x) {
  float total = *x.contiguous().data_ptr<float>();
  return total + x.max().item<double>();
}
double copiedOut(const torch::Tensor &x, int n) {
  std::vector<float> host(n);
  std::memcpy(host.data(), x.data_ptr<float>(), n * sizeof(float));
  return x.mean().item<double>();
}
double rangeOut(const torch::Tensor &x, int n) {
  float *p = x.data_ptr<float>();
  std::vector<float> host{p, p + n};
  return x.min().item<double>();
}
double passedToHostCode(const torch::Tensor &x) {
  blur(x.data_ptr<float>(), 8);
  return x.sum().item<double>();
}
// A host kernel: its other tensor parameters are CPU tensors too.
torch::Tensor filter(torch::Tensor input, torch::Tensor kernelSize, torch::Tensor sigma) {
  int size = kernelSize.item<int>();
  float spread = sigma.item<float>();
  float *data = input.data_ptr<float>();
  blur(data, size * static_cast<int>(spread));
  return input;
}

// --- positive: nothing proves the host reads the elements --------------------
double onlyPointer(const torch::Tensor &x) {
  float *p = x.data_ptr<float>();
  launchOnDevice(p, 8);
  return x.sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `item()` on a tensor that may be on the GPU
}
double untypedPointer(const torch::Tensor &x) {
  void *p = x.data_ptr();
  (void)p;
  return x.sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `item()` on a tensor that may be on the GPU
}
double reassigned(torch::Tensor x) {
  double first = x.data_ptr<float>()[0];
  x = x.cuda();
  return first + x.sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:26: warning: `item()` on a tensor that may be on the GPU
}
// Names the GPU: not a host kernel, so its other parameter may be on the GPU.
torch::Tensor mixed(torch::Tensor lengths, torch::Tensor values) {
  int64_t *n = lengths.data_ptr<int64_t>();
  double scale = values.sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:31: warning: `item()` on a tensor that may be on the GPU
  return values.cuda() * scale * n[0];
}
