// RUN: %check_torch_sync --compile-fixed %s torch-sync-pageable-copy,torch-sync-host-to-device %t -config="{CheckOptions: {RewriteDespiteWaits: true}}" -- %mock_flags
// The loops also read a sum every iteration: RewriteDespiteWaits keeps the
// copies' rewrites in view (no-gain-rewrites.cpp tests the rule itself).
// Issue 25: pinning follows tensors into local containers. Batches stored in a
// std::vector (push_back/emplace_back/`v[i] = t`) before the loop and only read
// afterwards are pinned where they are stored, and the copy becomes non_blocking
// in the same run; read through `v[i]`, `v.at(i)` or a range-for element.
#include <torch/torch.h>
#include <vector>

void shuffle_in_place(std::vector<torch::Tensor> &batches);

double vector_batches(torch::Tensor w) {
  std::vector<torch::Tensor> inputs;
  std::vector<torch::Tensor> labels;
  auto dataset = torch::randn({64, 8});
  for (int b = 0; b < 8; ++b) {
    inputs.push_back(torch::randn({8, 8}));
    // CHECK-FIXES: inputs.push_back(torch::randn({8, 8}).pin_memory());
    labels.emplace_back(dataset.narrow(0, b * 8, 8));
    // CHECK-FIXES: labels.emplace_back(dataset.narrow(0, b * 8, 8).pin_memory());
  }
  double total = 0;
  for (size_t b = 0; b < inputs.size(); ++b) {
    auto x = inputs[b].to(torch::kCUDA);
    // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: `to(<GPU>)` copies a host tensor to the GPU {{.*}}; pass `non_blocking=true`; the source is pageable host memory, which keeps the copy synchronous, so pin the elements of `inputs` where they are stored (once, before the loop; they are only read) [torch-sync-host-to-device]
    // CHECK-FIXES: auto x = inputs[b].to(torch::kCUDA, /*non_blocking=*/true);
    auto y = labels.at(b).to(torch::kCUDA, true);
    // CHECK-MESSAGES: :[[@LINE-1]]:27: warning: a copy from pageable host memory cannot overlap with the GPU{{.*}}: the elements of `labels` are stored before the loop and only read [torch-sync-pageable-copy]
    total += (w * x + y).sum().item<double>();
  }
  for (const auto &x : inputs) {
    auto on_gpu = x.to(torch::kCUDA);  // the first copy of `inputs` pinned its elements
    // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: `to(<GPU>)` copies a host tensor to the GPU {{.*}}; the source is pageable host memory, so a large copy stays synchronous {{.*}}[torch-sync-host-to-device]
    // CHECK-FIXES: auto on_gpu = x.to(torch::kCUDA, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;  // the first copy of `inputs` pinned its elements
    total += on_gpu.sum().item<double>();
  }
  return total;
}

// Negatives: elements stored inside the loop (a new batch every step), written
// in place, stored as views of a tensor written later, or a container handed to
// other code: not pinned (the message offers the staging-buffer remedy, or none).
double made_every_step(torch::Tensor w) {
  std::vector<torch::Tensor> batches;
  double total = 0;
  for (int step = 0; step < 4; ++step) {
    batches.push_back(torch::randn({8, 8}));
    auto x = batches.back().to(torch::kCUDA);
    // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `to(<GPU>)` copies a host tensor to the GPU {{.*}}; the source is pageable host memory, so a large copy stays synchronous {{.*}}[torch-sync-host-to-device]
    // CHECK-FIXES: auto x = batches.back().to(torch::kCUDA, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
    total += (w * x).sum().item<double>();
  }
  return total;
}

double written_or_escaping(torch::Tensor w) {
  std::vector<torch::Tensor> scaled, shuffled, views;
  auto base = torch::randn({16, 8});
  for (int b = 0; b < 2; ++b) {
    scaled.push_back(torch::randn({8, 8}));
    shuffled.push_back(torch::randn({8, 8}));
    views.push_back(base.narrow(0, b * 8, 8));
  }
  scaled[0].mul_(torch::ones({8, 8}));
  shuffle_in_place(shuffled);
  base.add_(torch::ones({16, 8}));
  double total = 0;
  for (int b = 0; b < 2; ++b) {
    total += scaled[b].to(torch::kCUDA, true).sum().item<double>();
    total += shuffled[b].to(torch::kCUDA, true).sum().item<double>();
    total += views[b].to(torch::kCUDA, true).sum().item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: a copy from pageable host memory cannot overlap with the GPU{{.*}}; where it is made anew every step (a loader batch), copy it into a pinned staging buffer {{.*}}[torch-sync-pageable-copy]
  }
  return total;
}

// A step function (a lambda run by a harness or trainer) that copies from a
// container the enclosing function filled: the capture is no escape.
template <typename Step> void run_steps(Step step) {
  for (int i = 0; i < 3; ++i)
    step(i);
}
double captured_batches(torch::Tensor w) {
  std::vector<torch::Tensor> batches;
  for (int b = 0; b < 4; ++b)
    batches.push_back(torch::randn({8, 8}));
  // CHECK-FIXES: batches.push_back(torch::randn({8, 8}).pin_memory());
  double total = 0;
  run_steps([&](int) {
    for (size_t b = 0; b < batches.size(); ++b) {
      auto x = batches[b].to(torch::kCUDA);
      // CHECK-MESSAGES: :[[@LINE-1]]:27: warning: `to(<GPU>)` copies a host tensor to the GPU {{.*}}so pin the elements of `batches` where they are stored {{.*}}[torch-sync-host-to-device]
      // CHECK-FIXES: auto x = batches[b].to(torch::kCUDA, /*non_blocking=*/true);
      total += (w * x).sum().item<double>();
    }
  });
  return total;
}

// Views of one host tensor (`split`, `chunk`, `unbind`): pinned where that tensor
// is split (the views of the pinned copy are pinned); not when the tensor is
// written later, or when the container comes from other code.
std::vector<torch::Tensor> load_batches();
double split_batches(torch::Tensor w) {
  auto images = torch::rand({64, 8});
  auto image_batches = images.split(8);
  // CHECK-FIXES: auto image_batches = images.pin_memory().split(8);
  auto written = torch::rand({64, 8});
  auto written_batches = written.chunk(8);
  written.mul_(2.0);
  auto loaded = load_batches();
  double total = 0;
  for (size_t b = 0; b < image_batches.size(); ++b) {
    total += image_batches[b].to(torch::kCUDA).sum().item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:31: warning: `to(<GPU>)` copies a host tensor to the GPU {{.*}}so pin the elements of `image_batches` where they are stored {{.*}}[torch-sync-host-to-device]
    // CHECK-FIXES: total += image_batches[b].to(torch::kCUDA, /*non_blocking=*/true).sum().item<double>();
    total += written_batches[b].to(torch::kCUDA, true).sum().item<double>();
    // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: a copy from pageable host memory cannot overlap with the GPU{{.*}}; where it is made anew every step (a loader batch), copy it into a pinned staging buffer {{.*}}[torch-sync-pageable-copy]
    total += loaded[b].to(torch::kCUDA, true).sum().item<double>();
  }
  return total;
}

// Stores spelled through a macro are not rewritten (the pin would land in a macro
// argument); the copy still gets non_blocking. A function template is analysed
// like a function (its one instantiation here).
#define STORE_BATCH(container, value) container.push_back(value)
double stored_by_macro(torch::Tensor w) {
  std::vector<torch::Tensor> batches;
  for (int b = 0; b < 4; ++b)
    STORE_BATCH(batches, torch::randn({8, 8}));
  // CHECK-FIXES: STORE_BATCH(batches, torch::randn({8, 8}));
  double total = 0;
  for (size_t b = 0; b < batches.size(); ++b)
    total += batches[b].to(torch::kCUDA).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: `to(<GPU>)` copies a host tensor to the GPU {{.*}}; the source is pageable host memory, so a large copy stays synchronous {{.*}}[torch-sync-host-to-device]
  // CHECK-FIXES: total += batches[b].to(torch::kCUDA, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */.sum().item<double>();
  return total;
}
template <typename Scalar> Scalar templated_batches(torch::Tensor w) {
  std::vector<torch::Tensor> batches;
  for (int b = 0; b < 4; ++b)
    batches.push_back(torch::randn({8, 8}));
  // CHECK-FIXES: batches.push_back(torch::randn({8, 8}).pin_memory());
  Scalar total = 0;
  for (size_t b = 0; b < batches.size(); ++b)
    total += (w * batches[b].to(torch::kCUDA)).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: `to(<GPU>)` copies a host tensor to the GPU {{.*}}so pin the elements of `batches` where they are stored {{.*}}[torch-sync-host-to-device]
  // CHECK-FIXES: total += (w * batches[b].to(torch::kCUDA, /*non_blocking=*/true)).sum().item<double>();
  return total;
}
template double templated_batches<double>(torch::Tensor);
