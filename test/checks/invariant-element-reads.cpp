// RUN: %check_torch_sync --compile-fixed %s torch-sync-item %t -- %mock_flags
// Issue 41, second restructuring: element reads of a tensor the loop does not
// change (`offsets[i].item<int64_t>()` every iteration) read the same values
// from one host copy made before the loop. The first read's fix carries the
// copy and the rewrite of every read; the message counts the waits it removes.
#include <torch/torch.h>
#include <vector>

void consume(const torch::Tensor &t);

// --- fixed --------------------------------------------------------------------
// Segment bounds read element by element (extension-op style).
torch::Tensor segment_sums(const torch::Tensor &values, const torch::Tensor &offsets, int64_t segments) {
  std::vector<torch::Tensor> sums;
  for (int64_t s = 0; s < segments; ++s) {
    int64_t begin = offsets[s].item<int64_t>();
    // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: `item()` on a tensor that may be on the GPU copies the value to the host and waits for all queued GPU work; {{.*}}; `offsets` does not change in the loop at line [[@LINE-2]]: copy it to the host once before the loop and read its elements there (one wait per call instead of one per read, 2 reads per iteration) [torch-sync-item]
    int64_t end = offsets[s + 1].item<int64_t>();
    // CHECK-MESSAGES: :[[@LINE-1]]:34: warning: {{.*}}; `offsets` does not change in the loop at line [[@LINE-4]]: {{.*}}; the fix is on the read at line [[@LINE-3]] [torch-sync-item]
    sums.push_back(values.narrow(0, begin, end - begin).sum());
  }
  return torch::stack(sums);
}
// CHECK-FIXES: std::vector<torch::Tensor> sums;
// CHECK-FIXES-NEXT: auto offsets_host = offsets.cpu() /* torch-syncfree: copied once before the loop */;
// CHECK-FIXES-NEXT: for (int64_t s = 0; s < segments; ++s) {
// CHECK-FIXES-NEXT: int64_t begin = offsets_host[s].item<int64_t>();
// CHECK-FIXES: int64_t end = offsets_host[s + 1].item<int64_t>();

// The loop writes the read tensor itself: not the shape (a copy before the
// loop would hold stale values), so no bulk copy is proposed.
int64_t consumes(torch::Tensor budget, int64_t steps) {
  int64_t used = 0;
  for (int64_t s = 0; s < steps; ++s) {
    used += budget[0].item<int64_t>();
    // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: {{.*}}(every iteration of the loop at line [[@LINE-2]]){{[^`]*}} [torch-sync-item]
    budget.mul_(2);
  }
  return used;
}

// --- the rewrite in the message, no fix ---------------------------------------
// The loop writes a tensor made outside it (it may be `offsets`).
void fill(const torch::Tensor &offsets, torch::Tensor out, int64_t segments) {
  for (int64_t s = 0; s < segments; ++s) {
    int64_t begin = offsets[s].item<int64_t>();
    // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: {{.*}}; no fix: the loop may change `offsets`: `fill_()` may write its memory (the rewrite: `auto offsets_host = offsets.cpu();` before the loop, `offsets_host[...]` for the read) [torch-sync-item]
    out.narrow(0, begin, 1).fill_(1);
  }
}

// The name the fix would declare is taken.
int64_t taken(const torch::Tensor &offsets, int64_t segments) {
  int64_t offsets_host = 0;
  for (int64_t s = 0; s < segments; ++s) {
    offsets_host += offsets[s].item<int64_t>();
    // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: {{.*}}; no fix: `offsets_host` is already a name in the function {{.*}} [torch-sync-item]
  }
  return offsets_host;
}

// Opaque code in the loop.
int64_t opaque(const torch::Tensor &offsets, const torch::Tensor &state, int64_t segments) {
  int64_t total = 0;
  for (int64_t s = 0; s < segments; ++s) {
    consume(state);
    total = std::max(total, offsets[s].item<int64_t>());
    // CHECK-MESSAGES: :[[@LINE-1]]:40: warning: {{.*}}; no fix: the loop may change `offsets`: a call of `consume` may write it {{.*}} [torch-sync-item]
  }
  return total;
}

// --- not this shape -----------------------------------------------------------
// The tensor changes in the loop.
int64_t walks(torch::Tensor offsets, int64_t segments) {
  int64_t total = 0;
  for (int64_t s = 0; s < segments; ++s) {
    total = std::max(total, offsets[0].item<int64_t>());
    // CHECK-MESSAGES: :[[@LINE-1]]:40: warning: {{.*}}; if the host must decide, decide on the device instead {{.*}} [torch-sync-item]
    offsets = offsets.narrow(0, 1, offsets.size(0) - 1);
  }
  return total;
}

// A tensor index is not an element read.
int64_t by_tensor(const torch::Tensor &offsets, const torch::Tensor &index, int64_t segments) {
  int64_t total = 0;
  for (int64_t s = 0; s < segments; ++s)
    total = std::max(total, offsets.index({index}).sum().item<int64_t>());
    // CHECK-MESSAGES: :[[@LINE-1]]:58: warning: {{.*}}; if the host must decide, decide on the device instead {{.*}} [torch-sync-item]
  return total;
}

// --- more shapes ----------------------------------------------------------------
// A CPU tensor: no wait, no finding.
int64_t on_cpu(int64_t segments) {
  auto offsets = torch::ones({8}, torch::kLong);
  int64_t total = 0;
  for (int64_t s = 0; s < segments; ++s)
    total += offsets[s].item<int64_t>();
  return total;
}

// A function template: fixed in its (one) instantiation's source.
template <typename T> T templated(const torch::Tensor &offsets, int64_t segments) {
  T total = 0;
  for (int64_t s = 0; s < segments; ++s) {
    total = std::max(total, offsets[s].item<T>());
    // CHECK-MESSAGES: :[[@LINE-1]]:{{[0-9]+}}: warning: {{.*}}`offsets` does not change in the loop at line [[@LINE-2]]: copy it to the host once before the loop {{.*}} [torch-sync-item]
  }
  return total;
}
int64_t use_templated(const torch::Tensor &offsets) { return templated<int64_t>(offsets, 4); }
// CHECK-FIXES: auto offsets_host = offsets.cpu() /* torch-syncfree: copied once before the loop */;
// CHECK-FIXES: total = std::max(total, offsets_host[s].item<T>());

// The read spelled through a macro whose argument names the tensor in this
// file: the argument is rewritten.
#define ELEMENT(x, i) x[i].item<int64_t>()
int64_t through_macro(const torch::Tensor &offsets, int64_t segments) {
  int64_t total = 0;
  for (int64_t s = 0; s < segments; ++s) {
    total = std::max(total, ELEMENT(offsets, s));
    // CHECK-MESSAGES: :[[@LINE-1]]:{{[0-9]+}}: warning: {{.*}}`offsets` does not change in the loop at line [[@LINE-2]]{{.*}} [torch-sync-item]
  }
  return total;
}
// CHECK-FIXES: total = std::max(total, ELEMENT(offsets_host, s));
