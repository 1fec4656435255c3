// RUN: %check_torch_sync %s torch-sync-index-put %t -- %mock_flags
#include <torch/torch.h>

void positives() {
  auto x = torch::randn({64}, torch::kCUDA);
  auto idx = torch::randint(64, {8}, torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA));
  x.index_put_({idx}, 0.0);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `index_put_` with integer indices and a host scalar copies the scalar with a wait; false dependency: the value can be a 0-dim tensor on the target's device; pass `torch::scalar_tensor(value, x.options())` [torch-sync-index-put]
  // CHECK-FIXES: x.index_put_({idx}, torch::scalar_tensor(0.0, x.options()));
  auto host_idx = torch::randint(64, {8}, torch::kLong);
  auto y = x.index({host_idx});
  // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: a CPU index tensor used on a GPU tensor is copied to the GPU with a blocking copy; false dependency: the host does not need to wait for the index copy; move it first with `.to(x.device(), /*non_blocking=*/true)` [torch-sync-index-put]
  // CHECK-FIXES: auto y = x.index({host_idx.to(x.device(), /*non_blocking=*/true)});
  auto g0 = torch::zeros({}, torch::kCUDA);
  x.masked_fill_(x > 0, g0);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `masked_fill_` with a device tensor as the value copies the value to the host (the host waits); false dependency: the value can stay on the device; `x.copy_(torch::where(mask, value, x))` keeps it there [torch-sync-index-put]
}

void negatives(torch::Tensor unknown_index) {
  auto x = torch::randn({64}, torch::kCUDA);
  auto mask = x > 0;
  x.index_put_({mask}, 0.0);                        // a mask with a scalar: masked_fill_, no wait
  x.masked_fill_(mask, 0.0);                        // a host scalar: no wait
  x.index_put_({unknown_index}, 1.0);               // element kind unknown: no claim
  auto idx = torch::randint(64, {8}, torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA));
  x.index_put_({idx}, torch::scalar_tensor(0.0, x.options()));  // already the remedy
  auto host = torch::randn({64});
  host.index_put_({torch::randint(64, {8}, torch::kLong)}, 0.0);  // CPU tensor
}

// Macros and templates: a sync spelled in a macro body is reported at the
// expansion and never rewritten; a template is checked once, in its definition.
#define ZERO_AT(x, i) (x).index_put_({i}, 0.0)
// CHECK-FIXES: #define ZERO_AT(x, i) (x).index_put_({i}, 0.0)
void macro_and_template_cases() {
  auto x = torch::randn({8}, torch::kCUDA);
  auto idx = torch::randint(8, {2}, torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA));
  ZERO_AT(x, idx);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `index_put_` with integer indices
  // CHECK-FIXES: ZERO_AT(x, idx);
}
template <typename T> void fill_at(torch::Tensor &x, T v) {
  auto idx = torch::randint(8, {2}, torch::TensorOptions().dtype(torch::kLong).device(x.device()));
  x.index_put_({idx}, 1.0);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `index_put_` with integer indices
  // CHECK-FIXES: x.index_put_({idx}, torch::scalar_tensor(1.0, x.options()));
}
template void fill_at<float>(torch::Tensor &, float);
template void fill_at<int>(torch::Tensor &, int);

// Element kinds of index tensors made by factories: `arange` with integer bounds is
// int64, `x.options()` carries x's dtype (issue 13: missed in an attention mask).
void factory_indices() {
  auto out = torch::randn({4, 16, 32}, torch::kCUDA);
  auto first = torch::zeros({4}, torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA));
  out.index_put_({torch::arange(4, first.options()), first, first}, 0.0);
  // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: `index_put_` with integer indices and a host scalar copies the scalar with a wait; false dependency: the value can be a 0-dim tensor on the target's device; pass `torch::scalar_tensor(value, x.options())` [torch-sync-index-put]
  // CHECK-FIXES: out.index_put_({torch::arange(4, first.options()), first, first}, torch::scalar_tensor(0.0, out.options()));
  auto weights = torch::randn({4}, torch::kCUDA);
  out.index_put_({torch::arange(4.0, weights.options())}, 0.0); // floating indices: not an integer gather
}
