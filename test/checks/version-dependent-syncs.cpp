// Issue 43, item 3: syncs that depend on the LibTorch version the unit is
// compiled against, read from the headers' TORCH_VERSION_MAJOR/MINOR (the mock's
// <torch/version.h>: 2.11, or 1.13 with -DMOCK_LIBTORCH_1_13). On 1.13 an
// accumulating index_put_ range-checks its indices with item() and multinomial
// without replacement validates its probabilities with item(); 2.x checks both
// on the device. torch::save copies GPU tensors to the host on both.
// RUN: %check_torch_sync --check-prefix=CHECK,CHECK211 %s 'torch-sync-index-put,torch-sync-host-bool,torch-sync-device-to-host' %t -- %mock_flags
// RUN: %check_torch_sync --check-prefix=CHECK,CHECK113 %s 'torch-sync-index-put,torch-sync-host-bool,torch-sync-device-to-host' %t -- %mock_flags -DMOCK_LIBTORCH_1_13
#include <torch/torch.h>
#include <memory>
#include <string>
#include <vector>

void accumulate(torch::Tensor values, bool add) {
  auto x = torch::zeros({64}, torch::kCUDA);
  auto idx = torch::randint(64, {8}, torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA));
  x.index_put_({idx}, values, /*accumulate=*/true);
  // CHECK113-MESSAGES: :[[@LINE-1]]:5: warning: `index_put_` with `accumulate=true` on a GPU tensor range-checks the indices on the host (their max and min read with `item()`) in LibTorch 1.13 (the headers' version), so the host waits for the GPU; false dependency: the result does not need the host: only LibTorch's range check reads the indices; with one 1-D index tensor on dimension 0 and values of the indexed shape, `x.index_add_(0, idx, values)` accumulates without the host check (its atomic adds are not deterministic); LibTorch 2.x checks the range on the device [torch-sync-index-put]
  for (int step = 0; step < 4; ++step) {
    auto y = x.index_put({idx}, values, true);
    // CHECK113-MESSAGES: :[[@LINE-1]]:16: warning: `index_put` with `accumulate=true` on a GPU tensor range-checks the indices on the host {{.*}} in LibTorch 1.13 (the headers' version), so the host waits for the GPU; false dependency: {{.*}} (every iteration of the loop at line [[@LINE-2]]); {{.*}} [torch-sync-index-put]
  }
  // Negatives on every version: no accumulation (the scatter kernel checks on
  // the device), an accumulate flag the tool cannot evaluate, a CPU target, a
  // boolean mask (nonzero, not a range check).
  x.index_put_({idx}, values);
  x.index_put_({idx}, values, /*accumulate=*/false);
  x.index_put_({idx}, values, add);
  auto host = torch::zeros({64});
  host.index_put_({torch::randint(64, {8}, torch::kLong)}, values, true);
  x.index_put_({x > 0}, values, true);
  // A CPU index on a GPU tensor is the blocking copy of the index, on every version.
  auto host_idx = torch::randint(64, {8}, torch::kLong);
  x.index_put_({host_idx}, values, true);
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: a CPU index tensor used on a GPU tensor is copied to the GPU with a blocking copy; {{.*}} [torch-sync-index-put]
  // CHECK-FIXES: x.index_put_({host_idx.to(x.device(), /*non_blocking=*/true)}, values, true);
  x.index_add_(0, idx, values); // the remedy
}

void sampling(torch::Tensor logits, bool replace) {
  auto probs = torch::softmax(logits.to(torch::kCUDA), -1);
  auto one = probs.multinomial(1);
  // CHECK113-MESSAGES: :[[@LINE-1]]:20: warning: `multinomial` without replacement on a GPU tensor validates the probabilities with host `bool`s (`item()` inside `TORCH_CHECK`) in LibTorch 1.13 (the headers' version), so the host waits for the GPU; false dependency: the samples do not need the host: only LibTorch's validation reads the probabilities; sample the way 1.13 does after its check, without it: `(p / torch::empty_like(p).exponential_(1)).argmax(-1, true)` for one sample, `std::get<1>((p / torch::empty_like(p).exponential_(1)).topk(n))` for n (invalid probabilities then go unreported); LibTorch 2.x validates on the device [torch-sync-host-bool]
  auto four = torch::multinomial(probs, 4, /*replacement=*/false);
  // CHECK113-MESSAGES: :[[@LINE-1]]:15: warning: `multinomial` without replacement on a GPU tensor validates the probabilities with host `bool`s {{.*}} [torch-sync-host-bool]
  // Negatives on every version: with replacement (1.13 samples in a kernel
  // that asserts on the device), an unknown flag, CPU probabilities, the remedy.
  auto drawn = probs.multinomial(4, /*replacement=*/true);
  auto maybe = probs.multinomial(4, replace);
  auto cpu = torch::softmax(torch::randn({10}), -1).multinomial(1);
  auto gumbel = (probs / torch::empty_like(probs).exponential_(1)).argmax(-1, true);
}

// torch::save copies each GPU tensor to the host first: on every version.
struct Net : torch::nn::Module {};
void checkpoint(const std::string &path, int epochs) {
  auto weights = torch::randn({16}, torch::kCUDA);
  torch::save(weights, path);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `torch::save` of a GPU tensor copies it to the host first, a blocking copy that waits for all queued GPU work; true dependency: the file needs the values on the host; keep it where it waits once (a checkpoint needs the values); in a training loop, save at an interval [torch-sync-device-to-host]
  torch::nn::Linear model(16, 4);
  model->to(torch::kCUDA);
  std::vector<torch::Tensor> state = {weights, weights * 2};
  for (int epoch = 0; epoch < epochs; ++epoch) {
    torch::save(model, path);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `torch::save` of a module that may be on the GPU copies every parameter and buffer to the host first, a blocking copy each; the first waits for all queued GPU work; true dependency: the file needs the values on the host (every iteration of the loop at line [[@LINE-2]]); save every N steps or once after the loop, not every iteration [torch-sync-device-to-host]
    torch::save(state, path);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `torch::save` of tensors on the GPU copies each tensor to the host first, a blocking copy each; the first waits for all queued GPU work; true dependency: {{.*}} (every iteration of the loop at line [[@LINE-4]]); save every N steps or once after the loop, not every iteration [torch-sync-device-to-host]
  }
  auto net = std::make_shared<Net>();
  torch::save(net, path);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `torch::save` of a module that may be on the GPU copies every parameter and buffer to the host first{{.*}} [torch-sync-device-to-host]
  // Negatives: CPU tensors, a module built here that never leaves the CPU (or is
  // only moved to a CPU device), a module moved to the CPU right before the save.
  torch::save(torch::randn({16}), path);
  torch::nn::Linear cpu_model(16, 4);
  cpu_model->forward(torch::randn({2, 16}));
  torch::save(cpu_model, path);
  torch::Device host(torch::kCPU);
  torch::nn::Linear host_model(16, 4);
  host_model->to(host);
  torch::save(host_model, path);
  model->to(torch::kCPU);
  torch::save(model, path);
}
