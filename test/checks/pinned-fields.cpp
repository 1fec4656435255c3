// RUN: %check_torch_sync --compile-fixed %s torch-sync-pageable-copy,torch-sync-host-to-device %t -config="{CheckOptions: {RewriteDespiteWaits: true}}" -- %mock_flags
// The loops also read a sum every iteration: RewriteDespiteWaits keeps the
// copies' rewrites in view (no-gain-rewrites.cpp tests the rule itself).
// Issue 25: pinning follows tensors into fields of the program's own classes.
// A field (a tensor, or a container of tensors) that only constructors store
// and everything else only reads is pinned where the constructor stores it, and
// the copy in a method's loop becomes non_blocking in the same run.
#include <torch/torch.h>
#include <vector>

class Trainer {
public:
  explicit Trainer(int64_t batches) : features_(torch::randn({64, 8})) {
    // CHECK-FIXES: explicit Trainer(int64_t batches) : features_(torch::randn({64, 8}).pin_memory()) {
    for (int64_t b = 0; b < batches; ++b) {
      inputs_.push_back(torch::randn({8, 8}));
      // CHECK-FIXES: inputs_.push_back(torch::randn({8, 8}).pin_memory());
    }
    labels_ = torch::randint(10, {64});
    // CHECK-FIXES: labels_ = torch::randint(10, {64}).pin_memory();
  }

  double epoch(torch::Tensor w) {
    double total = 0;
    for (auto &x : inputs_) {
      auto on_gpu = x.to(torch::kCUDA);
      // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: `to(<GPU>)` copies a host tensor to the GPU {{.*}}; pass `non_blocking=true`; the source is pageable host memory, which keeps the copy synchronous, so pin the elements of `inputs_` where they are stored (once, in the constructor; they are only read) [torch-sync-host-to-device]
      // CHECK-FIXES: auto on_gpu = x.to(torch::kCUDA, /*non_blocking=*/true);
      total += (w * on_gpu).sum().item<double>();
    }
    for (int64_t b = 0; b < 8; ++b) {
      auto rows = features_.narrow(0, b * 8, 8).to(torch::kCUDA, true);
      // CHECK-MESSAGES: :[[@LINE-1]]:49: warning: a copy from pageable host memory cannot overlap with the GPU{{.*}}: `features_` is made once in the constructor and only read [torch-sync-pageable-copy]
      auto y = labels_.narrow(0, b * 8, 8).cuda();
      // CHECK-MESSAGES: :[[@LINE-1]]:44: warning: `cuda()` copies a host tensor to the GPU {{.*}}so pin `labels_` where it is made (once, in the constructor; it is only read) [torch-sync-host-to-device]
      // CHECK-FIXES: auto y = labels_.narrow(0, b * 8, 8).to(torch::kCUDA, /*non_blocking=*/true);
      total += (rows.sum() + y.sum()).item<double>();
    }
    return total;
  }

private:
  torch::Tensor features_;
  torch::Tensor labels_;
  std::vector<torch::Tensor> inputs_;
};

double train(Trainer &trainer, torch::Tensor w) { return trainer.epoch(w); }

// Negatives. A field a method stores into (a new batch set each epoch), a
// field written in place, and a class built inside a loop (a pinned allocation
// and a host copy per object): not pinned; the copies are still reported.
class Reloading {
public:
  Reloading() { batches_.push_back(torch::randn({8, 8})); }
  void reload() { batches_.push_back(torch::randn({8, 8})); }
  double epoch() {
    double total = 0;
    for (size_t b = 0; b < batches_.size(); ++b)
      total += batches_[b].to(torch::kCUDA, true).sum().item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: a copy from pageable host memory cannot overlap with the GPU{{.*}}; where it is made anew every step (a loader batch), copy it into a pinned staging buffer {{.*}}[torch-sync-pageable-copy]
    return total;
  }

private:
  std::vector<torch::Tensor> batches_;
};

class Scaled {
public:
  Scaled() : data_(torch::randn({8, 8})) {}
  void scale() { data_.mul_(2); }
  double epoch() {
    double total = 0;
    for (int i = 0; i < 4; ++i)
      total += data_.to(torch::kCUDA, true).sum().item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: a copy from pageable host memory cannot overlap with the GPU{{.*}}; where it is made anew every step (a loader batch), copy it into a pinned staging buffer {{.*}}[torch-sync-pageable-copy]
    return total;
  }

private:
  torch::Tensor data_;
};

class PerStep {
public:
  PerStep() : data_(torch::randn({8, 8})) {}
  double upload() {
    double total = 0;
    for (int i = 0; i < 2; ++i)
      total += data_.to(torch::kCUDA, true).sum().item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: a copy from pageable host memory cannot overlap with the GPU{{.*}}; where it is made anew every step (a loader batch), copy it into a pinned staging buffer {{.*}}[torch-sync-pageable-copy]
    return total;
  }

private:
  torch::Tensor data_;
};

double per_step() {
  double total = 0;
  for (int step = 0; step < 4; ++step) {
    PerStep batch;
    total += batch.upload();
  }
  return total;
}

// A class that moves its own tensors (its own to()): its fields' placement and
// pinning are not followed, so nothing is reported.
class Movable {
public:
  Movable() : data_(torch::randn({8, 8})) {}
  void to(torch::Device device) { data_ = data_.to(device, /*non_blocking=*/true); }
  double epoch() {
    double total = 0;
    for (int i = 0; i < 4; ++i)
      total += data_.to(torch::kCUDA, true).sum().item<double>();
    return total;
  }

private:
  torch::Tensor data_;
};

// A member function template that may store into the field through a
// dependent call: the stores cannot all be seen, so the field's memory is
// unknown and nothing is reported.
class Templated {
public:
  Templated() { rows_.push_back(torch::randn({8, 8})); }
  template <typename T> void add(T value) { rows_.push_back(value); }
  double epoch() {
    double total = 0;
    for (const auto &r : rows_)
      total += r.to(torch::kCUDA, true).sum().item<double>();
    return total;
  }

private:
  std::vector<torch::Tensor> rows_;
};

// Already pinned where the constructor stores it, and copied asynchronously:
// nothing to report. A copy to the CPU is no host-to-device copy either.
class AlreadyPinned {
public:
  AlreadyPinned() : data_(torch::randn({8, 8}).pin_memory()) {}
  double epoch() {
    double total = 0;
    for (int i = 0; i < 4; ++i) {
      total += data_.to(torch::kCUDA, true).sum().item<double>();
      total += data_.to(torch::kCPU).sum().item<double>();
    }
    return total;
  }

private:
  torch::Tensor data_;
};

// A store spelled by a macro: the copy is reported, but the macro's expansion is
// never rewritten, so no pinning fix is offered.
#define MAKE_BATCH torch::randn({8, 8})
class MacroStored {
public:
  MacroStored() { rows_.push_back(MAKE_BATCH); }
  double epoch() {
    double total = 0;
    for (const auto &r : rows_)
      total += r.to(torch::kCUDA, true).sum().item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: a copy from pageable host memory cannot overlap with the GPU{{.*}}; where it is made anew every step (a loader batch), copy it into a pinned staging buffer {{.*}}[torch-sync-pageable-copy]
    return total;
  }

private:
  std::vector<torch::Tensor> rows_;
};
