// RUN: %check_torch_sync %s torch-sync-item %t -- %mock_flags
// A value that only decides whether local counts grow (per-class accuracy:
// `if (label == prediction[i].item<long>()) class_correct[label] += 1;`),
// counts the loop does not read, is as deferrable as `correct += (p == l)`: a
// false dependency (fresh sample 6: three trainers' evaluation loops were
// called true). A branch that does anything else, or counts the loop reads,
// keeps "decides an `if`".
#include <torch/torch.h>
#include <iostream>
#include <vector>

void perClass(const torch::Tensor &images, const torch::Tensor &labels) {
  auto prediction = images.cuda().argmax(1);
  auto gpu_labels = labels.cuda();
  int class_correct[10] = {0};
  std::vector<int> class_total(10);
  int correct = 0;
  // The loop's reads share one copy made before it (the invariant-copy fix):
  // CHECK-FIXES: auto gpu_labels_host = gpu_labels.cpu() /* torch-syncfree: copied once before the loop */;
  // CHECK-FIXES: auto prediction_host = prediction.cpu() /* torch-syncfree: copied once before the loop */;
  for (int i = 0; i < 64; ++i) {
    auto label = gpu_labels[i].item<long>();
    // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: `item()` on a GPU tensor {{.*}}; true dependency: through `label`, the value is used as an index
    // CHECK-FIXES: auto label = gpu_labels_host[i].item<long>();
    if (label == prediction[i].item<long>())
      class_correct[label] += 1;
    // CHECK-MESSAGES: :[[@LINE-2]]:32: warning: `item()` on a GPU tensor {{.*}}; false dependency: the value only decides whether `class_correct` counts up, which the loop does not read
    // CHECK-FIXES: if (label == prediction_host[i].item<long>())
    if (prediction[i].item<long>() == 3) {
      ++correct;
      class_total[3]++;
    }
    // CHECK-MESSAGES: :[[@LINE-4]]:23: warning: `item()` on a GPU tensor {{.*}}; false dependency: the value only decides whether `correct` counts up
    // CHECK-FIXES: if (prediction_host[i].item<long>() == 3) {
  }
  for (int c = 0; c < 10; ++c)
    std::cout << class_correct[c] << " " << class_total[c] << "\n";
  std::cout << correct << "\n";
}

// --- the branch does more, or the loop reads the count -----------------------
void earlyStop(const torch::Tensor &scores) {
  auto g = scores.cuda();
  int hits = 0;
  for (int i = 0; i < 64; ++i) {
    if (g[i].item<float>() > 0.5f)
      hits += 1;
    // CHECK-MESSAGES: :[[@LINE-2]]:14: warning: `item()` on a GPU tensor {{.*}}; true dependency: the value decides an `if`
    if (hits > 10)
      break;
  }
}
void branchPrints(const torch::Tensor &scores) {
  auto g = scores.cuda();
  int hits = 0;
  for (int i = 0; i < 64; ++i) {
    if (g[i].item<float>() > 0.5f) {
      hits += 1;
      std::cout << i << "\n";
    }
    // CHECK-MESSAGES: :[[@LINE-4]]:14: warning: `item()` on a GPU tensor {{.*}}; true dependency: the value decides an `if`
  }
  std::cout << hits << "\n";
}
void withElse(const torch::Tensor &scores) {
  auto g = scores.cuda();
  int hits = 0, misses = 0;
  for (int i = 0; i < 64; ++i) {
    if (g[i].item<float>() > 0.5f)
      hits += 1;
    else
      misses += 1;
    // CHECK-MESSAGES: :[[@LINE-4]]:14: warning: `item()` on a GPU tensor {{.*}}; true dependency: the value decides an `if`
  }
  std::cout << hits << misses << "\n";
}

// In a function template (its instantiation) and with the count spelled in a macro.
#define COUNT(n) ++(n)
template <typename Scores> int countedInTemplate(const Scores &scores) {
  auto g = scores.cuda();
  int hits = 0;
  for (int i = 0; i < 8; ++i) {
    if (g[i].template item<float>() > 0.5f)
      COUNT(hits);
    // CHECK-MESSAGES: :[[@LINE-2]]:23: warning: `item()` on a GPU tensor {{.*}}; false dependency: the value only decides whether `hits` counts up
  }
  std::cout << hits << "\n";
  // A CPU tensor's reads are not reported.
  auto c = torch::ones({8});
  int cpu_hits = 0;
  for (int i = 0; i < 8; ++i)
    if (c[i].item<float>() > 0.5f)
      ++cpu_hits;
  return cpu_hits;
}
template int countedInTemplate<torch::Tensor>(const torch::Tensor &);
