// RUN: %check_torch_sync %s torch-sync-item %t -- %mock_flags
// A value passed by value to the program's own helper is judged by what the
// helper does with its parameter (fresh sample 6: `norm_ip(t, t.min().item<double>(),
// t.max().item<double>())`, whose parameters only go into `img.clamp_(min, max)`
// and `img.sub_(min).div_(max - min + 1e-5)`, was "passed to `norm_ip`": true).
#include <torch/torch.h>
#include <iostream>

static void normInPlace(torch::Tensor img, double low, double high) {
  img.fill_(low);
  img.mul_(1.0 / (high - low + 1e-5));
}
static int decide(double value) {
  if (value > 0.5)
    return 1;
  return 0;
}
static void keepAndLog(double value, double &sink) {
  sink = value;
}

void normalise(torch::Tensor t) {
  auto g = t.cuda();
  normInPlace(g, g.min().item<double>(), g.max().item<double>());
  // CHECK-MESSAGES: :[[@LINE-1]]:26: warning: `item()` on a GPU tensor {{.*}}; false dependency: in `normInPlace`, {{.*}}tensor operation
  // CHECK-MESSAGES: :[[@LINE-2]]:50: warning: `item()` on a GPU tensor {{.*}}; false dependency: in `normInPlace`, {{.*}}tensor operation
}

// --- the helper needs the value on the host ------------------------------------
int decided(torch::Tensor t) {
  auto g = t.cuda();
  return decide(g.sum().item<double>());
  // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: `item()` on a GPU tensor {{.*}}; true dependency: the value is passed to `decide`
}
void stored(torch::Tensor t, double &sink) {
  auto g = t.cuda();
  keepAndLog(g.sum().item<double>(), sink);
  // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: `item()` on a GPU tensor {{.*}}; true dependency: the value is passed to `keepAndLog`
}

// A template helper (judged in its instantiation) and a call spelled in a macro.
template <typename T> static void scaleBy(torch::Tensor img, T factor) { img.mul_(factor); }
#define SCALE_BY(img, v) scaleBy(img, v)
void templated(torch::Tensor t) {
  auto g = t.cuda();
  scaleBy(g, g.max().item<double>());
  // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: `item()` on a GPU tensor {{.*}}; false dependency: in `scaleBy`, through `factor`, the value goes straight back into a tensor operation
  SCALE_BY(g, g.min().item<double>());
  // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: `item()` on a GPU tensor {{.*}}; false dependency: in `scaleBy`, through `factor`, the value goes straight back into a tensor operation
  // A CPU tensor: nothing to report.
  auto h = torch::ones({2});
  scaleBy(h, h.max().item<double>());
}
