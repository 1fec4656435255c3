// RUN: %check_torch_sync %s torch-sync-print %t -- %mock_flags
#include <torch/torch.h>
#include <iostream>

void positives(torch::Tensor maybe_gpu) {
  auto x = torch::randn({4}, torch::kCUDA);
  for (int i = 0; i < 3; ++i)
    std::cout << "x = " << x << "\n";
    // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: printing a GPU tensor copies its values to the host and waits for the GPU; false dependency: the values are only logged (every iteration of the loop at line [[@LINE-2]]); print after the step or at a log interval [torch-sync-print]
  maybe_gpu.print();
  // CHECK-MESSAGES: :[[@LINE-1]]:13: warning: printing a tensor that may be on the GPU
}

void negatives() {
  auto host = torch::randn({4});
  std::cout << host << "\n";           // CPU
  auto x = torch::randn({4}, torch::kCUDA);
  std::cout << x.toString() << "\n";   // the type name: no data
}

// Macros and templates: printing spelled in a macro body is reported at the
// expansion; a template is checked once, in its definition.
#define SHOW(t) std::cout << (t) << "\n"
void macro_and_template_cases() {
  auto x = torch::randn({8}, torch::kCUDA);
  SHOW(x);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: printing a GPU tensor
}
template <typename T> void show_all(const std::vector<torch::Tensor> &ts) {
  for (const auto &t : ts)
    t.print();
  // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: printing a tensor that may be on the GPU
}
template void show_all<float>(const std::vector<torch::Tensor> &);
template void show_all<int>(const std::vector<torch::Tensor> &);
