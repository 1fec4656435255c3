// RUN: %check_torch_sync --compile-fixed %s torch-sync-device-to-host %t -- %mock_flags
// Issue 41, first restructuring: a host copy made every iteration of a tensor
// the loop does not change gives the same values when made once before the
// loop. The fix moves the declaration when nothing in the loop may write the
// copied tensor and the copy is only read; otherwise the message carries the
// rewrite and says what stopped it.
#include <torch/torch.h>
#include <vector>

void consume(const torch::Tensor &t);

// --- fixed --------------------------------------------------------------------
// Library style: the function is called per step; the lengths live on the GPU.
int64_t total_length(const torch::Tensor &lengths, int64_t T) {
  int64_t total = 0;
  for (int64_t t = 0; t < T; ++t) {
    auto host = lengths.cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: `cpu()` on a tensor that may be on the GPU copies it to the host and waits for all queued GPU work; {{.*}}; `lengths` does not change in the loop at line [[@LINE-2]]: copy it once before the loop (one wait per call instead of one per iteration) [torch-sync-device-to-host]
    total += host.data_ptr<int64_t>()[t];
  }
  return total;
}
// CHECK-FIXES: int64_t total = 0;
// CHECK-FIXES-NEXT: auto host = lengths.cpu() /* torch-syncfree: copied once before the loop */;
// CHECK-FIXES-NEXT: for (int64_t t = 0; t < T; ++t) {
// CHECK-FIXES: total += host.data_ptr<int64_t>()[t];

// `to(kCPU)` in a while loop; the loop writes only tensors it makes.
torch::Tensor gather_rows(const torch::Tensor &offsets, const torch::Tensor &values, int64_t n) {
  std::vector<torch::Tensor> rows;
  int64_t i = 0;
  while (i < n) {
    const auto offsets_host = offsets.to(torch::kCPU);
    // CHECK-MESSAGES: :[[@LINE-1]]:39: warning: `to(<CPU>)` {{.*}}`offsets` does not change in the loop at line [[@LINE-2]]: copy it once before the loop {{.*}} [torch-sync-device-to-host]
    auto row = torch::zeros({4});
    row.add_(values.narrow(0, offsets_host[i].item<int64_t>(), 4));
    rows.push_back(row);
    ++i;
  }
  return torch::stack(rows);
}
// CHECK-FIXES: int64_t i = 0;
// CHECK-FIXES-NEXT: const auto offsets_host = offsets.to(torch::kCPU) /* torch-syncfree: copied once before the loop */;
// CHECK-FIXES-NEXT: while (i < n) {
// CHECK-FIXES: auto row = torch::zeros({4});

// Read through an accessor held in a local (the blind harness program's shape):
// its elements are only read.
int64_t segment_offsets(const torch::Tensor &lengths, int64_t features) {
  int64_t sum = 0;
  for (int64_t f = 0; f < features; ++f) {
    auto lengths_host = lengths.to(torch::kCPU);
    // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: `to(<CPU>)` {{.*}}`lengths` does not change in the loop at line [[@LINE-2]]: copy it once before the loop {{.*}} [torch-sync-device-to-host]
    auto length = lengths_host.accessor<int64_t, 1>();
    for (int64_t g = 0; g < f; ++g)
      sum += length[g];
    sum += lengths_host.accessor<int64_t, 1>()[f];
  }
  return sum;
}
// CHECK-FIXES: int64_t sum = 0;
// CHECK-FIXES-NEXT: auto lengths_host = lengths.to(torch::kCPU) /* torch-syncfree: copied once before the loop */;
// CHECK-FIXES-NEXT: for (int64_t f = 0; f < features; ++f) {

// A trailing comment moves with the declaration; an element pushed into a
// vector is only read (bound to a reference to const), and a copy of a tensor
// the function allocated (`chunk.cpu()`) cannot be `lengths`.
std::vector<int64_t> chunk_bounds(const torch::Tensor &lengths, int64_t chunks) {
  std::vector<int64_t> bounds;
  auto chunk = torch::zeros({4});
  for (int64_t c = 0; c < chunks; ++c) {
    auto lengths_h = lengths.cpu(); // the lengths, on the host
    // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: `cpu()` {{.*}}`lengths` does not change in the loop at line [[@LINE-2]]: copy it once before the loop {{.*}} [torch-sync-device-to-host]
    bounds.push_back(lengths_h.data_ptr<int64_t>()[c]);
    auto chunk_h = chunk.cpu();
    chunk_h.zero_();
  }
  return bounds;
}
// CHECK-FIXES: auto chunk = torch::zeros({4});
// CHECK-FIXES-NEXT: // the lengths, on the host
// CHECK-FIXES-NEXT: auto lengths_h = lengths.cpu() /* torch-syncfree: copied once before the loop */;
// CHECK-FIXES-NEXT: for (int64_t c = 0; c < chunks; ++c) {
// CHECK-FIXES-NEXT: //
// CHECK-FIXES-NEXT: bounds.push_back(lengths_h.data_ptr<int64_t>()[c]);

// --- the rewrite in the message, no fix ---------------------------------------
// An accessor that writes the host copy: the next iteration would read the
// written values, not a fresh copy.
int64_t accessor_writes(const torch::Tensor &lengths, int64_t features) {
  int64_t sum = 0;
  for (int64_t f = 0; f < features; ++f) {
    auto lengths_host = lengths.to(torch::kCPU);
    // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: {{.*}}; no fix: `lengths_host` is written in the loop (`accessor`) (the rewrite: move `auto lengths_host = lengths.to(torch::kCPU);` before the loop) [torch-sync-device-to-host]
    auto length = lengths_host.accessor<int64_t, 1>();
    sum += length[f];
    length[f] = 0;
  }
  return sum;
}

// The loop writes the copied tensor itself: its values change every iteration,
// so a copy before the loop is not the same copy (not the shape: no "does not
// change", no rewrite offered; the soft-NMS loop of test/blind/restructurings2
// was told both "does not change" and "may change").
int64_t drains(torch::Tensor lengths, int64_t T) {
  int64_t total = 0;
  for (int64_t t = 0; t < T; ++t) {
    auto host = lengths.cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: {{.*}}; true dependency: through `host`, the host reads the tensor's memory (every iteration of the loop at line [[@LINE-2]]); copy once, later: into pinned memory with `non_blocking=true` and one synchronization before the host reads it [torch-sync-device-to-host]
    total += host.data_ptr<int64_t>()[t];
    lengths.mul_(2);
  }
  return total;
}

// Writes into a tensor made outside the loop (it may be `lengths`).
void scatter(const torch::Tensor &lengths, torch::Tensor out, int64_t T) {
  for (int64_t t = 0; t < T; ++t) {
    auto host = lengths.cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: {{.*}}; no fix: the loop may change `lengths`: an assignment into a tensor may write it {{.*}} [torch-sync-device-to-host]
    out[t] = host.data_ptr<int64_t>()[t];
  }
}

// The host copy is written: a fresh copy every iteration is what the loop reads.
int64_t resets(const torch::Tensor &lengths, int64_t T) {
  int64_t total = 0;
  for (int64_t t = 0; t < T; ++t) {
    auto host = lengths.cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: {{.*}}; no fix: `host` is written in the loop (`data_ptr`) {{.*}} [torch-sync-device-to-host]
    host.data_ptr<int64_t>()[t] = 0;
    total += host.sum().item<int64_t>();
  }
  return total;
}

// Code that is not LibTorch's, or a backward pass, may write it.
int64_t passes_on(const torch::Tensor &lengths, const torch::Tensor &loss, int64_t T) {
  int64_t total = 0;
  for (int64_t t = 0; t < T; ++t) {
    auto host = lengths.cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: {{.*}}; no fix: the loop may change `lengths`: a call of `consume` may write it {{.*}} [torch-sync-device-to-host]
    consume(loss);
    total += host.data_ptr<int64_t>()[t];
  }
  for (int64_t t = 0; t < T; ++t) {
    auto host = lengths.cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: {{.*}}; no fix: the loop may change `lengths`: `backward()` writes gradients the loop does not name {{.*}} [torch-sync-device-to-host]
    loss.backward();
    total += host.data_ptr<int64_t>()[t];
  }
  return total;
}

// The name is used after the loop for something else.
int64_t shadowed(const torch::Tensor &lengths, int64_t T) {
  int64_t total = 0;
  for (int64_t t = 0; t < T; ++t) {
    auto host = lengths.cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: {{.*}}; no fix: `host` names something else around the loop {{.*}} [torch-sync-device-to-host]
    total += host.data_ptr<int64_t>()[t];
  }
  int64_t host = total;
  return host;
}

// --- not this shape: the copied tensor changes, or the copy is not a declaration ---
int64_t changes(torch::Tensor lengths, int64_t T) {
  int64_t total = 0;
  for (int64_t t = 0; t < T; ++t) {
    auto host = lengths.cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: {{.*}}; copy once, later: into pinned memory with `non_blocking=true` and one synchronization before the host reads it [torch-sync-device-to-host]
    total += host.data_ptr<int64_t>()[t];
    lengths = lengths * 2;
  }
  return total;
}

int64_t through_alias(int64_t T) {
  auto lengths = torch::ones({8}, torch::kCUDA);
  torch::Tensor &alias = lengths;
  int64_t total = 0;
  for (int64_t t = 0; t < T; ++t) {
    auto host = lengths.cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: {{.*}}; copy once, later: into pinned memory {{.*}} [torch-sync-device-to-host]
    total += host.data_ptr<int64_t>()[t];
    alias = alias + 1;
  }
  return total;
}

int64_t inline_copy(const torch::Tensor &lengths, int64_t T) {
  int64_t total = 0;
  for (int64_t t = 0; t < T; ++t)
    total += lengths.cpu().data_ptr<int64_t>()[t];
    // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: {{.*}}; copy once, later: into pinned memory {{.*}} [torch-sync-device-to-host]
  return total;
}

// In a macro: the rewrite in the message only.
#define EACH_STEP(n) for (int64_t t = 0; t < (n); ++t)
int64_t in_macro(const torch::Tensor &lengths, int64_t T) {
  int64_t total = 0;
  EACH_STEP(T) {
    auto host = lengths.cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: {{.*}}; no fix: the loop is written in a macro {{.*}} [torch-sync-device-to-host]
    total += host.data_ptr<int64_t>()[t];
  }
  return total;
}

// --- more shapes ----------------------------------------------------------------
// A CPU tensor: no wait, no finding; an asynchronous copy is the author's decision.
int64_t on_cpu_or_async(const torch::Tensor &lengths, int64_t T) {
  auto local = torch::ones({8}, torch::kLong);
  int64_t total = 0;
  for (int64_t t = 0; t < T; ++t) {
    auto host = local.cpu();
    auto early = lengths.to(torch::kCPU, /*non_blocking=*/true);
    total += host.data_ptr<int64_t>()[t] + early.numel();
  }
  return total;
}

// A function template: the move is made in the template's source.
template <typename T> T templated_total(const torch::Tensor &lengths, int64_t T_steps) {
  T total = 0;
  for (int64_t t = 0; t < T_steps; ++t) {
    auto host = lengths.cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: {{.*}}`lengths` does not change in the loop at line [[@LINE-2]]: copy it once before the loop {{.*}} [torch-sync-device-to-host]
    total += host.data_ptr<T>()[t];
  }
  return total;
}
int64_t use_templated_total(const torch::Tensor &lengths) { return templated_total<int64_t>(lengths, 4); }
// CHECK-FIXES: T total = 0;
// CHECK-FIXES-NEXT: auto host = lengths.cpu() /* torch-syncfree: copied once before the loop */;
