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

// Issue 21: std::println / std::print (C++23) and std::format (C++20) write or
// build text, as fmt's do (declared here: Debian 12's libstdc++ has no <print>).
namespace std {
template <class... Args> void println(const char *, Args &&...);
template <class... Args> void print(const char *, Args &&...);
template <class... Args> std::string format(const char *, Args &&...);
} // namespace std
void cxx23_printing(torch::Tensor loss) {
  auto g = loss.cuda();
  std::println("loss {}", g.item<float>());
  // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; false dependency: the value is only logged
  std::print("loss {}\n", g.item<double>());
  // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; false dependency: the value is only logged
  std::string line = std::format("loss {}", g.item<float>());
  // CHECK-MESSAGES: :[[@LINE-1]]:47: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; false dependency: the value is only logged
  std::puts(line.c_str());
}

// Issue 21: the program's own metrics object, defined in another file. Its
// name and signature (void, takes a number) make it a sink; a method that
// returns something or takes the value by non-const reference is not one.
struct ProgressMeter {
  void update(double value);
  void addScalar(const char *tag, float value);
  bool shouldStop(double value);
  void consume(double &value);
};
void own_metrics(torch::Tensor loss, ProgressMeter &meter) {
  auto g = loss.cuda();
  meter.update(g.item<double>());
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; false dependency: the value is passed to `ProgressMeter::update`, not defined in this translation unit: by its name and signature (void, takes a number) a metrics or progress sink (name heuristic; list it in LoggingFunctions to make it certain)
  meter.addScalar("loss", g.item<float>());
  // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: {{.*}}false dependency: the value is passed to `ProgressMeter::addScalar`, not defined in this translation unit
  if (meter.shouldStop(g.item<double>()))
    return;
  // CHECK-MESSAGES: :[[@LINE-2]]:26: warning: {{.*}}true dependency: the value is passed to `shouldStop`
  double kept = g.item<double>();
  meter.consume(kept);
  // CHECK-MESSAGES: :[[@LINE-2]]:19: warning: {{.*}}true dependency
}
