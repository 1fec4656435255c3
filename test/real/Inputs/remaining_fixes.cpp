// The fix forms not covered by the other real-header inputs, compiled against both
// header trees: mask-index mean, index-put with CPU indices, copies with a dtype or
// a tensor as target, copy_ from the host; the in-place device accumulation (with a
// factor, a division, a size_t factor, an integer count, an accumulated clip_grad_norm_),
// a clip_grad_norm_ logged at an interval,
// coalesced reads with and without a cast, and pinning a pageable source.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

torch::Tensor remaining(torch::Device device) {
  auto x = torch::randn({64}, torch::kCUDA);
  auto avg = x.index({x.isnan().logical_not()}).mean();
  // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: selecting with a boolean mask {{.*}}[torch-sync-mask-index]
  // CHECK-FIXES: auto avg = (torch::where(x.isnan().logical_not(), x, 0).sum() / x.isnan().logical_not().sum());
  auto host_idx = torch::randint(64, {8}, torch::kLong);
  auto y = x.index({host_idx});
  // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: a CPU index tensor used on a GPU tensor {{.*}}[torch-sync-index-put]
  // CHECK-FIXES: auto y = x.index({host_idx.to(x.device(), /*non_blocking=*/true)});
  auto host = torch::rand({16});
  auto d = host.to(device, torch::kHalf);
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `to(<GPU>)` {{.*}}[torch-sync-host-to-device]
  // CHECK-FIXES: auto d = host.to(device, torch::kHalf, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
  auto e = host.to(x);
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `to(<GPU>)` {{.*}}[torch-sync-host-to-device]
  // CHECK-FIXES: auto e = host.to(x, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
  auto dst = torch::empty({16}, torch::kCUDA);
  dst.copy_(host);
  // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: `copy_()` copies a host tensor {{.*}}[torch-sync-host-to-device]
  // CHECK-FIXES: dst.copy_(host, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
  return avg + y.sum() + d.sum() + e.sum() + dst.sum();
}

double accumulations(torch::nn::Linear &model, const std::vector<torch::Tensor> &batches, size_t scale) {
  double loss_sum = 0, mean = 0, scaled = 0, norm_sum = 0;
  int64_t hits = 0;
  for (const auto &x : batches) {
    auto loss = model->forward(x).pow(2).mean();
    loss.backward();
    loss_sum += loss.item<double>() * x.size(0);
    // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: `loss_sum` accumulates `item()` {{.*}}[torch-sync-deferred-accumulate]
    // CHECK-FIXES: loss_sum_on_device.add_(loss_sum_step, x.size(0));
    mean += loss.item<double>() / batches.size();
    // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `mean` accumulates `item()` {{.*}}[torch-sync-deferred-accumulate]
    // CHECK-FIXES: mean_on_device.add_(mean_step.to(torch::kDouble) / static_cast<int64_t>(batches.size()));
    scaled += scale * loss.item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: `scaled` accumulates `item()` {{.*}}[torch-sync-deferred-accumulate]
    // CHECK-FIXES: scaled_on_device.add_(scaled_step, static_cast<int64_t>(scale));
    hits += x.gt(0).sum().item<int64_t>();
    // CHECK-MESSAGES: :[[@LINE-1]]:27: warning: `hits` accumulates `item()` {{.*}}[torch-sync-deferred-accumulate]
    // CHECK-FIXES: hits_on_device.add_(hits_step);
    norm_sum += torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `norm_sum` accumulates the host norm {{.*}}[torch-sync-deferred-accumulate]
    // CHECK-FIXES: norm_sum_on_device.add_(norm_sum_step);
  }
  return loss_sum + mean + scaled + norm_sum + hits;
}

void norm_logged_at_interval(torch::nn::Linear &model, int steps) {
  for (int step = 0; step < steps; ++step) {
    model->forward(torch::randn({4, 8}, torch::kCUDA)).sum().backward();
    double grad_norm = torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: `clip_grad_norm_` {{.*}}[torch-sync-grad-norm]
    // CHECK-FIXES: torch::Tensor grad_norm = torch_syncfree_clip_grad_norm(model->parameters(), 1.0);
    if (step % 10 == 0)
      std::printf("norm %f\n", grad_norm);
    // CHECK-FIXES: std::printf("norm %f\n", grad_norm.item<double>() /* torch-syncfree: the norm, read where it is logged */);
  }
}

double coalesced_one_kind() {
  auto logits = torch::randn({16, 4}, torch::kCUDA);
  auto loss = logits.sum();
  float a = loss.item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: 2 `item()` reads of GPU tensors in a row {{.*}}[torch-sync-coalesce]
  // CHECK-FIXES: auto host_values = torch::stack({loss.detach(), logits.mean().detach()}).cpu().to(torch::kDouble);
  double b = logits.mean().item<double>();
  return a + b;
}

double coalesced_with_a_cast(const torch::Tensor &target) {
  auto logits = torch::randn({16, 4}, torch::kCUDA);
  auto labels = target.to(torch::kCUDA, /*non_blocking=*/true);
  int64_t c = logits.argmax(1).eq(labels).sum().item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:49: warning: 3 `item()` reads of GPU tensors in a row {{.*}}[torch-sync-coalesce]
  // CHECK-FIXES: auto host_values = torch::stack({logits.argmax(1).eq(labels).sum().to(torch::kDouble), logits.std().detach(), logits.norm().detach()}).cpu().to(torch::kDouble);
  // CHECK-FIXES-NEXT: int64_t c = static_cast<int64_t>(host_values.data_ptr<double>()[0]);
  double d = logits.std().item<double>();
  double e = logits.norm().item<double>();
  return c + d + e;
}

void pinned_sources(torch::Device device, int steps) {
  auto inputs = torch::randn({256, 8});
  // CHECK-FIXES: auto inputs = (torch::cuda::is_available() ? torch::randn({256, 8}).pin_memory() : torch::randn({256, 8}));
  auto table = torch::rand({64});
  // CHECK-FIXES: auto table = torch::rand({64}).pin_memory();
  for (int s = 0; s < steps; ++s) {
    auto x = inputs.narrow(0, s * 16, 16).to(device, true);
    // CHECK-MESSAGES: :[[@LINE-1]]:43: warning: a copy from pageable host memory {{.*}}[torch-sync-pageable-copy]
    auto t = table.to(torch::kCUDA);
    // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: `to(<GPU>)` copies a host tensor {{.*}}[torch-sync-host-to-device]
    // CHECK-FIXES: auto t = table.to(torch::kCUDA, /*non_blocking=*/true);
    std::printf("%d\n", static_cast<int>(x.size(0) + t.size(0)));
  }
}
