// Mock of c10/cuda/CUDAGuard.h (the stream guards).
#pragma once
#include <c10/cuda/CUDAStream.h>
namespace c10 {
namespace cuda {
struct CUDAStreamGuard {
  explicit CUDAStreamGuard(CUDAStream stream);
  ~CUDAStreamGuard();
};
void setCurrentCUDAStream(CUDAStream stream);
} // namespace cuda
} // namespace c10
namespace at {
namespace cuda {
using c10::cuda::CUDAStreamGuard;
using c10::cuda::setCurrentCUDAStream;
} // namespace cuda
} // namespace at
