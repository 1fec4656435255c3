// RUN: %check_torch_sync --compile-fixed --check-prefix=CHECK,EXACT %s torch-sync-grad-norm,torch-sync-deferred-accumulate,torch-sync-item %t -- %mock_flags
// RUN: %check_torch_sync --check-prefix=CHECK,FUSED %s torch-sync-grad-norm,torch-sync-deferred-accumulate %t.fused -config="{CheckOptions: {FusedNorm: true}}" -- %mock_flags
#include <torch/torch.h>
#include <iostream>
#include <vector>
// One named helper per file, after the includes (issue 25: it was a 600-character
// lambda at each call), guarded so that a second copy compiles to nothing.
// CHECK-FIXES: #include <vector>
// CHECK-FIXES-EMPTY:
// CHECK-FIXES-NEXT: // torch-syncfree: torch::nn::utils::clip_grad_norm_ (2-norm) on the device: the
// EXACT-FIXES: #ifndef TORCH_SYNCFREE_CLIP_GRAD_NORM
// EXACT-FIXES-NEXT: #define TORCH_SYNCFREE_CLIP_GRAD_NORM
// EXACT-FIXES-NEXT: static torch::Tensor torch_syncfree_clip_grad_norm(const std::vector<torch::Tensor> &parameters, double max_norm) {
// EXACT-FIXES-NEXT:   std::vector<torch::Tensor> grads;
// EXACT-FIXES-NEXT:   for (const auto &p : parameters)
// EXACT-FIXES-NEXT:     if (p.grad().defined())
// EXACT-FIXES-NEXT:       grads.push_back(p.grad());
// EXACT-FIXES-NEXT:   if (grads.empty()) // LibTorch returns 0.0
// EXACT-FIXES-NEXT:     return parameters.empty() ? torch::zeros({}, torch::kDouble)
// EXACT-FIXES-NEXT:                               : torch::zeros({}, parameters[0].options().dtype(torch::kDouble));
// EXACT-FIXES-NEXT:   std::vector<torch::Tensor> norms;
// EXACT-FIXES-NEXT:   for (const auto &g : grads)
// EXACT-FIXES-NEXT:     norms.push_back(g.norm(2));
// EXACT-FIXES-NEXT:   auto total = norms.size() == 1 ? norms[0] : torch::stack(norms).norm(2);
// EXACT-FIXES-NEXT:   auto coef = (max_norm / (total + 1e-6)).clamp_max(1.0);
// EXACT-FIXES-NEXT:   for (const auto &g : grads)
// EXACT-FIXES-NEXT:     g.mul_(coef);
// EXACT-FIXES-NEXT:   return total;
// EXACT-FIXES-NEXT: }
// EXACT-FIXES-NEXT: #endif
// FUSED-FIXES: static torch::Tensor torch_syncfree_clip_grad_norm_fused(const std::vector<torch::Tensor> &parameters, double max_norm) {
// FUSED-FIXES:   auto norms = at::_foreach_norm(grads, 2);

void positives(torch::nn::Linear &model) {
  torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `clip_grad_norm_` returns the total norm as a host `double`, so it waits for the backward pass; false dependency: the value is unused; compute the norm and scale on the device (a 0-dim norm, `clamp_max`, `mul_`); read the norm only when it is logged [torch-sync-grad-norm]
  // EXACT-FIXES: {{^}}  torch_syncfree_clip_grad_norm(model->parameters(), 1.0);
  // By default the norms are LibTorch's own per-parameter `norm(2)` (on CUDA,
  // `_foreach_norm` sums in another order: not the same last bits); FusedNorm trades
  // that for one launch.
  // FUSED-FIXES: {{^}}  torch_syncfree_clip_grad_norm_fused(model->parameters(), 1.0);
  double norm = torch::nn::utils::clip_grad_norm_(model->parameters(), 0.5);
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `clip_grad_norm_` {{.*}}; false dependency: through `norm`, the value is only logged;
  std::cout << norm;
  if (torch::nn::utils::clip_grad_norm_(model->parameters(), 0.5) > 10)
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: `clip_grad_norm_` {{.*}}; true dependency: the value decides an `if`;
    return;
  torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0, 1.0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `clip_grad_norm_` {{.*}} the value is unused;
}

// An accumulated norm: the device clipping returns the norm as a 0-dim tensor and
// torch-sync-deferred-accumulate sums it on the device (one read after the loop).
// Reported once, by deferred-accumulate.
double accumulated(torch::nn::Linear &model, std::vector<torch::Tensor> &batches) {
  double norm_sum = 0;
  for (auto &x : batches) {
    model->forward(x).sum().backward();
    norm_sum += torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `norm_sum` accumulates the host norm `clip_grad_norm_` returns every iteration, so every iteration waits for the GPU; false dependency: the sum is read only after the loop (every iteration of the loop at line [[@LINE-3]]); accumulate on the device and read the total once after the loop [torch-sync-deferred-accumulate]
  }
  return norm_sum;
}
// CHECK-FIXES:      torch::Tensor norm_sum_on_device; // norm_sum, summed on the device
// EXACT-FIXES:      auto norm_sum_step = torch_syncfree_clip_grad_norm(model->parameters(), 1.0);
// FUSED-FIXES:      auto norm_sum_step = torch_syncfree_clip_grad_norm_fused(model->parameters(), 1.0);
// CHECK-FIXES-NEXT: if (norm_sum_on_device.defined())
// CHECK-FIXES-NEXT:   norm_sum_on_device.add_(norm_sum_step);
// CHECK-FIXES:      norm_sum += norm_sum_on_device.item<double>();

// A norm logged at an interval: the variable holds the 0-dim device norm and the
// log point reads it (the wait moves into the `if`). Logged every step (the
// `norm` case above), the rewrite would only move the wait: no fix.
void logged_at_interval(torch::nn::Linear &model, int steps) {
  for (int step = 0; step < steps; ++step) {
    double grad_norm = torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: `clip_grad_norm_` {{.*}}; false dependency: through `grad_norm`, the value is only logged (every iteration of the loop at line [[@LINE-2]]);
    // EXACT-FIXES: torch::Tensor grad_norm = torch_syncfree_clip_grad_norm(model->parameters(), 1.0);
    if (step % 10 == 0)
      std::cout << step << " " << grad_norm << "\n";
    // CHECK-FIXES: std::cout << step << " " << grad_norm.item<double>() /* torch-syncfree: the norm, read where it is logged */ << "\n";
  }
}

void negatives(torch::nn::Linear &model) {
  torch::nn::utils::clip_grad_value_(model->parameters(), 1.0);  // returns nothing: no wait
}

// Macros and templates: a sync spelled in a macro body is reported at the
// expansion and never rewritten; a template is checked once, in its definition.
#define CLIP(params) torch::nn::utils::clip_grad_norm_(params, 1.0)
// CHECK-FIXES: #define CLIP(params) torch::nn::utils::clip_grad_norm_(params, 1.0)
void macro_and_template_cases(std::vector<torch::Tensor> params) {
  CLIP(params);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `clip_grad_norm_`
  // CHECK-FIXES: CLIP(params);
}
template <typename Model> double clip_and_report(Model &model) {
  return torch::nn::utils::clip_grad_norm_(model.parameters(), 1.0);
  // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: `clip_grad_norm_`
  // CHECK-FIXES: return torch::nn::utils::clip_grad_norm_(model.parameters(), 1.0);
}
template double clip_and_report<torch::nn::LinearImpl>(torch::nn::LinearImpl &);
template double clip_and_report<torch::nn::Module>(torch::nn::Module &);
