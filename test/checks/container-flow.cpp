// RUN: %check_torch_sync %s torch-sync-item,torch-sync-pageable-copy,torch-sync-mask-index %t -- %mock_flags
// Issue 40: a local container's elements are states of the value-flow core.
// A read of an element sees the container's initialiser and the stores
// (push_back, `c[i] = v`, ...) that reach it: not those after it, nor those a
// `clear()` replaced on every path; a static local keeps earlier calls' stores.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

// Device: a read sees only the stores before it.
float read_before_gpu_store(const torch::Tensor &x) {
  std::vector<torch::Tensor> parts;
  parts.push_back(torch::zeros({4}));
  float first = parts[0].sum().item<float>(); // CPU only so far: no wait
  parts.push_back(x.cuda());
  float second = parts[1].sum().item<float>(); // may be on the GPU
  // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: `item()` on a tensor that may be on the GPU
  return first + second;
}

// clear() replaces every earlier store.
float read_after_clear(const torch::Tensor &x) {
  std::vector<torch::Tensor> v;
  v.push_back(x.cuda());
  v.clear();
  v.push_back(torch::ones({2}));
  return v[0].sum().item<float>(); // CPU: no wait
}

// A store later in the loop reaches the next iteration's read.
float loop_carried(const torch::Tensor &x, int n) {
  std::vector<torch::Tensor> history;
  history.push_back(torch::zeros({1}));
  float total = 0;
  for (int i = 0; i < n; ++i) {
    total += history.back().sum().item<float>(); // the GPU store of the last iteration
  // CHECK-MESSAGES: :[[@LINE-1]]:35: warning: `item()` on a tensor that may be on the GPU
    history.push_back(x.cuda() * i);
  }
  return total;
}

// A clear() on one branch only: the GPU store still reaches.
float branch_clear(const torch::Tensor &x, bool reset) {
  std::vector<torch::Tensor> v;
  v.push_back(x.cuda());
  if (reset)
    v.clear();
  v.push_back(torch::ones({2}));
  return v.front().sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:26: warning: `item()` on a tensor that may be on the GPU
}

// An element assignment is a store too.
float element_assigned(const torch::Tensor &x) {
  std::vector<torch::Tensor> v(2);
  v[0] = torch::zeros({2});
  float a = v[0].sum().item<float>(); // CPU
  v[1] = x.cuda();
  return a + v[1].sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: `item()` on a tensor that may be on the GPU
}

// Pinning: a read sees the buffers added before it.
void staged_copies(int n) {
  std::vector<torch::Tensor> staging;
  staging.push_back(torch::empty({n}));
  auto a = staging[0].to(torch::kCUDA, /*non_blocking=*/true); // pageable only so far
  // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: a copy from pageable host memory cannot overlap with the GPU
  staging.push_back(torch::empty({n}, torch::TensorOptions().pinned_memory(true)));
  auto b = staging[1].to(torch::kCUDA, /*non_blocking=*/true); // pageable or pinned: not sure
}

void pinned_after_clear(int n) {
  std::vector<torch::Tensor> staging;
  staging.push_back(torch::empty({n}));
  staging.clear();
  staging.push_back(torch::empty({n}, torch::TensorOptions().pinned_memory(true)));
  auto a = staging[0].to(torch::kCUDA, /*non_blocking=*/true); // pinned
}

// The classifier: a read of the container before the store does not see it.
void pushed_after_check(const torch::Tensor &loss, int steps) {
  std::vector<float> values = {1.0f};
  if (values[0] > 0.5f)
    std::puts("started high");
  for (int i = 0; i < steps; ++i)
    values.push_back((loss * i).item<float>()); // stored, printed after the loop
  // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: `item()` on a tensor that may be on the GPU {{.*}}; false dependency: through `values`, the value is only logged (every iteration of the loop at line [[@LINE-2]])
  for (float v : values)
    std::printf("%f\n", v);
}

// ... and a read after it does.
void pushed_then_checked(const torch::Tensor &loss, int steps) {
  std::vector<float> values;
  for (int i = 0; i < steps; ++i) {
    values.push_back((loss * i).item<float>());
  // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: `item()` on a tensor that may be on the GPU {{.*}}; true dependency: through `values`, the value decides an `if` (every iteration of the loop at line [[@LINE-2]])
    if (values.back() > 10.0f)
      break;
  }
}

// A static local keeps the stores of earlier calls: they reach every read.
float static_cache(const torch::Tensor &x) {
  static std::vector<torch::Tensor> cache;
  float r = cache.empty() ? 0.0f : cache[0].sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:51: warning: `item()` on a GPU tensor
  cache.push_back(x.cuda());
  return r;
}

// std::get only gives access: the tuple keeps its declaration's elements.
float tuple_access(const torch::Tensor &x) {
  auto pair = std::make_tuple(torch::zeros({2}), x.cuda());
  float a = std::get<0>(pair).sum().item<float>(); // CPU
  return a + std::get<1>(pair).sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:38: warning: `item()` on a GPU tensor
}

// Element kind: integer indices first, a mask added later, then only a mask.
torch::Tensor pick(const torch::Tensor &x, const torch::Tensor &s) {
  std::vector<torch::Tensor> keys;
  keys.push_back(torch::randint(4, {2}));
  auto a = x.index({keys[0]}); // integer indices: the shape is known, no wait
  keys.push_back(s > 0);
  auto b = x.index({keys[1]});
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `index({t})` with a tensor that may be a boolean mask
  keys.clear();
  keys.push_back(s > 0.5);
  auto c = x.index({keys.back()});
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: selecting with a boolean mask on a tensor that may be on the GPU
  return a + b + c;
}
