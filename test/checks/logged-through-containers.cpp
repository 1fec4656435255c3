// RUN: %check_torch_sync %s torch-sync-item %t -- %mock_flags
// A value stored into a local container (a metrics map, a history vector) is
// classified by how the container's contents are used: iterated and printed
// is a false dependency; an element read for a decision is true.
#include <torch/torch.h>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

void logged(torch::Tensor t) {
  auto g = t.cuda();
  std::map<std::string, double> metrics;
  metrics["loss"] = g.sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; false dependency: through `metrics`, the value is only logged; keep the value on the device
  std::vector<double> history;
  history.push_back(g.mean().item<double>());
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; false dependency: through `history`, the value is only logged; keep the value on the device
  for (auto &[name, value] : metrics)
    std::printf("%s %f\n", name.c_str(), value);
  for (double h : history)
    std::printf("%f\n", h);
}

bool decided(torch::Tensor t) {
  auto g = t.cuda();
  std::map<std::string, double> metrics;
  metrics["loss"] = g.sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; true dependency: through `metrics`, the value decides an `if`
  if (metrics["loss"] > 1.0)
    return true;
  return false;
}

void stored_elsewhere(torch::Tensor t, std::vector<double> &out) {
  auto g = t.cuda();
  out.push_back(g.sum().item<double>());
  // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; true dependency: the value is stored in a host container
}

// Returned by a function of this program: its callers' uses decide.
static double evaluate(torch::Tensor t) {
  auto g = t.cuda();
  return g.sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; false dependency: returned by `evaluate`, the value is only logged
}
static double threshold(torch::Tensor t) {
  auto g = t.cuda();
  return g.mean().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; true dependency: returned by `threshold`, the value decides an `if`
}
int run_program(torch::Tensor x) {
  std::printf("%f\n", evaluate(x));
  if (threshold(x) > 1.0)
    return 1;
  return 0;
}

// The container's size is its count of elements, not their values: a history
// printed by index stays logged; a value that decides something stays true.
void printed_by_index(torch::Tensor t, int steps) {
  auto g = t.cuda();
  std::vector<double> losses;
  for (int step = 0; step < steps; ++step)
    losses.push_back(g.sum().item<double>());
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; false dependency: through `losses`, the value is only logged
  for (size_t i = 0; i < losses.size(); ++i)
    std::printf("%zu %f\n", i, losses[i]);
  std::vector<double> scores;
  scores.push_back(g.max().item<double>());
  // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: `item()` on a GPU tensor {{.*}}; true dependency: through `scores`, the value decides a branch
  if (!scores.empty() && scores[0] > 1.0)
    std::printf("high\n");
}
