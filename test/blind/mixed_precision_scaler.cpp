// fp16 training with fp32 master weights and a hand-written dynamic loss
// scaler (the C++ counterpart of torch.cuda.amp.GradScaler, without AMP).
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

namespace F = torch::nn::functional;

struct ClassifierImpl : torch::nn::Module {
  ClassifierImpl()
      : l1(register_module("l1", torch::nn::Linear(128, 512))),
        l2(register_module("l2", torch::nn::Linear(512, 512))),
        l3(register_module("l3", torch::nn::Linear(512, 4))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = torch::gelu(l1->forward(x));
    x = torch::gelu(l2->forward(x));
    return l3->forward(x);
  }
  torch::nn::Linear l1, l2, l3;
};
TORCH_MODULE(Classifier);

class DynamicLossScaler {
 public:
  DynamicLossScaler(double init_scale, double growth, double backoff, int64_t interval)
      : scale_(init_scale), growth_(growth), backoff_(backoff), interval_(interval) {}

  double scale() const { return scale_; }

  // Unscales the fp32 master gradients in place. Returns false when any of
  // them holds an inf/nan, in which case the optimizer step must be skipped.
  bool unscale_and_check(std::vector<torch::Tensor>& master) {
    torch::NoGradGuard no_grad;
    auto found_inf = torch::zeros({1}, master[0].options().dtype(torch::kFloat));
    const double inv_scale = 1.0 / scale_;
    for (auto& p : master) {
      if (!p.grad().defined()) continue;
      auto& g = p.mutable_grad();
      g.mul_(inv_scale);
      found_inf.add_(torch::isfinite(g).logical_not().any().to(torch::kFloat));
    }
    return !found_inf.is_nonzero();  // SYNC: true
  }

  void update(bool finite) {
    if (!finite) {
      scale_ *= backoff_;
      good_steps_ = 0;
    } else if (++good_steps_ % interval_ == 0) {
      scale_ *= growth_;
    }
  }

 private:
  double scale_, growth_, backoff_;
  int64_t interval_;
  int64_t good_steps_ = 0;
};

int main() {
  torch::manual_seed(1);
  const torch::Device dev(torch::kCUDA, 0);
  const auto half = torch::TensorOptions().dtype(torch::kHalf).device(dev);
  const auto lng = torch::TensorOptions().dtype(torch::kLong).device(dev);
  const int64_t kSteps = 3000, kBatch = 256;

  Classifier model;
  model->to(dev, torch::kHalf);  // SYNC: false
  auto params = model->parameters();

  // fp32 master copy that the optimizer owns.
  std::vector<torch::Tensor> master;
  for (const auto& p : params) {
    master.push_back(p.detach().to(torch::kFloat).clone().requires_grad_(true));
  }
  torch::optim::AdamW opt(master, torch::optim::AdamWOptions(3e-4).weight_decay(0.01));
  DynamicLossScaler scaler(65536.0, 2.0, 0.5, 1000);

  auto loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(dev));
  int64_t skipped = 0, applied = 0;
  double gnorm_sum = 0.0;

  for (int64_t step = 1; step <= kSteps; ++step) {
    auto x = torch::randn({kBatch, 128}, half);
    auto y = torch::randint(0, 4, {kBatch}, lng);
    auto class_w = torch::tensor({1.0f, 2.0f, 0.5f, 1.0f}, torch::TensorOptions().device(dev));  // SYNC: false FIX

    model->zero_grad();
    auto logits = model->forward(x).to(torch::kFloat);
    logits.masked_fill_(logits.isnan(), 0.0);
    logits = torch::nan_to_num(logits, 0.0, 1e4, -1e4);
    auto loss = F::cross_entropy(logits, y, F::CrossEntropyFuncOptions().weight(class_w));
    (loss * scaler.scale()).backward();

    // fp16 grads -> fp32 master grads (dtype conversion on the same device).
    for (size_t i = 0; i < params.size(); ++i) {
      master[i].mutable_grad() = params[i].grad().to(torch::kFloat);
    }

    const bool finite = scaler.unscale_and_check(master);  // SYNC: true
    scaler.update(finite);
    if (!finite) {
      ++skipped;
      continue;
    }
    const double gnorm = torch::nn::utils::clip_grad_norm_(master, /*max_norm=*/1.0);  // SYNC: false
    gnorm_sum += gnorm;
    opt.step();

    {
      torch::NoGradGuard no_grad;
      for (size_t i = 0; i < params.size(); ++i) params[i].copy_(master[i]);
    }
    ++applied;
    loss_sum += loss.detach().to(torch::kDouble);

    // Batch accuracy, not counting rows whose logits had to be clamped.
    auto clamped = logits.abs().ge(1e4).any(1);
    auto hit = torch::where(clamped, torch::zeros_like(clamped), logits.argmax(1).eq(y));

    if (step % 100 == 0) {
      std::printf("step %ld loss %.4f acc %.3f scale %.0f\n", static_cast<long>(step),
                  loss.item<float>(),  // SYNC: interval
                  hit.to(torch::kFloat).mean().item().toDouble(),  // SYNC: interval
                  scaler.scale());
    }
  }

  const double mean_loss = loss_sum.item<double>() / static_cast<double>(applied);  // SYNC: true
  std::printf("applied %ld steps, skipped %ld, mean loss %.4f, mean grad norm %.3f\n",
              static_cast<long>(applied), static_cast<long>(skipped), mean_loss,
              gnorm_sum / static_cast<double>(applied));
  std::cout << "debug: head bias " << model->l3->bias << std::endl;  // SYNC: false
  return 0;
}
