// Mock of c10/cuda/CUDAStream.h (the synchronize entry points).
#pragma once
#include <cuda_runtime_api.h>
namespace c10 {
namespace cuda {
class CUDAStream {
public:
  void synchronize() const;
  bool query() const;
  cudaStream_t stream() const;
};
CUDAStream getCurrentCUDAStream(signed char device_index = -1);
void device_synchronize();
} // namespace cuda
} // namespace c10
namespace at {
namespace cuda {
using c10::cuda::CUDAStream;
using c10::cuda::getCurrentCUDAStream;
} // namespace cuda
} // namespace at
namespace at {
namespace cuda {
// Mock of ATen/cuda/CUDAGraph.h.
struct CUDAGraph {
  CUDAGraph();
  void capture_begin();
  void capture_end();
  void replay();
};
} // namespace cuda
} // namespace at
