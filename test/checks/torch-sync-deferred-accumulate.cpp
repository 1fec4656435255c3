// RUN: %check_torch_sync %s torch-sync-deferred-accumulate %t -- %mock_flags
#include <torch/torch.h>
#include <c10/cuda/CUDAGuard.h>
#include <cstdio>
#include <vector>

void observe(double &value);

// --- applied -----------------------------------------------------------------
void epoch_metrics(torch::Tensor logits, torch::Tensor target) {
  for (int epoch = 0; epoch < 3; ++epoch) {
    double running = 0;
    int64_t correct = 0;
    for (int step = 0; step < 10; ++step) {
      auto loss = torch::mse_loss(logits, target);
      running += loss.item<double>() * logits.size(0);
      // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: `running` accumulates `item()` every iteration, so every iteration waits for the GPU; false dependency: the sum is read only after the loop (every iteration of the loop at line [[@LINE-3]]); accumulate on the device and read the total once after the loop [torch-sync-deferred-accumulate]
      correct += logits.argmax(1).eq(target).sum().item<int64_t>();
      // CHECK-MESSAGES: :[[@LINE-1]]:52: warning: `correct` accumulates `item()`
      if (step == 7)
        break; // break reaches the statement after the loop: still applied
    }
    std::printf("%f %ld\n", running, (long)correct);
  }
}
// CHECK-FIXES:      double running = 0;
// CHECK-FIXES-NEXT: int64_t correct = 0;
// CHECK-FIXES-NEXT: torch::Tensor running_on_device; // running, summed on the device
// CHECK-FIXES-NEXT: torch::Tensor correct_on_device; // correct, summed on the device
// CHECK-FIXES-NEXT: for (int step = 0; step < 10; ++step) {
// CHECK-FIXES-NEXT: auto loss = torch::mse_loss(logits, target);
// CHECK-FIXES-NEXT: {
// CHECK-FIXES-NEXT:   auto running_step = loss.detach();
// CHECK-FIXES-NEXT:   if (running_on_device.defined())
// CHECK-FIXES-NEXT:     running_on_device.add_(running_step, logits.size(0));
// CHECK-FIXES-NEXT:   else
// CHECK-FIXES-NEXT:     running_on_device = running_step.to(torch::kDouble) * logits.size(0);
// CHECK-FIXES-NEXT: }
// CHECK-FIXES:      {
// CHECK-FIXES-NEXT:   auto correct_step = logits.argmax(1).eq(target).sum();
// CHECK-FIXES-NEXT:   if (correct_on_device.defined())
// CHECK-FIXES-NEXT:     correct_on_device.add_(correct_step);
// CHECK-FIXES-NEXT:   else
// CHECK-FIXES-NEXT:     correct_on_device = correct_step.to(torch::kLong, /*non_blocking=*/false, /*copy=*/true);
// CHECK-FIXES-NEXT: }
// CHECK-FIXES:      }
// CHECK-FIXES-NEXT: if (running_on_device.defined())
// CHECK-FIXES-NEXT:   running += running_on_device.item<double>(); /* NOLINT(torch-sync-*): torch-syncfree, one read after the loop */
// CHECK-FIXES-NEXT: if (correct_on_device.defined())
// CHECK-FIXES-NEXT:   correct += correct_on_device.item<int64_t>(); /* NOLINT(torch-sync-*): torch-syncfree, one read after the loop */
// CHECK-FIXES-NEXT: std::printf("%f %ld\n", running, (long)correct);

// The summand may call anything: it is still evaluated once, in the same place.
struct Net {
  torch::Tensor forward(const torch::Tensor &x) { return x * 2; }
};
int64_t counts_through_a_call(Net &net, const torch::Tensor &labels, int steps) {
  int64_t hits = 0;
  for (int i = 0; i < steps; ++i) {
    hits += net.forward(labels).eq(labels).sum().item<int64_t>();
    // CHECK-MESSAGES: :[[@LINE-1]]:50: warning: `hits` accumulates `item()` every iteration
    // CHECK-FIXES: auto hits_step = net.forward(labels).eq(labels).sum();
  }
  return hits;
}

// A sum of a bool or integer tensor is int64 and never requires grad: added as it
// is. A sum of a tensor of unknown dtype may be floating and require grad: detached
// and converted to int64 (`item<int64_t>()` truncated it too).
int64_t counts_of_unknown_dtype(const std::vector<torch::Tensor> &masks) {
  int64_t total = 0;
  for (const auto &m : masks) {
    total += m.sum().item<int64_t>();
    // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: `total` accumulates `item()` every iteration
    // CHECK-FIXES: auto total_step = m.sum().detach();
    // CHECK-FIXES: total_on_device.add_(total_step.to(torch::kLong));
  }
  return total;
}

// A divided summand keeps the host's division in the metric's dtype; a factor of
// another arithmetic type is cast to one LibTorch's Scalar takes unambiguously;
// `n * t.item()` and a parenthesised summand; `-=` flushes with `-=`.
double divided_and_scaled(const std::vector<torch::Tensor> &losses, size_t batch) {
  double mean = 0, weighted = 0, debt = 0;
  for (const auto &loss : losses) {
    mean += loss.item<double>() / losses.size();
    // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `mean` accumulates `item()`
    weighted += batch * (loss * 2).item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:36: warning: `weighted` accumulates `item()`
    debt -= (loss.item<double>());
    // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: `debt` accumulates `item()`
  }
  return mean + weighted + debt;
}
// CHECK-FIXES:      mean_on_device.add_(mean_step.to(torch::kDouble) / static_cast<int64_t>(losses.size()));
// CHECK-FIXES:      mean_on_device = mean_step.to(torch::kDouble) / static_cast<int64_t>(losses.size());
// CHECK-FIXES:      auto weighted_step = (loss * 2).detach();
// CHECK-FIXES-NEXT: if (weighted_on_device.defined())
// CHECK-FIXES-NEXT:   weighted_on_device.add_(weighted_step, static_cast<int64_t>(batch));
// CHECK-FIXES-NEXT: else
// CHECK-FIXES-NEXT:   weighted_on_device = weighted_step.to(torch::kDouble) * static_cast<int64_t>(batch);
// CHECK-FIXES:      auto debt_step = loss.detach();
// CHECK-FIXES:      debt_on_device = debt_step.to(torch::kDouble, /*non_blocking=*/false, /*copy=*/true);
// CHECK-FIXES:      debt -= debt_on_device.item<double>();

int64_t integer_metric_with_a_fraction(const std::vector<torch::Tensor> &hits) {
  int64_t half = 0;
  for (const auto &h : hits) {
    half += h.sum().item<int64_t>() / 2;
    // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: {{.*}}(no fix: an integer metric with a floating factor or a division)
  }
  return half;
}

// --- refused (reported with the reason, no fix) ---------------------------------
double not_a_plain_summand(int steps) {
  double total = 0;
  for (int i = 0; i < steps; ++i) {
    auto loss = torch::randn({}, torch::kCUDA);
    total += loss.item<double>() + 1.0;
    // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: {{.*}}(no fix: the summand is not a plain `t.item<T>()` (times a host value))
  }
  return total;
}

double read_inside(torch::Tensor loss) {
  double total = 0;
  for (int i = 0; i < 4; ++i) {
    total += loss.item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: `total` accumulates {{.*}} (no fix: `total` is also used inside the loop) [torch-sync-deferred-accumulate]
    std::printf("%f\n", total);
  }
  return total;
}

double by_reference(torch::Tensor loss) {
  double total = 0;
  for (int i = 0; i < 4; ++i) {
    total += loss.item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: {{.*}}(no fix: `total` is also used inside the loop)
    observe(total);
  }
  return total;
}

double early_return(torch::Tensor loss) {
  double total = 0;
  for (int i = 0; i < 4; ++i) {
    total += loss.item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: {{.*}}(no fix: the loop can exit through return, goto or an exception before the read)
    if (i == 2)
      return -1;
  }
  return total;
}

double braceless_if(torch::Tensor loss, bool train) {
  double total = 0;
  if (train)
    for (int i = 0; i < 4; ++i) {
      total += loss.item<double>();
      // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: {{.*}}(no fix: the loop is not a statement of a block)
    }
  else
    total = -1;
  return total;
}

void never_read(torch::Tensor loss) {
  double total = 0;
  for (int i = 0; i < 4; ++i)
    total += loss.item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: {{.*}}(no fix: `total` is not read after the loop)
}

double captured(torch::Tensor loss) {
  double total = 0;
  for (int i = 0; i < 4; ++i) {
    total += loss.item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: {{.*}}(no fix: `total` is also used inside the loop)
    auto show = [&] { std::printf("%f", total); };
  }
  return total;
}

// --- negative ----------------------------------------------------------------
double on_cpu() {
  double total = 0;
  auto cpu = torch::rand({4});
  for (int i = 0; i < 4; ++i)
    total += cpu.sum().item<double>(); // a CPU tensor: no sync
  return total;
}

double no_loop(torch::Tensor loss) {
  double total = 0;
  total += loss.item<double>(); // not in a loop: torch-sync-item's
  return total;
}

// Macros and templates: an accumulation spelled in a macro body is reported
// and never rewritten; a template is checked once, in its definition.
#define ADD_METRIC(acc, t) acc += (t).item<double>()
// CHECK-FIXES: #define ADD_METRIC(acc, t) acc += (t).item<double>()
double macro_and_template_cases(int steps) {
  double total = 0;
  for (int i = 0; i < steps; ++i) {
    auto loss = torch::randn({}, torch::kCUDA);
    ADD_METRIC(total, loss);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `total` accumulates `item()` every iteration, so every iteration waits for the GPU; false dependency: the sum is read only after the loop (every iteration of the loop at line [[@LINE-3]]); accumulate on the device and read the total once after the loop (no fix: the accumulation or its loop is spelled in a macro)
    // CHECK-FIXES: ADD_METRIC(total, loss);
  }
  return total;
}
// Only accumulations whose types do not depend on a template parameter are seen
// (`item<T>()` on a dependent T is resolved only per instantiation).
template <int Scale> double summed(int steps) {
  double total = 0;
  for (int i = 0; i < steps; ++i) {
    auto loss = torch::randn({}, torch::kCUDA);
    total += loss.item<double>() * Scale;
    // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: `total` accumulates `item()` every iteration
    // CHECK-FIXES: total_on_device.add_(total_step, Scale);
  }
  return total;
}
template double summed<1>(int);
template double summed<2>(int);

// Issue 25: a running value read only at a log interval inside the loop is
// deferred too: the interval's read becomes the host value plus one read of
// the device sum (one wait per interval). A read every iteration still refuses.
double running_accuracy(int steps) {
  long correct = 0;
  long seen = 0;
  for (int step = 0; step < steps; ++step) {
    auto hits = torch::randn({8}, torch::kCUDA).gt(0).sum();
    correct += hits.item<long>();
    // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: `correct` accumulates `item()` every iteration
    // CHECK-FIXES: correct_on_device.add_(correct_step.to(torch::kLong));
    seen += 8;
    if (step % 10 == 0)
      std::printf("running accuracy %f\n", static_cast<double>(correct) / seen);
    // CHECK-FIXES: std::printf("running accuracy %f\n", static_cast<double>((correct_on_device.defined() ? correct + correct_on_device.item<int64_t>() /* torch-syncfree: the running value, read at the log interval */ : correct)) / seen);
  }
  return static_cast<double>(correct) / seen;
}
double running_every_step(int steps) {
  double total = 0;
  for (int step = 0; step < steps; ++step) {
    total += torch::randn({}, torch::kCUDA).item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:45: warning: `total` accumulates `item()` every iteration, {{.*}}(no fix: `total` is also used inside the loop)
    std::printf("%f\n", total);
  }
  return total;
}

// Two loops of one function summing the same metric: each fix declares its own
// accumulator (a second `total_on_device` would not compile).
double two_loops(int steps) {
  double total = 0;
  for (int i = 0; i < steps; ++i) {
    total += torch::randn({}, torch::kCUDA).item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:45: warning: `total` accumulates `item()` every iteration
  }
  for (int i = 0; i < steps; ++i) {
    total += torch::randn({}, torch::kCUDA).item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:45: warning: `total` accumulates `item()` every iteration
  }
  return total;
}
// CHECK-FIXES: torch::Tensor total_on_device; // total, summed on the device
// CHECK-FIXES: total += total_on_device.item<double>();
// CHECK-FIXES: torch::Tensor total_on_device2; // total, summed on the device
// CHECK-FIXES: total += total_on_device2.item<double>();

// Found by the blind programs of issue 43 (a video pipeline alternating two
// streams): the host's wait in item() ordered the streams; a sum kept on the
// device would be added from both streams without ordering (a race). No fix.
float two_streams(std::vector<c10::cuda::CUDAStream> &streams, torch::Tensor x, int n) {
  float total = 0;
  for (int i = 0; i < n; ++i) {
    c10::cuda::CUDAStreamGuard guard(streams[i % 2]);
    total += (x * i).sum().item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: `total` accumulates `item()` every iteration, {{.*}}(no fix: the loop switches CUDA streams, and a sum on the device would be added from several streams without ordering) [torch-sync-deferred-accumulate]
  }
  return total;
}
float set_stream(std::vector<c10::cuda::CUDAStream> &streams, torch::Tensor x, int n) {
  float total = 0;
  for (int i = 0; i < n; ++i) {
    c10::cuda::setCurrentCUDAStream(streams[i % 2]);
    total += (x * i).sum().item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: `total` accumulates `item()` every iteration, {{.*}}(no fix: the loop switches CUDA streams{{.*}}) [torch-sync-deferred-accumulate]
  }
  return total;
}

// An unsigned count: the device sum is kLong, read back with `item<int64_t>()`
// (LibTorch defines `item<T>()` only for its scalar types: `item<size_t>()`
// compiles and does not link; issue 43, fresh sample 5).
size_t count_correct(torch::Tensor pred, torch::Tensor target, int n) {
  size_t correct = 0;
  for (int i = 0; i < n; ++i) {
    correct += pred.eq(target).sum().item<int64_t>();
    // CHECK-MESSAGES: :[[@LINE-1]]:38: warning: `correct` accumulates `item()` every iteration
  }
  // CHECK-FIXES: correct += correct_on_device.item<int64_t>(); /* NOLINT(torch-sync-*): torch-syncfree, one read after the loop */
  return correct;
}
