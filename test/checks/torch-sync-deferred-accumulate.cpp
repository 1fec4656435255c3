// RUN: %check_torch_sync %s torch-sync-deferred-accumulate %t -- %mock_flags
#include <torch/torch.h>
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
      // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: `running` accumulates `item()` every iteration, so every iteration waits for the GPU; false dependency: the sum is read only after the loop (every iteration of the loop at line [[@LINE-3]]); accumulate on the device and read the total once after the loop [torch-sync-deferred-accumulate]
      correct += logits.argmax(1).eq(target).sum().item<int64_t>();
      // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: `correct` accumulates `item()`
      if (step == 7)
        break; // break reaches the statement after the loop: still applied
    }
    std::printf("%f %ld\n", running, (long)correct);
  }
}
// CHECK-FIXES:      double running = 0;
// CHECK-FIXES-NEXT: int64_t correct = 0;
// CHECK-FIXES-NEXT: auto running_on_device = torch::zeros({}, torch::kDouble);
// CHECK-FIXES-NEXT: auto correct_on_device = torch::zeros({}, torch::kLong);
// CHECK-FIXES-NEXT: for (int step = 0; step < 10; ++step) {
// CHECK-FIXES-NEXT: auto loss = torch::mse_loss(logits, target);
// CHECK-FIXES-NEXT: running_on_device = running_on_device + (loss.detach().to(torch::kDouble) * logits.size(0));
// CHECK-FIXES:      correct_on_device = correct_on_device + (logits.argmax(1).eq(target).sum().detach().to(torch::kLong));
// CHECK-FIXES:      }
// CHECK-FIXES-NEXT: running += running_on_device.item<double>();
// CHECK-FIXES-NEXT: correct += correct_on_device.item<int64_t>();
// CHECK-FIXES-NEXT: std::printf("%f %ld\n", running, (long)correct);

// The summand may call anything: it is still evaluated once, in the same place.
struct Net {
  torch::Tensor forward(const torch::Tensor &x) { return x * 2; }
};
int64_t counts_through_a_call(Net &net, const torch::Tensor &labels, int steps) {
  int64_t hits = 0;
  for (int i = 0; i < steps; ++i) {
    hits += net.forward(labels).eq(labels).sum().item<int64_t>();
    // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: `hits` accumulates `item()` every iteration
    // CHECK-FIXES: hits_on_device = hits_on_device + (net.forward(labels).eq(labels).sum().detach().to(torch::kLong));
  }
  return hits;
}

// --- refused (reported with the reason, no fix) ---------------------------------
double not_a_plain_summand(int steps) {
  double total = 0;
  for (int i = 0; i < steps; ++i) {
    auto loss = torch::randn({}, torch::kCUDA);
    total += loss.item<double>() + 1.0;
    // CHECK-MESSAGES: :[[@LINE-1]]:11: warning: {{.*}}(no fix: the summand is not a plain `t.item<T>()` (times a host value))
  }
  return total;
}

double read_inside(torch::Tensor loss) {
  double total = 0;
  for (int i = 0; i < 4; ++i) {
    total += loss.item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:11: warning: `total` accumulates {{.*}} (no fix: `total` is also used inside the loop) [torch-sync-deferred-accumulate]
    std::printf("%f\n", total);
  }
  return total;
}

double by_reference(torch::Tensor loss) {
  double total = 0;
  for (int i = 0; i < 4; ++i) {
    total += loss.item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:11: warning: {{.*}}(no fix: `total` is also used inside the loop)
    observe(total);
  }
  return total;
}

double early_return(torch::Tensor loss) {
  double total = 0;
  for (int i = 0; i < 4; ++i) {
    total += loss.item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:11: warning: {{.*}}(no fix: the loop can exit through return, goto or an exception before the read)
    if (i == 2)
      return -1;
  }
  return total;
}

void never_read(torch::Tensor loss) {
  double total = 0;
  for (int i = 0; i < 4; ++i)
    total += loss.item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:11: warning: {{.*}}(no fix: `total` is not read after the loop)
}

double captured(torch::Tensor loss) {
  double total = 0;
  for (int i = 0; i < 4; ++i) {
    total += loss.item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:11: warning: {{.*}}(no fix: `total` is also used inside the loop)
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
    // CHECK-MESSAGES: :[[@LINE-1]]:11: warning: `total` accumulates `item()` every iteration
    // CHECK-FIXES: total_on_device = total_on_device + (loss.detach().to(torch::kDouble) * Scale);
  }
  return total;
}
template double summed<1>(int);
template double summed<2>(int);
