// RUN: %check_torch_sync %s torch-sync-item %t -- %mock_flags
// The program's own print helpers: a value passed to a function of the unit
// whose parameter is only written to a stream or given to a logging call
// (two calls deep) is only logged (public code: `printElement(t, width)`
// around `std::cout << t`).
#include <torch/torch.h>
#include <cstdio>
#include <iomanip>
#include <iostream>

template <typename T> void printElement(T t, const int &width) { std::cout << std::left << std::setw(width) << t; }
void report(const char *name, double v) { std::printf("%s %f\n", name, v); }
void twice(double v) {
  printElement(v, 8);
  report("v", v);
}
// --- negative: the helper does more than log --------------------------------
double keep_max(double v) {
  static double best = 0;
  if (v > best)
    best = v;
  std::cout << best;
  return best;
}
void log_and_count(double v, int &n) {
  std::cout << v;
  n += v > 0;
}

void step(const torch::Tensor &loss, int &n) {
  auto g = loss.cuda();
  printElement(g.item<double>(), 10);
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `item()` on a GPU tensor {{.*}}; false dependency: the value is only logged;
  report("loss", g.item<double>());
  // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: `item()` on a GPU tensor {{.*}}; false dependency: the value is only logged;
  twice(g.item<double>());
  // CHECK-MESSAGES: :[[@LINE-1]]:11: warning: `item()` on a GPU tensor {{.*}}; false dependency: the value is only logged;
  keep_max(g.item<double>());
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `item()` on a GPU tensor {{.*}}; true dependency: the value is passed to `keep_max`;
  log_and_count(g.item<double>(), n);
  // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: `item()` on a GPU tensor {{.*}}; true dependency: the value is passed to `log_and_count`;
}
