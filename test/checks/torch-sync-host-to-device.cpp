// RUN: %check_torch_sync %s torch-sync-host-to-device %t -- %mock_flags
#include <torch/torch.h>
#include <vector>

// --- positive: add non_blocking ---------------------------------------------
void moves(torch::Device device, torch::Tensor maybe_cpu) {
  auto host = torch::rand({16});
  auto a = host.cuda();
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `cuda()` copies a host tensor to the GPU and blocks the host until the copy is done; false dependency: the host does not need to wait for a copy to the GPU; pass `non_blocking=true`; the source is pageable host memory, so a large copy stays synchronous until the source is pinned (`.pin_memory()` where it is made, or a pinned staging buffer reused across steps) [torch-sync-host-to-device]
  // CHECK-FIXES: auto a = host.to(torch::kCUDA, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
  auto b = host.to(torch::kCUDA);
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `to(<GPU>)` copies a host tensor to the GPU
  // CHECK-FIXES: auto b = host.to(torch::kCUDA, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
  auto c = maybe_cpu.to(device);
  // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: `to(<GPU>)` may copy a host tensor to the GPU {{.*}}; no fix: neither the source is known to be on the host nor the target to be a GPU, and a copy from the GPU to the host with `non_blocking` could be read before it is done [torch-sync-host-to-device]
  // CHECK-FIXES: auto c = maybe_cpu.to(device);
  auto c2 = maybe_cpu.to(torch::kCUDA);
  // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: `to(<GPU>)` may copy a host tensor to the GPU
  // CHECK-FIXES: auto c2 = maybe_cpu.to(torch::kCUDA, /*non_blocking=*/true);
  auto d = host.to(device, torch::kHalf);
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `to(<GPU>)` copies a host tensor
  // CHECK-FIXES: auto d = host.to(device, torch::kHalf, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
  auto e = host.to(a);
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `to(<GPU>)` copies a host tensor
  // CHECK-FIXES: auto e = host.to(a, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
  auto f = host.to(torch::kCUDA, /*non_blocking=*/false);
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `to(<GPU>)` copies a host tensor
  // CHECK-FIXES: auto f = host.to(torch::kCUDA, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
  a.copy_(host);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `copy_()` copies a host tensor to the GPU
  // CHECK-FIXES: a.copy_(host, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
}

void loader(std::vector<torch::data::Example<>> &batches, torch::Device device) {
  for (auto &batch : batches) {
    auto data = batch.data.to(device);
    // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: `to(<GPU>)` copies a host tensor to the GPU and blocks the host until the copy is done; false dependency: the host does not need to wait for a copy to the GPU (every iteration of the loop at line [[@LINE-2]]); pass `non_blocking=true`; a pageable source still stalls for large copies (measured: 256 MB waited, 16 KB did not); this is a loader batch, made anew every step: for the copy to overlap with compute, copy it into a pinned staging buffer allocated once and reused (wait on an event recorded after the copy before refilling it) [torch-sync-host-to-device]
    // CHECK-FIXES: auto data = batch.data.to(device, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
  }
}

// --- positive: create on the device instead of copying ------------------------
void create_then_copy(torch::Device device, int64_t n) {
  auto z = torch::zeros({n, 3}).to(torch::kCUDA);
  // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: `zeros(...).to(...)` fills the tensor on the host, then copies it to the GPU and blocks the host; false dependency: the values can be made on the GPU directly; create it on the device: no copy at all [torch-sync-host-to-device]
  // CHECK-FIXES: auto z = torch::zeros({n, 3}, torch::device(torch::kCUDA));
  auto o = torch::ones({7}).to(device);
  // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `ones(...).to(...)` fills
  // CHECK-FIXES: auto o = torch::ones({7}, torch::device(device));
  auto f = torch::full({2}, 0.5, torch::kFloat).cuda();
  // CHECK-MESSAGES: :[[@LINE-1]]:49: warning: `full(...).cuda()` fills
  // CHECK-FIXES: auto f = torch::full({2}, 0.5, torch::TensorOptions(torch::kFloat).device(torch::kCUDA));
  const auto opts = torch::TensorOptions().dtype(torch::kLong);
  auto r = torch::arange(10, opts).to(torch::kCUDA);
  // CHECK-MESSAGES: :[[@LINE-1]]:36: warning: `arange(...).to(...)` fills
  // CHECK-FIXES: auto r = torch::arange(10, opts.device(torch::kCUDA));
  auto g = torch::zeros({2}, torch::requires_grad()).to(torch::kCUDA);
  // CHECK-MESSAGES: :[[@LINE-1]]:54: warning: `zeros(...).to(...)` fills {{.*}}; create it on the device: no copy at all [torch-sync-host-to-device]
  // CHECK-FIXES: auto g = torch::zeros({2}, torch::requires_grad()).to(torch::kCUDA);
}

// --- positive without a fix: the source is written after the copy -------------
void staging(torch::Tensor gpu) {
  auto pinned = torch::empty({64}, torch::TensorOptions().pinned_memory(true));
  for (int i = 0; i < 4; ++i) {
    gpu.copy_(pinned);
    // CHECK-MESSAGES: :[[@LINE-1]]:9: warning: `copy_()` copies a host tensor to the GPU {{.*}}; no fix: the source is written after the copy, which would race with an asynchronous copy from pinned memory [torch-sync-host-to-device]
    pinned.fill_(i);
  }
}

// --- negative ---------------------------------------------------------------
void negatives(torch::Tensor maybe, torch::Device device) {
  auto g = torch::rand({4}, torch::kCUDA);
  auto a = g.cuda();                          // already on the GPU: no copy
  auto b = g.to(torch::kCUDA);
  auto host = torch::rand({4});
  auto c = host.to(torch::kCUDA, /*non_blocking=*/true);  // already asynchronous
  auto d = host.to(torch::kDouble);           // dtype only
  auto e = host.to(torch::kCPU);              // stays on the host
  g.copy_(a);                                 // GPU to GPU
  maybe.copy_(maybe);                         // nothing known about either side
  bool flag = true;
  auto f = host.to(device, flag);             // the author controls the flag
  auto r = torch::rand({3}).to(torch::kCUDA); // random: CPU and GPU generators differ
  // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `to(<GPU>)` copies a host tensor
  // CHECK-FIXES: auto r = torch::rand({3}).to(torch::kCUDA, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */; // random: CPU and GPU generators differ
}

struct Net : torch::nn::Module {};
void module_to(Net &net) { net.to(torch::kCUDA); } // nn::Module::to is not Tensor::to

#define TO_GPU(t) (t).cuda()
void in_macro() {
  auto host = torch::rand({2});
  auto g = TO_GPU(host);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `cuda()` copies a host tensor to the GPU {{.*}}[torch-sync-host-to-device]
}

template <typename T> void generic(T t) { auto g = t.cuda(); }
void silenced() {
  auto host = torch::rand({2});
  auto g = host.cuda(); // NOLINT
}

// Issue 43, item 12 (a public repository's PointCloud::to): tensors held in
// fields, the device a parameter. When the field is on the GPU and the device
// is the CPU, `non_blocking` would make an asynchronous copy to the host that
// the caller reads before it is done: reported, no fix.
struct PointCloud {
  torch::Tensor points, colors;
  void to(torch::Device device) {
    points = points.to(device);
    // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: `to(<GPU>)` may copy a host tensor to the GPU {{.*}}; no fix: neither the source is known to be on the host nor the target to be a GPU{{.*}}[torch-sync-host-to-device]
    // CHECK-FIXES: points = points.to(device);
    colors = torch::rand({4}).to(device, torch::kHalf);
    // CHECK-MESSAGES: :[[@LINE-1]]:31: warning: `to(<GPU>)` copies a host tensor to the GPU
    // CHECK-FIXES: colors = torch::rand({4}).to(device, torch::kHalf, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
  }
};
// A device that is the CPU only where no GPU exists (LibTorch's examples): no
// tensor can be on a GPU then, so the copy never goes to the host: fixed.
void example_device(std::vector<torch::Tensor> &inputs) {
  torch::Device device = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  auto x = inputs[0].to(device);
  // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: `to(<GPU>)` may copy a host tensor to the GPU
  // CHECK-FIXES: auto x = inputs[0].to(device, /*non_blocking=*/true);
  torch::Device either(torch::cuda::is_available() ? torch::kCPU : torch::kCUDA);
  auto y = inputs[1].to(either);
  // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: `to(<GPU>)` may copy a host tensor to the GPU {{.*}}; no fix: neither the source
  // CHECK-FIXES: auto y = inputs[1].to(either);
}

// To another tensor's device (fresh sample 6: a custom op's backward,
// `(indptr2 - indptr1).to(grad_in.options())`, both of unknown place): as
// likely a dtype change on one device, as for `copy_` between two such
// tensors; reported when one side is known.
void to_other_tensor(const torch::Tensor &a, const torch::Tensor &b, std::vector<float> &host) {
  auto same = (a - b).to(b.options());
  auto same_device = a.to(b.device());
  auto same_tensor = a.to(b);
  auto same_dtype = a.to(b.options().dtype(torch::kFloat));
  auto from_host = torch::from_blob(host.data(), {4}).to(b.options());
  // CHECK-MESSAGES: :[[@LINE-1]]:55: warning: `to(<GPU>)` copies a host tensor to the GPU
  // CHECK-FIXES: auto from_host = torch::from_blob(host.data(), {4}).to(b.options(), /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
  auto to_cuda = b.cuda();
  // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: `cuda()` may copy a host tensor to the GPU
  // CHECK-FIXES: auto to_cuda = b.to(torch::kCUDA, /*non_blocking=*/true);
  auto onto_gpu = a.to(to_cuda.options());
  // CHECK-MESSAGES: :[[@LINE-1]]:21: warning: `to(<GPU>)` may copy a host tensor to the GPU
  // CHECK-FIXES: auto onto_gpu = a.to(to_cuda.options(), /*non_blocking=*/true);
  // The options name a device of their own: not the donor's.
  auto named = a.to(b.options().device(torch::kCUDA));
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `to(<GPU>)` may copy a host tensor to the GPU
  // CHECK-FIXES: auto named = a.to(b.options().device(torch::kCUDA), /*non_blocking=*/true);
}
