// A header-only GPU library on the system include path (the shape of CUTLASS's
// and many projects' device buffers): inline wrappers around the CUDA runtime,
// some of which block the host (issue 42: counted at the user's call).
#pragma once
#include <cstddef>
#include <cuda_runtime_api.h>

namespace gpulib {

template <typename T> class StagingBuffer {
public:
  explicit StagingBuffer(std::size_t n) : n_(n) {}
  // Blocking: cudaMemcpy waits for the copy (and the work queued before it).
  void copy_from_host(const T *host) { cudaMemcpy(device_, host, bytes(), cudaMemcpyHostToDevice); }
  // Stream-ordered: returns at once.
  void copy_from_host_async(const T *host, cudaStream_t stream) {
    cudaMemcpyAsync(device_, host, bytes(), cudaMemcpyHostToDevice, stream);
  }
  // Blocking through a helper.
  void copy_to_host(T *host) const { copy_out(host); }
  std::size_t size() const { return n_; }

private:
  void copy_out(T *host) const { cudaMemcpy(host, device_, bytes(), cudaMemcpyDeviceToHost); }
  std::size_t bytes() const { return n_ * sizeof(T); }
  T *device_ = nullptr;
  std::size_t n_;
};

} // namespace gpulib
