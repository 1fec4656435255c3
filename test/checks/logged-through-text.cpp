// RUN: %check_torch_sync %s torch-sync-item %t -- %mock_flags
// A value formatted into text (std::to_string, string concatenation, c_str())
// that is only logged is a false dependency; text that decides something is not.
#include <torch/torch.h>
#include <cstdio>
#include <string>

void logged(torch::Tensor t) {
  auto g = t.cuda();
  double v = g.sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; false dependency: through `v`, through `line`, the value is only logged; keep the value on the device
  std::string line = "loss " + std::to_string(v);
  std::puts(line.c_str());
}

bool decides(torch::Tensor t) {
  auto g = t.cuda();
  double v = g.sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; true dependency: through `v`, through `text`, the value decides an `if`
  std::string text = std::to_string(v);
  if (text.size() > 4)
    return true;
  return false;
}

// Projects' logging macros and metric writers are logging.
#define LOG_INFO(...) std::printf(__VA_ARGS__)
struct SummaryWriter {
  void add_scalar(const std::string &tag, double value, long step);
};
void project_logging(torch::Tensor t, SummaryWriter &writer, long step) {
  auto g = t.cuda();
  LOG_INFO("loss %f\n", g.sum().item<double>());
  // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; false dependency: the value is only logged
  writer.add_scalar("loss", g.mean().item<double>(), step);
  // CHECK-MESSAGES: :[[@LINE-1]]:38: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; false dependency: the value is only logged
}
