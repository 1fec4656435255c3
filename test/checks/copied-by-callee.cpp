// RUN: %check_torch_sync %s torch-sync-device-to-host %t -- %mock_flags
// Issue 41, the same tensor read twice across a call: a function copies a
// tensor to the host and passes the same tensor to a function of this unit
// that copies it to the host again. The remedy names the callee and both
// lines; no fix (the callee's interface changes).
#include <torch/torch.h>

int64_t bounds_of(const torch::Tensor &offsets) {
  auto host = offsets.cpu();
  // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: {{.*}}; true dependency: {{.*}} [torch-sync-device-to-host]
  return host.data_ptr<int64_t>()[0];
}

int64_t pack(const torch::Tensor &offsets) {
  auto offsets_h = offsets.cpu();
  // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: {{.*}}; `bounds_of` (called at line [[@LINE+2]]) copies the same tensor to the host again (line 9): give it this copy (a host-tensor parameter) and one wait per call goes [torch-sync-device-to-host]
  int64_t first = offsets_h.data_ptr<int64_t>()[1];
  return first + bounds_of(offsets);
}

// Negative: another tensor object is passed (reassigned between).
int64_t reassigned(torch::Tensor offsets) {
  auto offsets_h = offsets.cpu();
  // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: {{.*}}; copy once, later: into pinned memory with `non_blocking=true` and one synchronization before the host reads it [torch-sync-device-to-host]
  int64_t first = offsets_h.data_ptr<int64_t>()[1];
  offsets = offsets * 2;
  return first + bounds_of(offsets);
}

// Negative: the callee does not copy.
int64_t width(const torch::Tensor &t) { return t.size(0); }
int64_t plain(const torch::Tensor &offsets) {
  auto offsets_h = offsets.cpu();
  // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: {{.*}}; copy once, later: into pinned memory with `non_blocking=true` and one synchronization before the host reads it [torch-sync-device-to-host]
  return offsets_h.data_ptr<int64_t>()[0] + width(offsets);
}
