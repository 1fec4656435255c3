// RUN: %check_torch_sync --compile-fixed %s torch-sync-pageable-copy,torch-sync-host-to-device %t -- %mock_flags
#include <torch/torch.h>
#include <vector>

// --- fixed: the source is made once before the loop and only read --------------
void dataset_slices(torch::Device device, int steps) {
  auto inputs = torch::randn({1024, 64});
  auto labels = torch::randint(10, {1024});
  // The device is not known to be CUDA: pinning is guarded (pin_memory() needs CUDA).
  // CHECK-FIXES: auto inputs = (torch::cuda::is_available() ? torch::randn({1024, 64}).pin_memory() : torch::randn({1024, 64}));
  // CHECK-FIXES: auto labels = (torch::cuda::is_available() ? torch::randint(10, {1024}).pin_memory() : torch::randint(10, {1024}));
  for (int s = 0; s < steps; ++s) {
    auto x = inputs.narrow(0, s * 16, 16).to(device, true);
    // CHECK-MESSAGES: :[[@LINE-1]]:43: warning: a copy from pageable host memory cannot overlap with the GPU: even with `non_blocking=true` the driver stages it through a pinned buffer and the host waits (sync debug mode does not see this); false dependency: the host does not need to wait for the copy (every iteration of the loop at line [[@LINE-2]]); pin the host tensor where it is made (`.pin_memory()`, or options with `pinned_memory(true)`): `inputs` is made once before the loop and only read [torch-sync-pageable-copy]
    auto y = labels.narrow(0, s * 16, 16).to(device);
    // CHECK-MESSAGES: :[[@LINE-1]]:43: warning: `to(<GPU>)` copies a host tensor to the GPU and blocks the host until the copy is done; false dependency: the host does not need to wait for a copy to the GPU (every iteration of the loop at line [[@LINE-4]]); pass `non_blocking=true`; the source is pageable host memory, which keeps the copy synchronous, so pin `labels` where it is made (once, before the loop; it is only read) [torch-sync-host-to-device]
    // CHECK-FIXES: auto y = labels.narrow(0, s * 16, 16).to(device, /*non_blocking=*/true);
  }
}

// Known CUDA target: pinned without a guard.
void to_cuda(int steps) {
  auto table = torch::rand({256});
  for (int s = 0; s < steps; ++s) {
    auto t = table.to(torch::kCUDA, true);
    // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: a copy from pageable host memory cannot overlap
  }
}
// CHECK-FIXES: auto table = torch::rand({256}).pin_memory();

// --- reported, no fix --------------------------------------------------------
void not_pinnable(torch::Device device, int steps, std::vector<float> &buffer) {
  auto blob = torch::from_blob(buffer.data(), {16});
  auto written = torch::zeros({16});
  for (int s = 0; s < steps; ++s) {
    auto b = blob.to(device, true);
    // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: a copy from pageable host memory {{.*}}; where it is made anew every step (a loader batch), copy it into a pinned staging buffer allocated once and reused (wait on an event recorded after the copy before refilling it) [torch-sync-pageable-copy]
    auto fresh = (written * 2).to(device, true); // made every step
    // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: a copy from pageable host memory cannot overlap
    written.fill_(s); // written in place: pinning it would race with the copy
    auto w = written.to(device, true);
    // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: a copy from pageable host memory cannot overlap
  }
}
// CHECK-FIXES: auto blob = torch::from_blob(buffer.data(), {16});
// CHECK-FIXES: auto written = torch::zeros({16});

void non_contiguous(torch::Device device, int steps) {
  auto pinned = torch::randn({64, 64}, torch::TensorOptions().pinned_memory(true));
  for (int s = 0; s < steps; ++s) {
    auto q = pinned.t().to(device, true);
    // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: a `non_blocking` copy from a non-contiguous view of pinned memory first makes a contiguous copy in pageable memory, so the host waits for the transfer; {{.*}}; copy a contiguous pinned tensor (make the layout contiguous once, where the tensor is made) and rearrange it on the device [torch-sync-pageable-copy]
    auto c = pinned.narrow(1, 0, 8).to(device, true);
    // CHECK-MESSAGES: :[[@LINE-1]]:37: warning: a `non_blocking` copy from a non-contiguous view
  }
}

// A device-to-host copy into pageable memory.
void into_pageable(int steps) {
  auto gpu = torch::randn({16}, torch::kCUDA);
  auto host = torch::empty({16});
  for (int s = 0; s < steps; ++s) {
    host.copy_(gpu, true);
    // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: a copy into pageable host memory cannot overlap
  }
}

// --- negatives ---------------------------------------------------------------
void negatives(torch::Device device, torch::Tensor unknown, int steps) {
  auto pinned = torch::randn({64, 64}, torch::TensorOptions().pinned_memory(true));
  auto pinned_later = torch::randn({64}).pin_memory();
  auto gpu = torch::randn({16}, torch::kCUDA);
  auto host_pinned = torch::empty({16}, torch::TensorOptions().pinned_memory(true));
  for (int s = 0; s < steps; ++s) {
    auto a = pinned.narrow(0, s, 1).to(device, true);  // a contiguous slice of pinned memory
    auto b = pinned_later.to(device, true);
    auto c = unknown.to(device, true);                 // unknown memory: not reported
    auto d = gpu.to(torch::kCPU, true);                // to(CPU, non_blocking) pins its result
    host_pinned.copy_(gpu, true);
    auto e = pinned.to(torch::kCPU, true);             // host to host
  }
}

// Module::to with non_blocking moves parameters (device to device here): not a
// tensor copy this check knows.
void module_to(torch::nn::Linear &model, torch::Device device) {
  model->to(device, /*non_blocking=*/true);
}

// Macros and templates: a copy spelled in a macro body is reported at the
// expansion; its pin edit is on the declaration, spelled in the file. A template
// is checked once, in its first instantiation.
#define TO_DEVICE(t, d) (t).to(d, true)
void macro_case(torch::Device device, int steps) {
  auto features = torch::randn({64, 4});
  // CHECK-FIXES: auto features = (torch::cuda::is_available() ? torch::randn({64, 4}).pin_memory() : torch::randn({64, 4}));
  for (int s = 0; s < steps; ++s) {
    auto f = TO_DEVICE(features, device);
    // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: a copy from pageable host memory cannot overlap
    // CHECK-FIXES: auto f = TO_DEVICE(features, device);
  }
}
template <typename Index> void template_case(torch::Device device, Index steps) {
  auto rows = torch::randn({64, 4});
  for (Index s = 0; s < steps; ++s) {
    auto r = rows.to(device, true);
    // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: a copy from pageable host memory cannot overlap
  }
}
template void template_case<int>(torch::Device, int);
template void template_case<long>(torch::Device, long);

// The flag spelled `/*non_blocking=*/true` by the user (the common spelling in
// public code) is reported like any other (issue 43 item 4: it was taken for
// the tool's own edit). The tool's own edit carries its marker and is not.
torch::Tensor from_vector(std::vector<float> &values, torch::Device device) {
  auto host = torch::from_blob(values.data(), {static_cast<long>(values.size())});
  return host.to(device, /*non_blocking=*/true);
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: a copy from pageable host memory cannot overlap
}
torch::Tensor marked_by_the_tool(std::vector<float> &values) {
  auto host = torch::from_blob(values.data(), {static_cast<long>(values.size())});
  return host.to(torch::kCUDA, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
}
// An index tensor moved to the indexed tensor's device inside the index list
// (torch-sync-index-put's fix, now that the spelling no longer hides it): small.
torch::Tensor index_list(torch::Tensor x) {
  auto host_idx = torch::randint(64, {8}, torch::kLong);
  return x.index({host_idx.to(torch::kCUDA, /*non_blocking=*/true)});
}
