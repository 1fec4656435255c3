// RUN: %check_torch_sync %s torch-sync-item %t -- %mock_flags
// Issue 40: a method's fields are states of the value-flow core, as its locals
// are. A read of `this->f` sees the stores of the method that reach it; from the
// method's entry, after a call that may store into the object, or through an
// alias, it sees every store the program makes (the order of the methods'
// calls is not known).
#include <torch/torch.h>

class Meter {
public:
  void keep_on_gpu(const torch::Tensor &t) { total_ = t.cuda(); }

  // The method's own store reaches the read: a CPU tensor, no wait.
  float reset_and_read() {
    total_ = torch::zeros({1});
    return total_.item<float>();
  }
  // Negative of the above through `this->`.
  float reset_and_read_explicit() {
    this->total_ = torch::ones({1});
    return this->total_.item<float>();
  }

  // From the entry: whatever a method stored (keep_on_gpu: the GPU).
  float read() { return total_.item<float>(); }
  // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: `item()` on a tensor that may be on the GPU {{.*}} [torch-sync-item]

  // A call of a non-const method on this object may store into it.
  float after_call(const torch::Tensor &t) {
    total_ = torch::zeros({1});
    keep_on_gpu(t);
    return total_.item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: `item()` on a tensor that may be on the GPU {{.*}} [torch-sync-item]
  }

  // One path stores on the CPU, the other comes from the entry.
  float branch(bool reset) {
    if (reset)
      total_ = torch::zeros({1});
    return total_.item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: `item()` on a tensor that may be on the GPU {{.*}} [torch-sync-item]
  }

  // Written through a reference or by a lambda that captures this.
  float through_reference(const torch::Tensor &t) {
    total_ = torch::zeros({1});
    torch::Tensor &alias = total_;
    alias = t.cuda();
    return total_.item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: `item()` on a tensor that may be on the GPU {{.*}} [torch-sync-item]
  }
  float through_lambda(const torch::Tensor &t) {
    total_ = torch::zeros({1});
    auto move = [this, &t] { total_ = t.cuda(); };
    move();
    return total_.item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: `item()` on a tensor that may be on the GPU {{.*}} [torch-sync-item]
  }

private:
  torch::Tensor total_;
};
