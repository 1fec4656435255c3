// RUN: %check_torch_sync %s torch-sync-dynamic-shape %t -- %mock_flags
#include <torch/torch.h>

void positives(torch::Tensor maybe_gpu) {
  auto x = torch::randn({64}, torch::kCUDA);
  auto nz = (x > 0).nonzero();
  // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: `nonzero` on a GPU tensor has an output size that depends on the data, so the host waits for the GPU; true dependency: the output's size is computed from GPU values; with a known bound use `at::nonzero_static(x, size, fill)`; as a guard use `.any()` kept on the device [torch-sync-dynamic-shape]
  auto w = torch::argwhere(x > 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `argwhere` on a GPU tensor
  auto parts = torch::where(x > 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: `where` on a GPU tensor
  auto u = torch::_unique2(maybe_gpu);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `_unique2` on a tensor that may be on the GPU
  auto r = x.repeat_interleave(x.to(torch::kLong));
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `repeat_interleave` on a GPU tensor {{.*}}; pass `output_size` when the total is known [torch-sync-dynamic-shape]
  auto b = x.to(torch::kLong).bincount();
  // CHECK-MESSAGES: :[[@LINE-1]]:31: warning: `bincount` on a GPU tensor
  auto h = x.histc(10);
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `histc` on a GPU tensor {{.*}}; pass an explicit range (`min`, `max`) [torch-sync-dynamic-shape]
}

void negatives() {
  auto x = torch::randn({64}, torch::kCUDA);
  auto sel = torch::where(x > 0, x, 0);                            // three arguments: fixed shape
  auto r = x.repeat_interleave(x.to(torch::kLong), 0, 128);        // output_size given
  auto h = x.histc(10, -1, 1);                                     // explicit range
  x.masked_scatter_(x > 0, x);                                     // measured: no wait
  auto host = torch::randn({64});
  auto nz = (host > 0).nonzero();                                  // CPU
  auto fixed = at::nonzero_static(x > 0, 64);                      // already the remedy
}

// nonzero() only tested for emptiness: `.any()` answers without the index list.
int guards(torch::Tensor maybe_gpu) {
  auto x = torch::randn({64}, torch::kCUDA);
  int hits = 0;
  if ((x > 0).nonzero().size(0) > 0)
    // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: `nonzero` on a GPU tensor {{.*}}; this only tests for emptiness: `(x > 0).any()` answers on the device without building the index list (the host still reads one bool unless the decision moves to the device) [torch-sync-dynamic-shape]
    // CHECK-FIXES: if ((x > 0).any().item<bool>() /* torch-syncfree: one bool, no index list */)
    ++hits;
  if (torch::nonzero(maybe_gpu).size(0) == 0)
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: `nonzero` on a tensor that may be on the GPU
    // CHECK-FIXES: if (!maybe_gpu.any().item<bool>() /* torch-syncfree: one bool, no index list */)
    ++hits;
  bool any_nan = 0 < x.isnan().nonzero().size(0);
  // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: `nonzero` on a GPU tensor
  // CHECK-FIXES: bool any_nan = x.isnan().any().item<bool>() /* torch-syncfree: one bool, no index list */;
  auto mask = x > 1;
  // numel() of nonzero(x) is 0 for a 0-dim x: the fix keeps a dim() test.
  if (mask.nonzero().numel())
    // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `nonzero` on a GPU tensor
    // CHECK-FIXES: if ((mask.dim() > 0 && mask.any().item<bool>() /* torch-syncfree: one bool, no index list */))
    ++hits;
  while (torch::argwhere(mask).numel() >= 1)
    // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: `argwhere` on a GPU tensor
    // CHECK-FIXES: while ((mask.dim() > 0 && mask.any().item<bool>() /* torch-syncfree: one bool, no index list */))
    break;
  // Not an emptiness test, or numel() of an expression that would be repeated: no fix.
  if ((x > 0).nonzero().numel() > 0)
    // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: `nonzero` on a GPU tensor {{.*}}; with a known bound use `at::nonzero_static(x, size, fill)`; as a guard use `.any()` kept on the device [torch-sync-dynamic-shape]
    ++hits;
  if (mask.nonzero().size(0) > 1)
    // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `nonzero` on a GPU tensor {{.*}}; with a known bound
    ++hits;
  return hits + any_nan;
}

// Macros and templates: reported, never rewritten inside a macro body.
#define HAS_ANY(t) ((t).nonzero().size(0) > 0)
// CHECK-FIXES: #define HAS_ANY(t) ((t).nonzero().size(0) > 0)
bool in_macro() {
  auto x = torch::randn({64}, torch::kCUDA);
  return HAS_ANY(x > 0);
  // CHECK-FIXES: return HAS_ANY(x > 0);
  // CHECK-MESSAGES: :[[@LINE-2]]:10: warning: `nonzero` on a GPU tensor
}

template <typename T> T count_positive(const torch::Tensor &t) {
  return static_cast<T>(t.nonzero().size(0));
  // CHECK-MESSAGES: :[[@LINE-1]]:27: warning: `nonzero` on a tensor that may be on the GPU
}
template int count_positive<int>(const torch::Tensor &);
template long count_positive<long>(const torch::Tensor &);  // one finding, in the template

// Issue 43: an index list of which only the size is read, summed into a host metric
// read after the loop, is a false dependency (the rule for `m += t.item()`):
// count_nonzero() counts on the device. Not when the size is used as a size or a bound.
int64_t counted_index_lists(const torch::Tensor &labels, int steps) {
  auto x = torch::randn({64}, torch::kCUDA);
  int64_t found = 0, elements = 0;
  for (int i = 0; i < steps; ++i) {
    found += torch::nonzero(labels.cuda().eq(i)).size(0);
    // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `nonzero` on a GPU tensor has an output size that depends on the data, so the host waits for the GPU; false dependency: only the index list's size is read (`size(0)`), and the value is accumulated into a host metric (every iteration of the loop at line [[@LINE-2]]); count on the device with `mask.count_nonzero()`, add those counts into a tensor on the device and read the total once, after the loop [torch-sync-dynamic-shape]
    elements += x.nonzero().numel();
    // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: `nonzero` on a GPU tensor {{.*}}; false dependency: only the index list's size is read (`numel()`), and the value is accumulated into a host metric (every iteration of the loop at line {{[0-9]+}}); count on the device with `x.count_nonzero() * x.dim()` (the index list's `numel()`), add those counts
  }
  auto sized = torch::zeros({torch::nonzero(x > 0).size(0)});
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: `nonzero` on a GPU tensor {{.*}}; true dependency: the output's size is computed from GPU values;
  for (int64_t j = 0; j < x.nonzero().size(0); ++j)
    // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `nonzero` on a GPU tensor {{.*}}; true dependency: the output's size is computed from GPU values
    ++found;
  return found + elements + sized.size(0);
}
