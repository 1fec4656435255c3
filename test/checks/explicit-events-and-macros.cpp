// RUN: %check_torch_sync %s torch-sync-explicit %t -- %mock_flags
// Found by the blind programs of issue 43: LibTorch 2.11's event is
// c10::cuda::CUDAEvent (at::cuda::CUDAEvent is an alias of it), and its
// synchronize() was not seen; a wait inside a statement macro
// (`do { ... } while (0)`, as C10_CUDA_CHECK expands) is classified by the
// statements around the macro, not by the macro's own body.
#include <torch/torch.h>
#include <c10/cuda/CUDAEvent.h>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#define CHECK_CUDA(expr)                                                                            \
  do {                                                                                             \
    cudaError_t status = (expr);                                                                   \
    if (status != 0)                                                                               \
      std::abort();                                                                                \
  } while (0)

// The event's wait keeps a pinned staging buffer from being refilled while the
// copy recorded before it may still read it.
void upload(at::cuda::CUDAEvent &uploaded, c10::cuda::CUDAEvent &done, float *staging, const float *frames,
            int count) {
  for (int f = 0; f < count; ++f) {
    uploaded.synchronize();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `synchronize` blocks the host until the GPU work it covers is done {{.*}}; intentional barrier: {{.*}} [torch-sync-explicit]
    std::memcpy(staging, frames + f * 64, 64 * sizeof(float));
  }
  done.synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `synchronize` blocks the host until the GPU work it covers is done {{.*}}; intentional barrier: {{.*}} [torch-sync-explicit]
}

int main() {
  auto x = torch::randn({1024}, torch::kCUDA);
  auto y = (x * 2).sum();
  CHECK_CUDA(cudaDeviceSynchronize());
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `cudaDeviceSynchronize` blocks the host {{.*}}; false dependency: nothing after it on the host reads or writes memory the GPU uses{{.*}} [torch-sync-explicit]
  auto z = torch::randn({1024}, torch::kCUDA) + y;
  std::printf("done\n");
  CHECK_CUDA(cudaDeviceSynchronize());
  // CHECK-MESSAGES: :[[@LINE-1]]:14: warning: `cudaDeviceSynchronize` blocks the host {{.*}}; intentional barrier: it comes right before the program ends; keep it: it waits once, at the end [torch-sync-explicit]
  return 0;
}
