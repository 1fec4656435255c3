// RUN: %check_torch_sync %s torch-sync-host-bool %t -- %mock_flags
// `t.equal(e)` / `allclose` with `e` a CPU tensor that has dimensions: LibTorch
// rejects tensors on two devices, so in any run that gets past the call t is
// on the CPU and nothing waits (fresh sample 6: a gtest of a library,
// `v.At(i).equal(torch::tensor({i, i + 1, i + 2}))`, was reported). A 0-dim
// CPU tensor passes beside a GPU one as a scalar: still reported.
#include <torch/torch.h>

struct Store {
  torch::Tensor at(int i) const;
};

// --- negative: the other side is a CPU tensor with dimensions --------------
bool sameAsList(const Store &s, int i) {
  torch::Tensor t = s.at(i);
  torch::Tensor expected = torch::tensor({i, i + 1, i + 2});
  return t.equal(expected);
}
bool closeToZeros(const Store &s) {
  return s.at(0).allclose(torch::zeros({3}));
}
bool freeFunction(const Store &s) {
  return torch::equal(s.at(1), torch::ones({2, 2}).clone());
}

// --- positive --------------------------------------------------------------
bool againstScalarTensor(const Store &s) {
  return s.at(0).equal(torch::tensor(1.0));
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `equal` on a tensor that may be on the GPU
}
bool againstUnknown(const Store &s, const torch::Tensor &other) {
  return s.at(0).equal(other);
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `equal` on a tensor that may be on the GPU
}
bool againstGpu(const Store &s) {
  return s.at(0).equal(torch::zeros({3}).cuda());
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `equal` on a tensor that may be on the GPU
}
bool reassigned(const Store &s, bool empty) {
  torch::Tensor expected = torch::tensor({1, 2});
  if (empty)
    expected = torch::zeros({});
  return s.at(0).equal(expected);
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `equal` on a tensor that may be on the GPU
}
