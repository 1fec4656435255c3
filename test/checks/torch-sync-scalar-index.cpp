// RUN: %check_torch_sync %s torch-sync-scalar-index %t -- %mock_flags
#include <torch/torch.h>

void positives() {
  auto x = torch::randn({16, 4}, torch::kCUDA);
  auto best = x.sum(1).argmax();
  auto row = x.index({best});
  // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: indexing with a 0-dim integer tensor on the GPU reads the index on the host (the host waits); false dependency: a one-element index tensor selects the same row on the device; index with `t.unsqueeze(0)` and `squeeze(0)` the result [torch-sync-scalar-index]
  // CHECK-FIXES: auto row = x.index({best.unsqueeze(0)}).squeeze(0);
  auto other = x.index({x.sum(1).argmin()});
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: indexing with a 0-dim integer tensor
  // CHECK-FIXES: auto other = x.index({x.sum(1).argmin().unsqueeze(0)}).squeeze(0);
}

void negatives(torch::Tensor unknown_index) {
  auto x = torch::randn({16, 4}, torch::kCUDA);
  auto rows = torch::randint(16, {3}, torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA));
  auto a = x.index({rows});                 // a 1-D index: no wait
  auto b = x.index({unknown_index});        // not known to be 0-dim
  auto host = torch::randn({16});
  auto c = host.index({host.argmax()});     // CPU
  auto d = x.index({x.sum(1).argmax().unsqueeze(0)}).squeeze(0);  // already the remedy
}

// Macros and templates: a sync spelled in a macro body is reported at the
// expansion and never rewritten; a template is checked once, in its definition.
#define ROW_OF_MAX(x) (x).index({(x).sum(1).argmax()})
// CHECK-FIXES: #define ROW_OF_MAX(x) (x).index({(x).sum(1).argmax()})
void macro_and_template_cases() {
  auto x = torch::randn({8, 4}, torch::kCUDA);
  auto r = ROW_OF_MAX(x);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: indexing with a 0-dim integer tensor
  // CHECK-FIXES: auto r = ROW_OF_MAX(x);
}
template <int Dim> torch::Tensor best_row(const torch::Tensor &x) {
  auto best = x.sum(Dim).argmax();
  return x.index({best});
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: indexing with a 0-dim integer tensor that may be on the GPU
  // CHECK-FIXES: return x.index({best.unsqueeze(0)}).squeeze(0);
}
template torch::Tensor best_row<0>(const torch::Tensor &);
template torch::Tensor best_row<1>(const torch::Tensor &);
