// RUN: %check_torch_sync %s torch-sync-checked-linalg %t -- %mock_flags
// RUN: %check_torch_sync --check-prefix=EX %s torch-sync-checked-linalg %t.ex -config="{CheckOptions: {torch-sync-checked-linalg.UseExVariants: true}}" -- %mock_flags
#include <torch/torch.h>

void positives(torch::Tensor maybe_gpu) {
  auto a = torch::eye(4, torch::kCUDA) * 2;
  auto inv = torch::linalg_inv(a);
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `linalg_inv` on a GPU tensor checks the factorisation on the host, so it waits for the GPU; false dependency: the result itself does not need the host; use `linalg_inv_ex`, which returns an `info` tensor instead of raising, and check `info` later (errors are then no longer raised here) [torch-sync-checked-linalg]
  // EX-MESSAGES: :[[@LINE-2]]:14: warning: `linalg_inv` on a GPU tensor {{.*}} (errors are then no longer raised here); the fix keeps `std::get<1>(inv_ex)` (info) to check later [torch-sync-checked-linalg]
  // EX-FIXES: auto inv_ex = torch::linalg_inv_ex(a);
  // EX-FIXES-NEXT: auto inv = std::get<0>(inv_ex);
  auto l = torch::linalg_cholesky(maybe_gpu);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `linalg_cholesky` on a tensor that may be on the GPU {{.*}}; use `linalg_cholesky_ex`
  // EX-MESSAGES: :[[@LINE-2]]:12: warning: `linalg_cholesky` on a tensor that may be on the GPU
  // EX-FIXES: auto l_ex = torch::linalg_cholesky_ex(maybe_gpu);
  // EX-FIXES-NEXT: auto l = std::get<0>(l_ex);
  auto i2 = a.inverse();
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: `inverse` on a GPU tensor {{.*}}; use `linalg_inv_ex`
  // EX-MESSAGES: :[[@LINE-2]]:15: warning: `inverse` on a GPU tensor {{.*}}; use `linalg_inv_ex`{{.*}}here) [torch-sync-checked-linalg]
}

void negatives() {
  auto host = torch::eye(4) * 2;
  auto inv = torch::linalg_inv(host);                         // CPU
  auto a = torch::eye(4, torch::kCUDA) * 2;
  auto ex = torch::linalg_inv_ex(a);                          // already the remedy
}

// Macros and templates: a sync spelled in a macro body is reported at the
// expansion and never rewritten; a template is checked once, in its definition.
#define INVERT(a) torch::linalg_inv(a)
void macro_and_template_cases() {
  auto a = torch::eye(4, torch::kCUDA);
  auto inv = INVERT(a);
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `linalg_inv` on a GPU tensor
  // EX-MESSAGES: :[[@LINE-2]]:14: warning: `linalg_inv` on a GPU tensor
  // EX-FIXES: auto inv = INVERT(a);
}
template <int N> torch::Tensor solve_n(const torch::Tensor &a, const torch::Tensor &b) {
  auto x = torch::linalg_solve(a, b);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `linalg_solve` on a tensor that may be on the GPU
  // EX-MESSAGES: :[[@LINE-2]]:12: warning: `linalg_solve` on a tensor that may be on the GPU
  // EX-FIXES: auto x_ex = torch::linalg_solve_ex(a, b);
  // EX-FIXES-NEXT: auto x = std::get<0>(x_ex);
  return x * N;
}
template torch::Tensor solve_n<1>(const torch::Tensor &, const torch::Tensor &);
template torch::Tensor solve_n<2>(const torch::Tensor &, const torch::Tensor &);
