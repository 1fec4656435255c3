// The catalog's fix-its against the REAL LibTorch headers: every fixed line must
// compile with 1.13 and 2.11 (fixes use only APIs the headers declare).
#include <torch/torch.h>
#include <c10/core/Event.h>
#include <string>
#include <thread>
#include <vector>
// The clipping helper after the includes: per-parameter norms as LibTorch computes
// them (same last bits); the scaling is one multi-tensor kernel where declared:
// 2.11 has _foreach_mul_(list, Tensor), 1.13 not.
// CHECK-FIXES: static torch::Tensor torch_syncfree_clip_grad_norm(const std::vector<torch::Tensor> &parameters, double max_norm) {
// CHECK-FIXES: norms.push_back(g.norm(2));
// CHECK113-FIXES: {{^}}    g.mul_(coef);
// CHECK211-FIXES: {{^}}  at::_foreach_mul_(grads, coef);

torch::Tensor catalog(torch::nn::Linear &model, const std::vector<float> &host) {
  auto x = torch::randn({64}, torch::kCUDA);
  auto t = torch::tensor(host, torch::kCUDA);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `torch::tensor(<list>, <GPU options>)` {{.*}}[torch-sync-tensor-factory]
  // CHECK-FIXES: auto t = torch::tensor(host).to(torch::kCUDA, /*non_blocking=*/true);
  auto u = torch::tensor({1.0, 2.0}, torch::TensorOptions().dtype(torch::kDouble).device(torch::kCUDA));
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `torch::tensor(<list>, <GPU options>)` {{.*}}[torch-sync-tensor-factory]
  // CHECK-FIXES: auto u = torch::tensor({1.0, 2.0}, torch::TensorOptions().dtype(torch::kDouble)).to(torch::kCUDA, /*non_blocking=*/true);
  auto mask = x > 0;
  auto total = x.index({mask}).sum();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: selecting with a boolean mask {{.*}}[torch-sync-mask-index]
  // CHECK-FIXES: auto total = torch::where(mask, x, 0).sum();
  auto best = x.argmax();
  auto picked = x.index({best});
  // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: indexing with a 0-dim integer tensor {{.*}}[torch-sync-scalar-index]
  // CHECK-FIXES: auto picked = x.index({best.unsqueeze(0)}).squeeze(0);
  auto idx = torch::randint(64, {8}, torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA));
  x.index_put_({idx}, 0.0);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `index_put_` with integer indices {{.*}}[torch-sync-index-put]
  // CHECK-FIXES: x.index_put_({idx}, torch::scalar_tensor(0.0, x.options()));
  torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `clip_grad_norm_` {{.*}}[torch-sync-grad-norm]
  // Per-parameter norms as LibTorch computes them (same last bits); the scaling is one
  // multi-tensor kernel where declared: 2.11 has _foreach_mul_(list, Tensor), 1.13 not.
  // CHECK-FIXES: torch_syncfree_clip_grad_norm(model->parameters(), 1.0);
  auto nz = mask.nonzero();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `nonzero` on a GPU tensor {{.*}}[torch-sync-dynamic-shape]
  if (x.sum().is_nonzero())
    // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: `is_nonzero` on a GPU tensor {{.*}}[torch-sync-host-bool]
    return t;
  auto inv = torch::linalg_inv(torch::eye(4, torch::kCUDA));
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `linalg_inv` on a GPU tensor {{.*}}[torch-sync-checked-linalg]
  torch::cuda::synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `synchronize` blocks the host {{.*}}[torch-sync-explicit]
  return total + picked + u + nz.sum() + inv.sum();
}

// torch-sync-coalesce: one stacked copy. Values of one kind travel as they are
// (stack promotes them exactly); a count among floating values is cast to double
// (one kernel), offered only when stack + casts add no more kernels than the
// syncs removed. The reads of a fixed run are one finding: torch-sync-item does not
// report them again.
double coalesced_mixed() {
  auto scores = torch::randn({16, 4}, torch::kCUDA);
  auto target = torch::randint(4, {16}, torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA));
  int64_t correct = scores.argmax(1).eq(target).sum().item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:55: warning: 3 `item()` reads of GPU tensors in a row {{.*}}[torch-sync-coalesce]
  // CHECK-FIXES: auto host_values = torch::stack({scores.argmax(1).eq(target).sum().to(torch::kDouble), scores.sum().detach(), scores.mean().detach()}).cpu().to(torch::kDouble);
  // CHECK-FIXES-NEXT: int64_t correct = static_cast<int64_t>(host_values.data_ptr<double>()[0]);
  double total = scores.sum().item<double>();
  // CHECK-FIXES: double total = host_values.data_ptr<double>()[1];
  double mean = scores.mean().item<double>();
  return static_cast<double>(correct) + total + mean;
}

float coalesced_floating() {
  auto scores = torch::randn({16, 4}, torch::kCUDA);
  float mean = scores.mean().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: 2 `item()` reads of GPU tensors in a row {{.*}}[torch-sync-coalesce]
  // CHECK-FIXES: auto host_values = torch::stack({scores.mean().detach(), scores.std().detach()}).cpu().to(torch::kDouble);
  float spread = scores.std().item<float>();
  // CHECK-FIXES: float spread = static_cast<float>(host_values.data_ptr<double>()[1]);
  return mean + spread;
}

// Issue 25: a field of the program's own class, stored only by its constructor,
// is pinned there; the copy in the method's loop becomes non_blocking.
class FieldBatches {
public:
  FieldBatches() {
    for (int b = 0; b < 4; ++b)
      inputs_.push_back(torch::randn({8, 8}));
    // CHECK-FIXES: inputs_.push_back(torch::randn({8, 8}).pin_memory());
  }
  double epoch() {
    double total = 0;
    for (auto &x : inputs_) {
      auto on_gpu = x.to(torch::kCUDA);
      // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: `to(<GPU>)` copies a host tensor to the GPU {{.*}}so pin the elements of `inputs_` where they are stored (once, in the constructor; they are only read) [torch-sync-host-to-device]
      // CHECK-FIXES: auto on_gpu = x.to(torch::kCUDA, /*non_blocking=*/true);
      total += on_gpu.sum().item<double>();
      // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `total` accumulates `item()` every iteration{{.*}}[torch-sync-deferred-accumulate]
    }
    return total;
  }

private:
  std::vector<torch::Tensor> inputs_;
};

// Issue 43, item 3: syncs that depend on the version of the headers (their
// TORCH_VERSION_MAJOR/MINOR): on 1.13 an accumulating index_put_ range-checks its
// indices with item() and multinomial validates its probabilities with item(); on
// 2.11 neither waits. torch::save copies GPU tensors to the host on both. Item 11:
// a loop polling an event until it is done waits like synchronize().
void versioned(const c10::Event &done, const std::string &path) {
  auto x = torch::zeros({64}, torch::kCUDA);
  auto idx = torch::randint(64, {8}, torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA));
  x.index_put_({idx}, torch::ones({8}, torch::kCUDA), /*accumulate=*/true);
  // CHECK113-MESSAGES: :[[@LINE-1]]:5: warning: `index_put_` with `accumulate=true` on a GPU tensor range-checks the indices on the host (their max and min read with `item()`) in LibTorch 1.13 (the headers' version), so the host waits for the GPU; false dependency: {{.*}} [torch-sync-index-put]
  auto probs = torch::softmax(torch::rand({4, 10}, torch::kCUDA), -1);
  auto sample = probs.multinomial(1);
  // CHECK113-MESSAGES: :[[@LINE-1]]:23: warning: `multinomial` without replacement on a GPU tensor validates the probabilities with host `bool`s (`item()` inside `TORCH_CHECK`) in LibTorch 1.13 (the headers' version), so the host waits for the GPU; false dependency: {{.*}} [torch-sync-host-bool]
  torch::save(x, path);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `torch::save` of a GPU tensor copies it to the host first, a blocking copy that waits for all queued GPU work; true dependency: the file needs the values on the host; {{.*}} [torch-sync-device-to-host]
  while (!done.query())
    // CHECK-MESSAGES: :[[@LINE-1]]:11: warning: polling `Event::query` in a loop until the work is done blocks the host like `synchronize()` {{.*}}; intentional barrier: the tool cannot show that nothing after it needs the GPU's work (the return to callers the tool does not see){{.*}} [torch-sync-explicit]
    std::this_thread::yield();
}

// Issue 41: `value_or` evaluates its argument even when the optional holds a
// value. c10::optional is a class of its own on 1.13 and std::optional on 2.11;
// the conditional compiles on both.
int64_t cap_or_longest(c10::optional<int64_t> cap, const torch::Tensor &lengths) {
  int64_t n = cap.value_or(lengths.max().item<int64_t>());
  // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: the argument of `value_or` is evaluated even when `cap` holds a value, and its `item()` on a tensor that may be on the GPU makes the host wait for all queued GPU work; false dependency: {{.*}} [torch-sync-eager-fallback]
  // CHECK-FIXES: int64_t n = cap.has_value() ? *cap : lengths.max().item<int64_t>() /* torch-syncfree: read only when empty */;
  return n;
}

// Issue 41: a host copy of a tensor the loop does not change moves before the
// loop; the moved declaration compiles on both versions.
int64_t total_length(const torch::Tensor &lengths, int64_t steps) {
  int64_t total = 0;
  for (int64_t t = 0; t < steps; ++t) {
    auto host = lengths.cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: `cpu()` on a tensor that may be on the GPU {{.*}}`lengths` does not change in the loop at line [[@LINE-2]]: copy it once before the loop (one wait per call instead of one per iteration) [torch-sync-device-to-host]
    total += host.data_ptr<int64_t>()[t];
  }
  return total;
}
// CHECK-FIXES: auto host = lengths.cpu() /* torch-syncfree: copied once before the loop */;
// CHECK-FIXES-NEXT: for (int64_t t = 0; t < steps; ++t) {
// CHECK-FIXES: total += host.data_ptr<int64_t>()[t];

// Issue 41: element reads of a tensor the loop does not change read one host
// copy made before the loop.
int64_t longest_segment(const torch::Tensor &offsets, int64_t segments) {
  int64_t longest = 0;
  for (int64_t s = 0; s < segments; ++s) {
    int64_t length = offsets[s + 1].item<int64_t>() - offsets[s].item<int64_t>();
    // CHECK-MESSAGES: :[[@LINE-1]]:37: warning: `item()` on a tensor that may be on the GPU {{.*}}`offsets` does not change in the loop at line [[@LINE-2]]: copy it to the host once before the loop and read its elements there (one wait per call instead of one per read, 2 reads per iteration) [torch-sync-item]
    // CHECK-MESSAGES: :[[@LINE-2]]:66: warning: `item()` on a tensor that may be on the GPU {{.*}}; the fix is on the read at line [[@LINE-2]] [torch-sync-item]
    longest = std::max(longest, length);
  }
  return longest;
}
// CHECK-FIXES: auto offsets_host = offsets.cpu() /* torch-syncfree: copied once before the loop */;
// CHECK-FIXES-NEXT: for (int64_t s = 0; s < segments; ++s) {
// CHECK-FIXES-NEXT: int64_t length = offsets_host[s + 1].item<int64_t>() - offsets_host[s].item<int64_t>();

// Issue 41: the same tensor read twice, an element first and the whole tensor
// later: the copy moves before the read and serves both.
std::vector<int64_t> segment_ends(const torch::Tensor &lengths) {
  auto csum = lengths.cumsum(0);
  int64_t total = csum[-1].item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: `item()` on a tensor that may be on the GPU {{.*}}; `csum` is also copied to the host at line [[@LINE+3]] (`ends`): make that copy before this read and read the element from it (one wait fewer per call) [torch-sync-item]
  std::vector<int64_t> out;
  out.reserve(total);
  auto ends = csum.to(torch::kCPU);
  // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: `to(<CPU>)` on {{.*}} [torch-sync-device-to-host]
  auto view = ends.accessor<int64_t, 1>();
  for (int64_t i = 0; i < view.size(0); ++i)
    out.push_back(view[i]);
  return out;
}
// CHECK-FIXES: auto csum = lengths.cumsum(0);
// CHECK-FIXES-NEXT: auto ends = csum.to(torch::kCPU) /* torch-syncfree: one copy for both reads */;
// CHECK-FIXES-NEXT: int64_t total = ends[-1].item<int64_t>();

// Issue 41: a host value round-tripped through the GPU reads the host original.
int64_t longest_of(const std::vector<int64_t> &lengths) {
  auto lengths_cpu = torch::tensor(lengths);
  auto lengths_gpu = lengths_cpu.to(torch::kCUDA);
  // CHECK-MESSAGES: :[[@LINE-1]]:34: warning: `to(<GPU>)` copies a host tensor to the GPU {{.*}} [torch-sync-host-to-device]
  auto padded = torch::zeros({lengths_gpu.size(0), 8}, torch::kCUDA);
  return lengths_gpu.max().item<int64_t>() + lengths_gpu[0].item<int64_t>() + padded.size(1);
  // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: `item()` {{.*}} [torch-sync-item]
  // CHECK-MESSAGES: :[[@LINE-2]]:61: warning: `item()` {{.*}}; `lengths_gpu` is `lengths_cpu` copied to the device at line [[@LINE-5]]: read the element from `lengths_cpu` on the host (one wait fewer per call) [torch-sync-item]
}
// CHECK-FIXES: auto lengths_gpu = lengths_cpu.to(torch::kCUDA, /*non_blocking=*/true)
// CHECK-FIXES: return lengths_gpu.max().item<int64_t>() + lengths_cpu[0].item<int64_t>() + padded.size(1);

// Issue 43, item 6: a value read into a variable and checked by TORCH_CHECK is
// validated by it (the real macro hides the condition in `__builtin_expect`);
// a value used only in a check's message is a message.
int64_t checked_total(const torch::Tensor &x, bool ok) {
  auto n = x.sum().item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: `item()` on a tensor that may be on the GPU {{.*}}; true dependency: through `n`, the value is validated by `TORCH_CHECK(...)` on the host; validate on the device instead (`at::_assert_async(<condition>)` {{.*}} [torch-sync-item]
  TORCH_CHECK(n > 0, "empty input");
  float top = x.max().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: `item()` on a tensor that may be on the GPU {{.*}}; false dependency: through `top`, the value is only logged{{.*}} [torch-sync-item]
  TORCH_CHECK(ok, "bad max ", top);
  return n;
}
