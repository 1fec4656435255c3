// RUN: %check_torch_sync %s torch-sync-host-bool %t -- %mock_flags
// RUN: %check_torch_sync --check-prefix=ASYNC %s torch-sync-host-bool %t.async -config="{CheckOptions: {torch-sync-host-bool.AssertAsyncFix: true}}" -- %mock_flags
#include <torch/torch.h>

bool positives(torch::Tensor a, torch::Tensor b) {
  auto x = torch::randn({8}, torch::kCUDA);
  if (x.sum().is_nonzero())
    // ASYNC-MESSAGES: :[[@LINE-1]]:15: warning: `is_nonzero`
    // CHECK-MESSAGES: :[[@LINE-2]]:15: warning: `is_nonzero` on a GPU tensor turns a GPU value into a host `bool`, so the host waits for the GPU; true dependency: the value decides an `if`; decide on the device instead (`torch::where`, masks) or check less often [torch-sync-host-bool]
    return true;
  bool same = a.equal(b) && torch::allclose(a, b);
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `equal` on a tensor that may be on the GPU {{.*}}; true dependency: the value decides a branch (`&&`/`||`);
  // CHECK-MESSAGES: :[[@LINE-2]]:29: warning: `allclose` on a tensor that may be on the GPU {{.*}}; true dependency: the value decides a branch (`&&`/`||`);
  // ASYNC-MESSAGES: :[[@LINE-3]]:17: warning: `equal`
  // ASYNC-MESSAGES: :[[@LINE-4]]:29: warning: `allclose`
  while (x.isnan().any().item<bool>())
    // ASYNC-MESSAGES: :[[@LINE-1]]:26: warning: `item<bool>()`
    // CHECK-MESSAGES: :[[@LINE-2]]:26: warning: `item<bool>()` on a GPU tensor {{.*}}; true dependency: the value controls a `while` loop (every iteration of the loop at line [[@LINE-2]]);
    x = x * 0;
  TORCH_CHECK(x.isfinite().all().item<bool>(), "non-finite values");
  // CHECK-MESSAGES: :[[@LINE-1]]:34: warning: `item<bool>()` on a GPU tensor {{.*}}; true dependency: the value is checked by `TORCH_CHECK`; check on the device with `at::_assert_async(cond)` (a failing check then aborts the CUDA context instead of throwing) [torch-sync-host-bool]
  // ASYNC-MESSAGES: :[[@LINE-2]]:34: warning: `item<bool>()` on a GPU tensor {{.*}}[torch-sync-host-bool]
  // ASYNC-FIXES: at::_assert_async(x.isfinite().all(), "non-finite values");
  return same;
}

void negatives() {
  auto host = torch::randn({8});
  bool a = host.sum().is_nonzero();                     // CPU
  auto x = torch::randn({8}, torch::kCUDA);
  float v = x.sum().item<float>();                      // torch-sync-item's
  at::_assert_async(x.isfinite().all());                // already on the device
}

// Macros and templates: a sync spelled in a macro body is reported at the
// expansion and never rewritten; a template is checked once, in its definition.
#define ALL_FINITE(t) (t).isfinite().all().item<bool>()
// ASYNC-FIXES: #define ALL_FINITE(t) (t).isfinite().all().item<bool>()
void macro_and_template_cases() {
  auto x = torch::randn({8}, torch::kCUDA);
  TORCH_CHECK(ALL_FINITE(x), "non-finite");
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: `item<bool>()` on a GPU tensor
  // ASYNC-MESSAGES: :[[@LINE-2]]:15: warning: `item<bool>()` on a GPU tensor
  // ASYNC-FIXES: TORCH_CHECK(ALL_FINITE(x), "non-finite");
}
template <typename T> bool same_values(const torch::Tensor &a, const torch::Tensor &b) {
  return a.equal(b);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `equal` on a tensor that may be on the GPU
  // ASYNC-MESSAGES: :[[@LINE-2]]:12: warning: `equal` on a tensor that may be on the GPU
}
template bool same_values<float>(const torch::Tensor &, const torch::Tensor &);
template bool same_values<int>(const torch::Tensor &, const torch::Tensor &);
