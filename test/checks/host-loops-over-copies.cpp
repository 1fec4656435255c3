// RUN: %check_torch_sync %s torch-sync-device-to-host %t -- %mock_flags
// Issue 41: host loops over a copied mask or index (NMS-style greedy loops)
// get the device formulation or the one-copy restructuring as their remedy,
// not a fix. A loop that writes the copied tensor itself is not told that the
// tensor "does not change".
#include <torch/torch.h>
#include <vector>

void consume(const torch::Tensor &t);

// --- a host loop that only writes the rows a copied mask selects --------------
torch::Tensor fill_empty(const torch::Tensor &bag_len, torch::Tensor out, const torch::Tensor &default_row) {
  auto empty_h = bag_len.eq(0).cpu();
  // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: `cpu()` on a tensor that may be on the GPU copies it to the host and waits for all queued GPU work; true dependency: through `empty_h`, the host reads the tensor's memory; the host loop at line [[@LINE+2]] only writes the rows of `out` that `bag_len.eq(0)` selects: on the device, `out.copy_(torch::where(<bag_len.eq(0) reshaped to broadcast over the rows>, default_row, out))` writes the same rows with no copy and no wait (`.unsqueeze(1)` for a matrix) [torch-sync-device-to-host]
  auto empty = empty_h.accessor<bool, 1>();
  for (int64_t b = 0; b < out.size(0); ++b) {
    if (empty[b])
      out[b].copy_(default_row);
  }
  return out;
}

// The copy read as a tensor; a fill.
torch::Tensor zero_empty(const torch::Tensor &bag_len, torch::Tensor out) {
  auto empty_h = bag_len.eq(0).cpu();
  // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: {{.*}}; the host loop at line [[@LINE+1]] only writes the rows of `out` that `bag_len.eq(0)` selects: on the device, `out.masked_fill_(<bag_len.eq(0) reshaped to broadcast over the rows>, 0)` writes the same rows {{.*}} [torch-sync-device-to-host]
  for (int64_t b = 0; b < out.size(0); ++b)
    if (empty_h[b].item<bool>())
      out[b].zero_();
  return out;
}

// Negative: the loop does more than the writes (it counts on the host).
int64_t count_and_fill(const torch::Tensor &bag_len, torch::Tensor out) {
  auto empty_h = bag_len.eq(0).cpu();
  // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: {{.*}}; true dependency: through `empty_h`, the host reads the tensor's memory; copy once, later: into pinned memory with `non_blocking=true` and one synchronization before the host reads it [torch-sync-device-to-host]
  auto empty = empty_h.accessor<bool, 1>();
  int64_t n = 0;
  for (int64_t b = 0; b < out.size(0); ++b) {
    if (empty[b])
      out[b].zero_();
    n += empty[b];
  }
  return n;
}

// Negative: an else branch (both rows written, by the host's choice).
void either(const torch::Tensor &mask, torch::Tensor out) {
  auto mask_h = mask.cpu();
  // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: {{.*}}; copy once, later: into pinned memory with `non_blocking=true` and one synchronization before the host reads it [torch-sync-device-to-host]
  auto m = mask_h.accessor<bool, 1>();
  for (int64_t b = 0; b < out.size(0); ++b)
    if (m[b])
      out[b].zero_();
    else
      out[b].fill_(1);
}

// --- a row of an invariant tensor copied every iteration (hard NMS) ----------
std::vector<int64_t> hard_nms(const torch::Tensor &iou, int64_t M, double iou_thr) {
  std::vector<int64_t> keep;
  std::vector<char> suppressed(M, 0);
  for (int64_t i = 0; i < M; ++i) {
    if (suppressed[i])
      continue;
    keep.push_back(i);
    auto over_h = (iou[i] > iou_thr).cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:38: warning: {{.*}}; true dependency: through `over_h`, the host reads the tensor's memory (every iteration of the loop at line [[@LINE-5]]); row `i` of `iou` is copied every iteration, and `iou` does not change in the loop at line [[@LINE-5]]: copy `(iou > iou_thr)` to the host once before the loop and read its row `i` there (one wait per call instead of one per iteration; the copy moves every row) [torch-sync-device-to-host]
    auto over = over_h.accessor<bool, 1>();
    for (int64_t j = i + 1; j < M; ++j)
      if (over[j])
        suppressed[j] = 1;
  }
  return keep;
}

// Not proven: the loop hands `iou` to code that may write it.
int64_t handed_on(const torch::Tensor &iou, int64_t M) {
  int64_t n = 0;
  for (int64_t i = 0; i < M; ++i) {
    auto row = iou[i].gt(0.5).cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:31: warning: {{.*}}; row `i` of `iou` is copied every iteration, and `iou` does not change in the loop at line [[@LINE-2]]: copy `iou.gt(0.5)` to the host once before the loop and read its row `i` there {{.*}}; not proven: the loop may change `iou`: a call of `consume` may write it [torch-sync-device-to-host]
    n += row.accessor<bool, 1>()[0];
    consume(iou);
  }
  return n;
}

// Negative: the threshold changes every iteration: the rows copied are of
// different expressions.
int64_t moving_threshold(const torch::Tensor &iou, int64_t M) {
  int64_t n = 0;
  double thr = 0.1;
  for (int64_t i = 0; i < M; ++i) {
    auto row = (iou[i] > thr).cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:31: warning: {{.*}}(every iteration of the loop at line [[@LINE-2]]); copy once, later: into pinned memory with `non_blocking=true` and one synchronization before the host reads it [torch-sync-device-to-host]
    n += row.accessor<bool, 1>()[0];
    thr += 0.1;
  }
  return n;
}

// Negative: soft NMS writes the copied tensor itself every iteration: no
// "does not change", no restructuring.
std::vector<int64_t> soft_nms(torch::Tensor work, int64_t M) {
  std::vector<int64_t> keep;
  for (int64_t r = 0; r < M; ++r) {
    auto work_h = work.cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: {{.*}}(every iteration of the loop at line [[@LINE-2]]); copy once, later: into pinned memory with `non_blocking=true` and one synchronization before the host reads it [torch-sync-device-to-host]
    const float *w = work_h.data_ptr<float>();
    keep.push_back(static_cast<int64_t>(w[0]));
    work.mul_(0.5);
  }
  return keep;
}

// Negative: a CPU tensor's rows cost no wait.
int64_t cpu_rows(int64_t M) {
  auto iou = torch::rand({8, 8});
  int64_t n = 0;
  for (int64_t i = 0; i < M; ++i)
    n += (iou[i] > 0.5).cpu().accessor<bool, 1>()[0];
  return n;
}

// A function template: the remedy is said once, in the template.
template <typename T> int64_t rows_t(const torch::Tensor &iou, int64_t M, T thr) {
  int64_t n = 0;
  for (int64_t i = 0; i < M; ++i) {
    auto over_h = (iou[i] > thr).cpu();
    // CHECK-MESSAGES: :[[@LINE-1]]:34: warning: {{.*}}; row `i` of `iou` is copied every iteration, and `iou` does not change in the loop at line [[@LINE-2]]: copy `(iou > thr)` to the host once before the loop {{.*}} [torch-sync-device-to-host]
    n += over_h.template accessor<bool, 1>()[0];
  }
  return n;
}
int64_t use_rows(const torch::Tensor &iou) { return rows_t(iou, 4, 0.5) + rows_t(iou, 4, 0.25f); }
