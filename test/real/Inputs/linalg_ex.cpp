// torch-sync-checked-linalg with UseExVariants against the real headers: the `_ex`
// rewrite must compile with LibTorch 1.13 and 2.11.
#include <torch/torch.h>

torch::Tensor solve(torch::Tensor b) {
  auto a = torch::eye(4, torch::kCUDA) * 2;
  auto inv = torch::linalg_inv(a);
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `linalg_inv` on a GPU tensor {{.*}}[torch-sync-checked-linalg]
  // CHECK-FIXES: auto inv_ex = torch::linalg_inv_ex(a);
  // CHECK-FIXES-NEXT: auto inv = std::get<0>(inv_ex);
  torch::Tensor x = torch::linalg_solve(a, b);
  // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: `linalg_solve` on a GPU tensor {{.*}}[torch-sync-checked-linalg]
  // CHECK-FIXES: auto x_ex = torch::linalg_solve_ex(a, b);
  // CHECK-FIXES-NEXT: auto x = std::get<0>(x_ex);
  return inv.matmul(x);
}
