// RUN: %check_torch_sync --compile-fixed %s torch-sync-coalesce %t -config="{CheckOptions: {torch-sync-coalesce.Fix: true}}" -- %mock_flags
#include <torch/torch.h>
#include <cstdio>
#include <iostream>

void floating_reads(int steps) {
  auto w = torch::randn({8}, torch::kCUDA);
  for (int step = 0; step < steps; ++step) {
    auto loss = (w * step).sum();
    auto accuracy = (w > 0).to(torch::kFloat).mean();
    float l = loss.item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: 3 `item()` reads of GPU tensors in a row (lines [[@LINE-1]], [[@LINE+5]], [[@LINE+6]]) each wait for the GPU; false dependency: the values can travel to the host in one copy (every iteration of the loop at line [[@LINE-4]]); stack them on the device and copy once with `torch::stack({...}).cpu()` (one wait instead of {{[0-9]+}}) [torch-sync-coalesce]
    // Floating values of known kinds: stack promotes them exactly, no cast.
    // CHECK-FIXES: auto host_values = torch::stack({loss.detach(), accuracy.detach(), w.abs().max().detach()}).cpu().to(torch::kDouble);
    // CHECK-FIXES-NEXT: float l = static_cast<float>(host_values.data_ptr<double>()[0]);
    std::printf("step %d\n", step);
    double a = accuracy.item<double>();
    std::cout << l << " " << a << " " << w.abs().max().item<float>() << "\n";
    // CHECK-FIXES: double a = host_values.data_ptr<double>()[1];
    // CHECK-FIXES-NEXT: std::cout << l << " " << a << " " << static_cast<float>(host_values.data_ptr<double>()[2]) << "\n";
  }
}

// A count among floating values travels as double (one cast: 2 kernels, stack and
// the cast, for 2 syncs saved).
int64_t mixed_reads() {
  auto logits = torch::randn({16, 4}, torch::kCUDA);
  auto target = torch::randint(4, {16}, torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA));
  auto loss = logits.sum();
  int64_t correct = logits.argmax(1).eq(target).sum().item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:55: warning: 3 `item()` reads of GPU tensors in a row
  // CHECK-FIXES: auto host_values = torch::stack({logits.argmax(1).eq(target).sum().to(torch::kDouble), loss.detach(), logits.mean().detach()}).cpu().to(torch::kDouble);
  // CHECK-FIXES-NEXT: int64_t correct = static_cast<int64_t>(host_values.data_ptr<double>()[0]);
  double total = loss.item<double>();
  // CHECK-FIXES: double total = host_values.data_ptr<double>()[1];
  double mean = logits.mean().item<double>();
  return correct + static_cast<int64_t>(total + mean);
}

// Integral values alone travel as int64 (bools and counts promote exactly).
int64_t integral_reads(torch::Tensor target) {
  auto logits = torch::randn({16, 4}, torch::kCUDA);
  auto hits = logits.argmax(1).eq(target.cuda());
  int64_t correct = hits.sum().item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: 2 `item()` reads of GPU tensors in a row
  // CHECK-FIXES: auto host_values = torch::stack({hits.sum(), hits.all()}).cpu().to(torch::kLong);
  bool all = hits.all().item<bool>();
  // CHECK-FIXES: bool all = static_cast<bool>(host_values.data_ptr<int64_t>()[1]);
  return correct + all;
}

// Two values of different kinds: the cast and the stack (2 kernels) would cost
// more than the one sync they save. A note, no fix.
int64_t two_mixed_reads() {
  auto logits = torch::randn({16, 4}, torch::kCUDA);
  int64_t best = logits.argmax().item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:34: warning: 2 `item()` reads of GPU tensors in a row (lines [[@LINE-1]], [[@LINE+1]]) each wait for the GPU; true dependency: line [[@LINE-1]]: through `best`, the value is returned to the caller; one copy still serves every read; stack them on the device and copy once with `torch::stack({...}).cpu()` (one wait instead of {{[0-9]+}}) (no fix: stacking these values needs 2 kernels (stack and 1 dtype casts of values of unknown or mixed kinds) to save 1 syncs; give the values one dtype, e.g. `.to(torch::kDouble)` where they are made) [torch-sync-coalesce]
  double total = logits.sum().item<double>();
  // CHECK-FIXES: double total = logits.sum().item<double>();
  return best + static_cast<int64_t>(total);
}

// --- negatives ------------------------------------------------------------------
float negatives(torch::Tensor maybe_gpu, bool flag) {
  auto x = torch::randn({8}, torch::kCUDA);
  auto host = torch::randn({8});
  // One read only.
  float a = x.sum().item<float>();
  x.mul_(2);                                   // a tensor changes in between
  float b = x.sum().item<float>();
  // Devices not known to match and no tensor variable to stack on: reported, no fix.
  float c = maybe_gpu.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-3]]:21: warning: 3 `item()` reads of tensors that may be on the GPU in a row (lines [[@LINE-3]], [[@LINE-1]], [[@LINE+2]]) each wait for the GPU; {{.*}}; stack them on the device and copy once with `torch::stack({...}).cpu()` (one wait instead of {{[0-9]+}}) (no fix: no tensor variable among them names the device to stack on) [torch-sync-coalesce]
  // CHECK-FIXES: float c = maybe_gpu.sum().item<float>();
  float d = x.mean().item<float>();
  // A CPU tensor.
  float e = host.sum().item<float>();
  if (flag)                                    // control flow ends a run
    return 0;
  float f = x.max().item<float>();
  float g = flag ? x.min().item<float>() : 0;  // evaluated conditionally
  // The second object uses a value read by the first: it cannot be hoisted.
  auto scaled = x * a;
  float h = scaled.sum().item<float>();
  auto y = x * h;
  float i = y.sum().item<float>();
  torch::nn::Linear net(8, 8);
  net->to(torch::kCUDA);                       // Module::to may move a read tensor: ends a run
  float j = x.sum().item<float>();
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.1));
  optimizer.step();                            // changes parameters: ends a run
  float k = x.mean().item<float>();
  auto done = torch::stack({x.sum(), x.mean()}).cpu();
  float l = done[0].item<float>();             // already coalesced: CPU reads
  float m = done[1].item<float>();
  return a + b + c + d + e + f + g + h + i + j + k + l + m;
}

// Macros and templates: never rewritten inside a macro body; templates once.
#define READ(t) (t).item<float>()
float macro_and_template_cases() {
  auto x = torch::randn({8}, torch::kCUDA);
  float a = READ(x.sum());
  // CHECK-MESSAGES: :[[@LINE-1]]:13: warning: 2 `item()` reads of GPU tensors in a row
  // CHECK-FIXES: float a = READ(x.sum());
  float b = READ(x.mean());
  // CHECK-FIXES: float b = READ(x.mean());
  return a + b;
}
// A tensor variable of the run names the device: the others are moved to it
// (a no-op when they already share it).
float unknown_devices(torch::Tensor maybe_gpu, torch::Tensor other) {
  auto m = maybe_gpu.mean();
  float a = m.item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: 3 `item()` reads of tensors that may be on the GPU in a row
  // CHECK-FIXES: auto host_values = torch::stack({m.detach(), other.sum().detach().to(m.device(), torch::kDouble), maybe_gpu.abs().mean().detach().to(m.device())}).cpu().to(torch::kDouble);
  // CHECK-FIXES-NEXT: float a = static_cast<float>(host_values.data_ptr<double>()[0]);
  float b = other.sum().item<float>();
  // CHECK-FIXES: float b = static_cast<float>(host_values.data_ptr<double>()[1]);
  float c = maybe_gpu.abs().mean().item<float>();
  return a + b + c;
}

template <int N> float two_reads() {
  auto x = torch::randn({N}, torch::kCUDA);
  float a = x.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: 2 `item()` reads of GPU tensors in a row
  // CHECK-FIXES: auto host_values = torch::stack({x.sum().detach(), x.mean().detach()}).cpu().to(torch::kDouble);
  float b = x.mean().item<float>();
  // CHECK-FIXES: float b = static_cast<float>(host_values.data_ptr<double>()[1]);
  return a + b;
}
template float two_reads<4>();
template float two_reads<8>();

// The second read's tensor is indexed by the first read's value (stored in a
// field, or a variable assigned between them): it cannot be evaluated before
// the run: it starts a new run (the norm and the first sum, with only a host
// declaration between), and a read after `i = 2` starts another.
struct Best {
  int64_t index = 0;
};
double dependent_reads(torch::Tensor scores, torch::Tensor rows) {
  auto s = scores.cuda();
  auto r = rows.cuda();
  Best best;
  best.index = s.argmax().item<int64_t>();
  double norm = r[best.index].norm().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:38: warning: 2 `item()` reads of GPU tensors in a row (lines [[@LINE-1]], [[@LINE+2]]) {{.*}} [torch-sync-coalesce]
  int64_t i = 0;
  double first = r[0].sum().item<double>();
  i = 2;
  double second = r[i].sum().item<double>();
  return norm + best.index + first + second;
}
