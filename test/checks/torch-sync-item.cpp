// RUN: %check_torch_sync %s torch-sync-item %t -- %mock_flags
#include <torch/torch.h>
#include <cstdio>
#include <iostream>
#include <vector>

torch::Device pick_device() { return torch::cuda::is_available() ? torch::kCUDA : torch::kCPU; }

// --- positive: GPU tensors ---------------------------------------------------
void logged(torch::Tensor input) {
  auto x = torch::rand({8}, torch::device(torch::kCUDA));
  std::cout << "loss " << x.sum().item<float>() << "\n";
  // CHECK-MESSAGES: :[[@LINE-1]]:35: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; false dependency: the value is only logged; keep the value on the device as a 0-dim tensor and read it after the step or at a log interval [torch-sync-item]
  printf("%f\n", x.mean().item().toFloat());
  // CHECK-MESSAGES: :[[@LINE-1]]:27: warning: `item()` on a GPU tensor {{.*}}; false dependency: the value is only logged;
  float l = x.max().template item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: `item()` on a GPU tensor {{.*}}; false dependency: through `l`, the value is only logged;
  std::cerr << l;
}

float branches(torch::Tensor maybe_gpu, std::vector<float> &out) {
  if (maybe_gpu.item<float>())
    // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `item()` on a tensor that may be on the GPU copies {{.*}}; true dependency: the value decides an `if`; if the host must decide, decide on the device instead (`torch::where`, masks) or read the value less often [torch-sync-item]
    return 0.f;
  auto v = maybe_gpu.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: {{.*}}; true dependency: through `v`, the value decides an `if`;
  if (v > 0.5f)
    return v;
  int64_t n = maybe_gpu.argmax().item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:34: warning: {{.*}}; true dependency: through `n`, the value sizes an allocation;
  float *buffer = new float[n];
  out.push_back(maybe_gpu.mean().item<float>());
  // CHECK-MESSAGES: :[[@LINE-1]]:34: warning: {{.*}}; true dependency: the value is stored in a host container;
  for (int i = 0; i < maybe_gpu.sum().item<int>(); ++i)
    // CHECK-MESSAGES: :[[@LINE-1]]:39: warning: {{.*}}; true dependency: the value bounds a `for` loop (every iteration of the loop at line [[@LINE-1]]);
    buffer[i] = 0;
  // An index into a std::vector, as into an array (issue 43: not the `+=` it feeds).
  float picked = 0;
  picked += out[maybe_gpu.argmax().item<int64_t>()];
  // CHECK-MESSAGES: :[[@LINE-1]]:36: warning: {{.*}}; true dependency: the value is used as an index;
  if (picked > 1)
    return picked;
  return maybe_gpu.max().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:26: warning: {{.*}}; true dependency: the value is returned to the caller;
}

double metrics(torch::Tensor logits, torch::Tensor target) {
  double running = 0;
  int64_t correct = 0;
  for (int step = 0; step < 10; ++step) {
    auto loss = torch::mse_loss(logits, target);
    running += loss.item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: {{.*}}; false dependency: the value is accumulated into a host metric (every iteration of the loop at line [[@LINE-3]]);
    correct += logits.argmax(1).eq(target).sum().item<int64_t>();
    // CHECK-MESSAGES: :[[@LINE-1]]:50: warning: {{.*}}; false dependency: the value is accumulated into a host metric (every iteration of the loop at line [[@LINE-5]]);
    logits.item();
    // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: {{.*}}; false dependency: the value is unused (every iteration of the loop at line [[@LINE-7]]);
    auto scaled = logits * loss.item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: {{.*}}; false dependency: the value goes straight back into a tensor operation (every iteration of the loop at line [[@LINE-9]]);
  }
  auto s = at::_local_scalar_dense(logits.sum());
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `_local_scalar_dense` on a tensor that may be on the GPU {{.*}}; false dependency: through `s`, the value is only logged;
  std::cout << s.toDouble();
  return running + correct;
}

void device_variables() {
  torch::Device device = pick_device();
  auto on_device = torch::ones({4}).to(device);
  float v = on_device.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `item()` on a tensor that may be on the GPU {{.*}}; false dependency: the value is stored in `v` but never read
  torch::Device gpu(torch::kCUDA);
  auto g = torch::zeros({2}).to(gpu);
  printf("%f", g.sum().item<float>());
  // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: `item()` on a GPU tensor
  auto d = torch::zeros({2}, torch::TensorOptions().dtype(torch::kFloat).device("cuda:0"));
  printf("%f", d.sum().item<float>());
  // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: `item()` on a GPU tensor
}

void lambdas_and_ternary_devices(bool use_gpu) {
  torch::Device device = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  auto t = torch::zeros({3}, torch::device(device));
  auto report = [&]() { std::cout << t.sum().item<float>(); };
  // CHECK-MESSAGES: :[[@LINE-1]]:46: warning: `item()` on a tensor that may be on the GPU {{.*}}; false dependency: the value is only logged;
  auto host = torch::ones({2});
  auto check = [host]() { return host.sum().item<float>() > 0; }; // captured CPU tensor
  auto either = use_gpu ? host.cuda() : host;
  printf("%f", either.sum().item<float>());
  // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `item()` on a tensor that may be on the GPU
  report();
  check();
}

// --- negative: CPU tensors, not Tensor::item, templates, macros ---------------
void negatives() {
  auto a = torch::rand({1});
  float x = a.item<float>();                  // made on the CPU: no sync
  auto b = torch::rand({3}).cuda().cpu();
  float y = b.sum().item<float>();            // moved back to the CPU
  auto c = torch::zeros({3}, torch::kCPU);
  double z = c.mean().item<double>();
  auto opts = torch::TensorOptions().dtype(torch::kFloat);
  auto e = torch::ones({3}, opts);            // options without a device: CPU
  std::cout << e.sum().item<float>() << x << y << z;
  std::vector<float> host(4);
  auto blob = torch::from_blob(host.data(), {4});
  std::cout << blob.sum().item<float>();      // from_blob: CPU memory
  torch::Scalar scalar(1.0);
  std::cout << scalar.toFloat();              // a Scalar is already on the host
  bool flag = torch::rand({1}, torch::kCUDA).gt(0.5).any().item<bool>(); // torch-sync-host-bool's
}

template <typename T> T generic(const T &t) { return t.template item<float>(); }
// A dependent object: the template's own text is not a tensor yet.

#define READ_ITEM(t) (t).item<float>()
float in_macro(torch::Tensor t) {
  return READ_ITEM(t);
  // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: `item()` on a tensor that may be on the GPU {{.*}}; true dependency: the value is returned to the caller;
}

#if 0
float disabled(torch::Tensor t) { return t.item<float>(); }
#endif

// NOLINTNEXTLINE(torch-sync-item)
float silenced(torch::Tensor t) { return t.item<float>(); }
float silenced2(torch::Tensor t) { return t.item<float>(); } // NOLINT(torch-sync-item)
// NOLINTBEGIN(torch-sync-item)
float silenced3(torch::Tensor t) { return t.item<float>(); }
// NOLINTEND(torch-sync-item)

// A value passed back to LibTorch: an integer parameter is a size, an index or a
// dimension the host needs; a Scalar could have stayed on the device.
torch::Tensor sizes_and_scalars(torch::Tensor x, torch::Tensor lengths, torch::Tensor scale) {
  auto g = x.cuda();
  auto l = lengths.cuda();
  auto first = g.narrow(0, l.item<int64_t>(), 2);
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: `item()` on a GPU tensor {{.*}}; true dependency: the value is a size, index or dimension argument (`start` of `narrow`); {{.*}}[torch-sync-item]
  auto scaled = g.mul(scale.cuda().item<float>());
  // CHECK-MESSAGES: :[[@LINE-1]]:36: warning: `item()` on a GPU tensor {{.*}}; false dependency: the value goes straight back into a tensor operation; {{.*}}[torch-sync-item]
  auto sliced = g.slice(0, l.item<int64_t>());
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: `item()` on a GPU tensor {{.*}}; true dependency: the value is a size, index or dimension argument (`start` of `slice`); {{.*}}[torch-sync-item]
  return first + scaled + sliced;
}

// A self-update (an exponential moving average) reads the old value to make the
// new one: followed through the variable's other uses, named once.
void moving_average(int steps) {
  auto loss = torch::randn({}, torch::kCUDA);
  double running = 0;
  for (int step = 0; step < steps; ++step)
    running = 0.9 * running + 0.1 * loss.item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:42: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; false dependency: through `running`, the value is only logged (every iteration of the loop at line [[@LINE-2]]);
  std::cout << running;
}

// Only the reads a store reaches are its uses (the value-flow core): a read
// after another store replaces the value, or before the store, does not decide.
void replaced_before_the_branch(int steps) {
  auto loss = torch::randn({}, torch::kCUDA);
  for (int step = 0; step < steps; ++step) {
    float value = loss.item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: `item()` on a GPU tensor {{.*}}; false dependency: through `value`, the value is only logged (every iteration of the loop at line [[@LINE-2]]);
    std::printf("%f\n", value);
    value = 0;
    if (value > 1)
      break;
  }
}
void branch_before_the_store() {
  auto loss = torch::randn({}, torch::kCUDA);
  float value = 0;
  if (value > 1)
    return;
  value = loss.item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: `item()` on a GPU tensor {{.*}}; false dependency: through `value`, the value is only logged;
  std::printf("%f\n", value);
}
// The next iteration's branch reads the stored value: it decides.
void branch_next_iteration(int steps) {
  auto loss = torch::randn({}, torch::kCUDA);
  float value = 0;
  for (int step = 0; step < steps; ++step) {
    if (value > 1)
      break;
    value = loss.item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `item()` on a GPU tensor {{.*}}; true dependency: through `value`, the value decides an `if` (every iteration of the loop at line [[@LINE-4]]);
    std::printf("%f\n", value);
  }
}

// Found by the blind programs of issue 43 (beam search): an integer read used as
// the index of `t[i]` is an index the host passes (kept on the device it would
// sync again, as a scalar index), not a value that goes back into a tensor
// operation as `t * s` does.
torch::Tensor best_row(torch::Tensor scores, torch::Tensor tokens) {
  const int64_t best = scores.argmax().item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:40: warning: `item()` on a tensor that may be on the GPU {{.*}}; true dependency: through `best`, the value is used as an index; {{.*}} [torch-sync-item]
  return tokens[best] * 2;
}
torch::Tensor scaled_by_max(torch::Tensor scores, torch::Tensor tokens) {
  const double s = scores.max().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: `item()` on a tensor that may be on the GPU {{.*}}; false dependency: through `s`, the value goes straight back into a tensor operation; {{.*}} [torch-sync-item]
  return tokens * s;
}

// Issue 41: a sum the loop itself reads to decide (a budget) needs every
// iteration's value: a true dependency, not a metric. A sum read only after
// the loop stays a deferrable metric (metrics() above).
int64_t within_budget(const torch::Tensor &sizes, int64_t budget) {
  int64_t used = 0, taken = 0;
  for (int64_t i = 0; i < 8; ++i) {
    used += sizes.narrow(0, i, 1).sum().item<int64_t>();
    // CHECK-MESSAGES: :[[@LINE-1]]:41: warning: `item()` on a tensor that may be on the GPU {{.*}}; true dependency: through `used`, the value decides an `if` (every iteration of the loop at line [[@LINE-2]]);
    if (used > budget)
      break;
    ++taken;
  }
  return taken;
}
