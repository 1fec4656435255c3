// RUN: %check_torch_sync %s torch-sync-mask-index,torch-sync-pageable-copy %t -- %mock_flags
// Issue 40: a field's element kind and pinning are states of the value-flow
// core, as its device is (field-flow.cpp): a read in a method sees the method's
// stores that reach it; from the method's entry it sees every store of the
// program, unless some use may put another tensor in the field.
#include <torch/torch.h>

// Every store is a boolean mask: a selection, for sure.
class Filter {
public:
  explicit Filter(const torch::Tensor &scores) : keep_(scores > 0) {}
  void update(const torch::Tensor &scores) { keep_ = scores.gt(0.5); }
  torch::Tensor kept(const torch::Tensor &x) { return x.index({keep_}); }
  // CHECK-MESSAGES: :[[@LINE-1]]:57: warning: selecting with a boolean mask on a tensor that may be on the GPU {{.*}} [torch-sync-mask-index]

private:
  torch::Tensor keep_;
};

// A mask in the constructor, integer indices stored by one method.
class Picker {
public:
  explicit Picker(const torch::Tensor &scores) : rows_(scores > 0) {}

  // The method's own store reaches the read: an integer gather keeps its
  // shape, no wait.
  torch::Tensor first_rows(const torch::Tensor &x) {
    rows_ = torch::randint(8, {4});
    return x.index({rows_});
  }
  // From the entry: the mask or the indices.
  torch::Tensor picked(const torch::Tensor &x) { return x.index({rows_}); }
  // CHECK-MESSAGES: :[[@LINE-1]]:59: warning: `index({t})` with a tensor that may be a boolean mask on a tensor that may be on the GPU {{.*}} [torch-sync-mask-index]
  // One path stores indices, the other comes from the entry.
  torch::Tensor maybe_reset(const torch::Tensor &x, bool reset) {
    if (reset)
      rows_ = torch::randint(8, {4});
    return x.index({rows_});
    // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `index({t})` with a tensor that may be a boolean mask {{.*}} [torch-sync-mask-index]
  }

private:
  torch::Tensor rows_;
};

// Every store is a mask, but code that is not LibTorch's may replace the
// tensor through a mutable reference: not known.
void refill(torch::Tensor &t);
class Refilled {
public:
  explicit Refilled(const torch::Tensor &scores) : keep_(scores > 0) {}
  void reload() { refill(keep_); }
  torch::Tensor kept(const torch::Tensor &x) { return x.index({keep_}); }
  // CHECK-MESSAGES: :[[@LINE-1]]:57: warning: `index({t})` with a tensor that may be a boolean mask {{.*}} [torch-sync-mask-index]

private:
  torch::Tensor keep_;
};

// Pinning: pageable in the constructor, a pinned buffer stored by one method.
// A non_blocking copy of a transposed view of pinned memory goes through a
// pageable copy first (torch-sync-pageable-copy tells pinned from unknown).
class Stager {
public:
  Stager() : staging_(torch::randn({16, 16})) {}

  // The method's pinned store reaches the copy: pinned, for sure.
  void pinned_step(torch::Tensor &out) {
    staging_ = torch::empty({16, 16}, torch::TensorOptions().pinned_memory(true));
    for (int i = 0; i < 4; ++i)
      out = staging_.t().to(torch::kCUDA, /*non_blocking=*/true);
    // CHECK-MESSAGES: :[[@LINE-1]]:26: warning: a `non_blocking` copy from a non-contiguous view of pinned memory {{.*}} [torch-sync-pageable-copy]
  }
  // From the entry: pageable (the constructor) or pinned (pinned_step): not
  // known, no finding.
  void any_step(torch::Tensor &out) {
    for (int i = 0; i < 4; ++i)
      out = staging_.to(torch::kCUDA, /*non_blocking=*/true);
  }
  // The method's own pageable store.
  void pageable_step(torch::Tensor &out) {
    staging_ = torch::randn({16, 16});
    for (int i = 0; i < 4; ++i)
      out = staging_.to(torch::kCUDA, /*non_blocking=*/true);
    // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: a copy from pageable host memory cannot overlap with the GPU{{.*}} [torch-sync-pageable-copy]
  }

private:
  torch::Tensor staging_;
};

// The same in a class template, analysed in its instantiation.
template <typename T> class TemplatePicker {
public:
  explicit TemplatePicker(const torch::Tensor &scores) : rows_(scores > 0) {}
  torch::Tensor first_rows(const torch::Tensor &x) {
    rows_ = torch::randint(8, {4});
    return x.index({rows_});
  }
  torch::Tensor picked(const torch::Tensor &x) { return x.index({rows_}); }
  // CHECK-MESSAGES: :[[@LINE-1]]:59: warning: `index({t})` with a tensor that may be a boolean mask {{.*}} [torch-sync-mask-index]

private:
  torch::Tensor rows_;
};
torch::Tensor pick(const torch::Tensor &x) {
  TemplatePicker<float> picker(x);
  return picker.first_rows(x) + picker.picked(x);
}
