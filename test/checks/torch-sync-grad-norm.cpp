// RUN: %check_torch_sync %s torch-sync-grad-norm %t -- %mock_flags
#include <torch/torch.h>
#include <iostream>

void positives(torch::nn::Linear &model) {
  torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `clip_grad_norm_` returns the total norm as a host `double`, so it waits for the backward pass; false dependency: the value is unused; compute the norm and scale on the device (a 0-dim norm, `clamp_max`, `mul_`); read the norm only when it is logged [torch-sync-grad-norm]
  // CHECK-FIXES: [](const std::vector<torch::Tensor> &params_, double max_norm_) { std::vector<torch::Tensor> grads_; for (const auto &p : params_) if (p.grad().defined()) grads_.push_back(p.grad()); if (grads_.empty()) return; std::vector<torch::Tensor> norms_; for (const auto &g : grads_) norms_.push_back(g.norm(2)); auto total_ = norms_.size() == 1 ? norms_[0] : torch::stack(norms_).norm(2); auto coef_ = (max_norm_ / (total_ + 1e-6)).clamp_max(1.0); for (const auto &g : grads_) g.mul_(coef_); }(model->parameters(), 1.0);
  double norm = torch::nn::utils::clip_grad_norm_(model->parameters(), 0.5);
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `clip_grad_norm_` {{.*}}; false dependency: through `norm`, the value is only logged;
  std::cout << norm;
  if (torch::nn::utils::clip_grad_norm_(model->parameters(), 0.5) > 10)
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: `clip_grad_norm_` {{.*}}; true dependency: the value decides an `if`;
    return;
  torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0, 1.0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `clip_grad_norm_` {{.*}} the value is unused;
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
