// Issue 43, item 3: where the headers do not define TORCH_VERSION_MAJOR/MINOR
// (a unit that includes <ATen/ATen.h> or <torch/script.h> alone: the mock's
// -DMOCK_LIBTORCH_UNVERSIONED), the tool assumes LibTorch 2.11, the newest
// version its catalog was measured on: the syncs of 1.x alone are not reported.
// The global option LibTorchVersion names the version of such units; where the
// headers define it, the headers win.
// RUN: %check_torch_sync %s 'torch-sync-index-put,torch-sync-host-bool,torch-sync-device-to-host' %t -- %mock_flags -DMOCK_LIBTORCH_UNVERSIONED
// RUN: %check_torch_sync --check-prefix=CHECK,CHECKOPT %s 'torch-sync-index-put,torch-sync-host-bool,torch-sync-device-to-host' %t -config="{CheckOptions: {LibTorchVersion: '1.13'}}" -- %mock_flags -DMOCK_LIBTORCH_UNVERSIONED
// RUN: %check_torch_sync --check-prefix=CHECK,CHECKHDR %s 'torch-sync-index-put,torch-sync-host-bool,torch-sync-device-to-host' %t -config="{CheckOptions: {LibTorchVersion: '2.11'}}" -- %mock_flags -DMOCK_LIBTORCH_1_13
// RUN: %check_torch_sync %s 'torch-sync-index-put,torch-sync-host-bool,torch-sync-device-to-host' %t -config="{CheckOptions: {LibTorchVersion: '1.13'}}" -- %mock_flags
#include <ATen/ATen.h>
#include <string>

void step(at::Tensor x, at::Tensor idx, at::Tensor values, at::Tensor probs, const std::string &path) {
  x = x.cuda();
  idx = idx.cuda();
  probs = probs.cuda();
  x.index_put_({idx}, values, true);
  // CHECKOPT-MESSAGES: :[[@LINE-1]]:5: warning: `index_put_` with `accumulate=true` on a tensor that may be on the GPU range-checks the indices on the host (their max and min read with `item()`) in LibTorch 1.13 (the `LibTorchVersion` option), so the host waits for the GPU; {{.*}} [torch-sync-index-put]
  // CHECKHDR-MESSAGES: :[[@LINE-2]]:5: warning: `index_put_` with `accumulate=true` on a tensor that may be on the GPU range-checks the indices on the host (their max and min read with `item()`) in LibTorch 1.13 (the headers' version), so the host waits for the GPU; {{.*}} [torch-sync-index-put]
  auto sample = probs.multinomial(1);
  // CHECKOPT-MESSAGES: :[[@LINE-1]]:23: warning: `multinomial` without replacement on a tensor that may be on the GPU validates the probabilities with host `bool`s (`item()` inside `TORCH_CHECK`) in LibTorch 1.13 (the `LibTorchVersion` option), so the host waits for the GPU; {{.*}} [torch-sync-host-bool]
  // CHECKHDR-MESSAGES: :[[@LINE-2]]:23: warning: `multinomial` without replacement on a tensor that may be on the GPU validates the probabilities with host `bool`s (`item()` inside `TORCH_CHECK`) in LibTorch 1.13 (the headers' version), so the host waits for the GPU; {{.*}} [torch-sync-host-bool]
  torch::save(x, path);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `torch::save` of a tensor that may be on the GPU copies it to the host first{{.*}} [torch-sync-device-to-host]
}
