// RUN: %check_torch_sync %s torch-sync-call-in-loop %t -- %mock_flags
// A call in a loop to a function of this file that makes the host wait is
// reported at the call, with a note where the callee waits. The callee is read
// with its parameters bound to the call's arguments.
#include <torch/torch.h>
#include <cstdio>
#include <iostream>

static void log_metrics(const torch::Tensor &logits, int step) {
  std::printf("step %d max %f\n", step, logits.max().item<float>());
}
static float batch_loss(const torch::Tensor &logits) {
  return logits.sum().item<float>();
}
static void report(const torch::Tensor &logits, int step) { log_metrics(logits, step); }
static torch::Tensor device_only(const torch::Tensor &x) { return x * 2; }
static void wait_all() { torch::cuda::synchronize(); }

float training(int steps, torch::Tensor maybe_gpu) {
  auto w = torch::randn({8}, torch::kCUDA);
  auto host = torch::randn({8});
  float total = 0;
  for (int step = 0; step < steps; ++step) {
    auto logits = w * step;
    log_metrics(logits, step);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: the call to `log_metrics` makes the host wait for the GPU (`item` on a GPU tensor at line 10); false dependency: in the callee, the value is only logged (every iteration of the loop at line [[@LINE-3]]); let the callee return device tensors and read them after the loop or at a log interval [torch-sync-call-in-loop]
    // CHECK-MESSAGES: :10:41: note: the host waits here
    total += batch_loss(logits);
    // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: the call to `batch_loss` makes the host wait for the GPU (`item` on a GPU tensor at line 13); false dependency: in the callee, returned by `batch_loss`, the value is summed into `total`, which the function returns: its caller needs the total once, not each read (every iteration of the loop at line [[@LINE-6]]); let the callee return device tensors and read them after the loop or at a log interval [torch-sync-call-in-loop]
    // CHECK-MESSAGES: :13:10: note: the host waits here
    report(logits, step);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: the call to `report` makes the host wait for the GPU (`item` on a GPU tensor at line 10 through `log_metrics`)
    // CHECK-MESSAGES: :10:41: note: the host waits here
    report(maybe_gpu, step);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: the call to `report` makes the host wait for the GPU (`item` on a tensor that may be on the GPU at line 10 through `log_metrics`)
    // CHECK-MESSAGES: :10:41: note: the host waits here
    wait_all();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: the call to `wait_all` makes the host wait for the GPU (`synchronize` at line 17); true dependency: the callee needs GPU results on the host
    // CHECK-MESSAGES: :17:26: note: the host waits here
    auto print_it = [&](const torch::Tensor &t) { std::cout << t.sum().item<float>(); };
    print_it(logits);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: the call to the lambda makes the host wait for the GPU (`item` on a GPU tensor at line [[@LINE-2]])
    // CHECK-MESSAGES: :[[@LINE-3]]:64: note: the host waits here
  }
  return total;
}

// --- negatives ------------------------------------------------------------------
void negatives(int steps) {
  auto w = torch::randn({8}, torch::kCUDA);
  auto host = torch::randn({8});
  for (int step = 0; step < steps; ++step) {
    log_metrics(host * step, step);           // a CPU tensor: the callee does not wait
    auto y = device_only(w);                   // no sync in the callee
    std::cout << w.sum().item<float>();        // a direct sync: the catalog checks report it
  }
  torch::nn::Linear net(8, 8);
  for (int step = 0; step < steps; ++step)
    net->to(torch::kCUDA);                     // Module::to: LibTorch's own, not followed
  auto pinned = w.to(torch::kCUDA, /*non_blocking=*/true);
  for (int step = 0; step < steps; ++step)
    device_only(pinned);                       // an already-async copy: no sync in the callee
  log_metrics(w, 0);                           // not in a loop
}

// Macros and templates.
#define LOG_ALL(t) log_metrics(t, 0)
template <int N> void repeat_log(const torch::Tensor &t) {
  for (int i = 0; i < N; ++i)
    log_metrics(t, i);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: the call to `log_metrics` makes the host wait for the GPU (`item` on a tensor that may be on the GPU at line 10)
  // CHECK-MESSAGES: :10:41: note: the host waits here
}
template void repeat_log<1>(const torch::Tensor &);
template void repeat_log<2>(const torch::Tensor &);
void macro_case() {
  auto w = torch::randn({8}, torch::kCUDA);
  for (int i = 0; i < 2; ++i)
    LOG_ALL(w);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: the call to `log_metrics` makes the host wait for the GPU (`item` on a GPU tensor at line 10)
  // CHECK-MESSAGES: :10:41: note: the host waits here
}

// A blocking copy to the host inside the callee is a wait too (issue 13: a sample
// written to a file every epoch was missed); the same helper given a CPU tensor, or
// copying with non_blocking, is not reported.
void save_image(const torch::Tensor &image) {
  auto host = image.detach().to(torch::kCPU).contiguous();
  std::cout << host.data_ptr<float>()[0];
}
void save_async(const torch::Tensor &image) {
  auto host = image.to(torch::kCPU, /*non_blocking=*/true);
  std::cout << host.data_ptr<float>()[0];
}
void copies_in_callees() {
  auto gpu = torch::randn({8}, torch::kCUDA);
  auto cpu = torch::randn({8});
  for (int epoch = 0; epoch < 3; ++epoch) {
    save_image(gpu);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: the call to `save_image` makes the host wait for the GPU (`to(<CPU>)` on a GPU tensor at line [[@LINE-12]]); true dependency: in the callee, through `host`, the host reads the tensor's memory (every iteration of the loop at line [[@LINE-2]]); move the host decision out of the loop or onto the device [torch-sync-call-in-loop]
    // CHECK-MESSAGES: :[[@LINE-13]]:15: note: the host waits here
    save_image(cpu);
    save_async(gpu);
  }
}

// The call is as necessary as the callee's most necessary wait: a logged read
// first and a read that decides later make the call a true dependency.
int64_t step_until_done(const torch::Tensor &state) {
  std::cout << state.sum().item<float>();
  return state.argmax().item<int64_t>() == 3 ? 1 : 0;
}
void decode_all() {
  auto state = torch::randn({8}, torch::kCUDA);
  int64_t done = 0;
  for (int i = 0; i < 4; ++i)
    done += step_until_done(state);
  // CHECK-MESSAGES: :[[@LINE-1]]:13: warning: the call to `step_until_done` makes the host wait for the GPU (`item` on a GPU tensor at line [[@LINE-7]]); true dependency: in the callee, the value chooses a branch of `?:`
  // CHECK-MESSAGES: :[[@LINE-8]]:10: note: the host waits here
  std::cout << done;
}

// A callee that only accumulates a metric returns it: the caller's use of the
// result decides the call's class (a decision per epoch: true; printed: false).
struct EpochStats {
  double loss = 0;
};
EpochStats run_epoch(const torch::Tensor &losses) {
  EpochStats stats;
  for (int b = 0; b < 4; ++b)
    stats.loss += losses[b].item<double>();
  return stats;
}
void epochs(double lr) {
  auto losses = torch::randn({4}, torch::kCUDA);
  for (int epoch = 0; epoch < 3; ++epoch) {
    auto stats = run_epoch(losses);
    // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: the call to `run_epoch` makes the host wait for the GPU (`item` on a GPU tensor at line [[@LINE-7]]); true dependency: the callee's result carries the value back: through `stats`, the value decides an `if`
    // CHECK-MESSAGES: :[[@LINE-8]]:19: note: the host waits here
    if (stats.loss > 1.0)
      lr *= 0.5;
  }
  for (int epoch = 0; epoch < 3; ++epoch) {
    auto stats = run_epoch(losses);
    // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: the call to `run_epoch` makes the host wait for the GPU (`item` on a GPU tensor at line [[@LINE-14]]); false dependency: in the callee, the value is accumulated into a host metric
    // CHECK-MESSAGES: :[[@LINE-15]]:19: note: the host waits here
    std::cout << stats.loss;
  }
  std::cout << lr;
}

// Every name torch-sync-checked-linalg reports is a sync for the other checks
// too (one list, ApiFacts' CheckedLinalg trait): linalg_lu_factor was not.
static torch::Tensor lu_of(const torch::Tensor &a) { return std::get<0>(torch::linalg_lu_factor(a)); }
void factorise_each(const torch::Tensor &batch) {
  auto a = torch::randn({4, 4}, torch::kCUDA);
  for (int i = 0; i < 3; ++i)
    lu_of(a + i);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: the call to `lu_of` makes the host wait for the GPU (`linalg_lu_factor` on a GPU tensor at line [[@LINE-5]]); true dependency: the callee needs GPU results on the host (every iteration of the loop at line [[@LINE-2]])
  // CHECK-MESSAGES: :[[@LINE-6]]:73: note: the host waits here
}

#include <chrono>

// Issue 43, item 6: a timer's synchronize in the callee is a deliberate barrier
// (torch-sync-explicit leaves it alone): the copy that makes the callee wait is
// cited instead; a callee whose only wait is the timer's is an intentional barrier.
double timed_step(torch::Tensor &w, const torch::Tensor &x) {
  auto start = std::chrono::steady_clock::now();
  w.add_(x);
  torch::cuda::synchronize();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  auto host = w.to(torch::kCPU);
  if (host[0].item<float>() > 1.0f)
    std::puts("large");
  return ms;
}
double timed_only(torch::Tensor &w, const torch::Tensor &x) {
  auto start = std::chrono::steady_clock::now();
  w.add_(x);
  torch::cuda::synchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}
void timed_training(torch::Tensor w, const torch::Tensor &x, int steps) {
  double total = 0;
  for (int i = 0; i < steps; ++i)
    total += timed_step(w, x);
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: the call to `timed_step` makes the host wait for the GPU (`to(<CPU>)` on a tensor that may be on the GPU at line [[@LINE-15]]); true dependency: in the callee, through `host`, the host reads the tensor's memory (every iteration of the loop at line [[@LINE-2]]); move the host decision out of the loop or onto the device [torch-sync-call-in-loop]
  // CHECK-MESSAGES: :[[@LINE-16]]:15: note: the host waits here
  for (int i = 0; i < steps; ++i)
    total += timed_only(w, x);
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: the call to `timed_only` makes the host wait for the GPU (`synchronize` at line [[@LINE-11]]); intentional barrier: in the callee, it brackets a timer or the release of a buffer (every iteration of the loop at line [[@LINE-2]]); for timing, CUDA events measure without stalling the host [torch-sync-call-in-loop]
  // CHECK-MESSAGES: :[[@LINE-12]]:3: note: the host waits here
  std::printf("%f\n", total);
}

// A range-for's range and a for's init run once, before the loop: no finding
// for the loop (the waits inside are torch-sync-item's, once).
static std::vector<float> host_values(const torch::Tensor &t) {
  std::vector<float> out;
  out.push_back(t.max().item<float>());
  return out;
}
static int count_of(const torch::Tensor &t) { return static_cast<int>(t.sum().item<float>()); }
float once_before_the_loop() {
  auto t = torch::ones({4}, torch::kCUDA);
  float total = 0;
  for (float v : host_values(t))
    total += v;
  for (int i = 0, n = count_of(t); i < n; ++i)
    total += i;
  return total;
}
