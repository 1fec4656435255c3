// RUN: %check_torch_sync --compile-fixed %s torch-sync-item,torch-sync-device-to-host %t -- %mock_flags
// Issue 41, fourth restructuring: a host value round-tripped through the GPU.
// Metadata made on the host, copied to the device (`auto d = h.to(device);`) and
// read back on the host later in the same function (`d.cpu()`, `d[i].item<T>()`):
// the host original holds the same values, so the read-back reads it instead (no
// copy back, one wait fewer). Proven when neither tensor may change between the
// two copies and a copy's result (now the original itself) is only read.
#include <torch/torch.h>
#include <vector>

void consume(const torch::Tensor &t);
void scribble(torch::Tensor &t);

// --- fixed --------------------------------------------------------------------
// An element read back.
int64_t first_length(const std::vector<int64_t> &lengths, torch::Device device) {
  auto lengths_cpu = torch::tensor(lengths);
  auto lengths_dev = lengths_cpu.to(device);
  auto doubled = lengths_dev * 2;
  return lengths_dev[0].item<int64_t>() + doubled.size(0);
  // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: `item()` on a tensor that may be on the GPU copies the value to the host and waits for all queued GPU work; {{.*}}; `lengths_dev` is `lengths_cpu` copied to the device at line [[@LINE-3]]: read the element from `lengths_cpu` on the host (one wait fewer per call) [torch-sync-item]
}
// CHECK-FIXES: return lengths_cpu[0].item<int64_t>() + doubled.size(0);

// The whole tensor copied back and read through its data pointer (the
// original is a factory's: laid out as the copy is).
int64_t total(const std::vector<int64_t> &sizes) {
  auto offsets_host = torch::tensor(sizes).cumsum(0).contiguous();
  torch::Tensor offsets = offsets_host.cuda();
  auto offsets_again = offsets.cpu();
  // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: `cpu()` on {{.*}}; `offsets` is `offsets_host` copied to the device at line [[@LINE-2]]: read `offsets_host` on the host instead (no copy back, one wait fewer per call) [torch-sync-device-to-host]
  return offsets_again.data_ptr<int64_t>()[sizes.size() - 1];
}
// CHECK-FIXES: auto offsets_again = offsets_host;

// In a loop: both copies every iteration.
int64_t per_step(const std::vector<int64_t> &sizes, int steps) {
  int64_t sum = 0;
  for (int s = 0; s < steps; ++s) {
    auto host = torch::tensor(sizes);
    auto dev = host.to(torch::kCUDA);
    sum += dev.item<int64_t>();
    // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: {{.*}}; `dev` is `host` copied to the device at line [[@LINE-2]]: read the element from `host` on the host (one wait fewer per iteration) [torch-sync-item]
  }
  return sum;
}
// CHECK-FIXES: sum += host.item<int64_t>();

// --- the rewrite in the message, no fix ---------------------------------------
// The device copy is written between.
int64_t device_written(const std::vector<int64_t> &lengths) {
  auto lengths_cpu = torch::tensor(lengths);
  auto lengths_dev = lengths_cpu.to(torch::kCUDA);
  lengths_dev.mul_(2);
  return lengths_dev[0].item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: {{.*}}; no fix: `lengths_dev` may change between the copy to the device and the read-back: `mul_()` may write its memory (the rewrite: `lengths_cpu` for `lengths_dev` in the read) [torch-sync-item]
}

// The host original is written between.
int64_t host_written(const std::vector<int64_t> &lengths) {
  auto lengths_cpu = torch::tensor(lengths);
  auto lengths_dev = lengths_cpu.to(torch::kCUDA);
  lengths_cpu.zero_();
  return lengths_dev[0].item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: {{.*}}; no fix: {{.*}}`zero_()` may write its memory {{.*}} [torch-sync-item]
}

// The host original is passed to code that may write it.
int64_t host_escapes(const std::vector<int64_t> &lengths) {
  auto lengths_cpu = torch::tensor(lengths);
  auto lengths_dev = lengths_cpu.to(torch::kCUDA);
  scribble(lengths_cpu);
  return lengths_dev[0].item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: {{.*}}; no fix: {{.*}} (the rewrite: `lengths_cpu` for `lengths_dev` in the read) [torch-sync-item]
}

// The copy's result is written afterwards (it would write the original).
int64_t result_written(const std::vector<int64_t> &lengths) {
  auto lengths_cpu = torch::tensor(lengths);
  auto lengths_dev = lengths_cpu.to(torch::kCUDA);
  auto back = lengths_dev.cpu();
  // CHECK-MESSAGES: :[[@LINE-1]]:27: warning: {{.*}}; no fix: `back` is written after the read-back (`zero_`) (it would write `lengths_cpu`) (the rewrite: `lengths_cpu` for this copy) [torch-sync-device-to-host]
  back.zero_();
  return lengths_cpu[0].item<int64_t>();
}

// Read through a data pointer, but the original may be a strided view.
int64_t strided(const torch::Tensor &table) {
  auto column = table.cpu().select(1, 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: `cpu()` {{.*}} [torch-sync-device-to-host]
  auto column_dev = column.to(torch::kCUDA);
  auto back = column_dev.cpu();
  // CHECK-MESSAGES: :[[@LINE-1]]:26: warning: {{.*}}; no fix: the host reads the copy's memory through `data_ptr`, and `column` may be laid out differently {{.*}} [torch-sync-device-to-host]
  return back.data_ptr<int64_t>()[0];
}

// --- not this shape: the usual finding ----------------------------------------
// A tensor of unknown device (a parameter) copied "to the device".
int64_t unknown_original(const torch::Tensor &maybe_host) {
  auto dev = maybe_host.to(torch::kCUDA);
  return dev[0].item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: {{.*}}; if the host must decide, decide on the device instead {{.*}} [torch-sync-item]
}

// The copy changes the element type on the way.
double converted(const std::vector<int64_t> &lengths) {
  auto lengths_cpu = torch::tensor(lengths);
  auto as_float = lengths_cpu.to(torch::kCUDA).to(torch::kFloat);
  return as_float[0].item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: {{.*}}; if the host must decide, decide on the device instead {{.*}} [torch-sync-item]
}
