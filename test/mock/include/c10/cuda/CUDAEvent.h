// Mock of c10/cuda/CUDAEvent.h (LibTorch 2.11: the event lives in c10::cuda,
// at::cuda::CUDAEvent names the same class).
#pragma once
#include <c10/cuda/CUDAStream.h>
namespace c10 {
namespace cuda {
struct CUDAEvent {
  CUDAEvent() noexcept = default;
  void record(const CUDAStream &stream);
  bool query() const;
  void synchronize() const;
  float elapsed_time(const CUDAEvent &other) const;
};
} // namespace cuda
} // namespace c10
namespace at {
namespace cuda {
using c10::cuda::CUDAEvent;
} // namespace cuda
} // namespace at
