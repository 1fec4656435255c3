// Mock of ATen/cuda/CUDAEvent.h: an event on the current stream.
#pragma once
#include <c10/cuda/CUDAStream.h>
namespace at {
namespace cuda {
struct CUDAEvent {
  CUDAEvent();
  void record();
  void record(const CUDAStream &stream);
  bool query() const;
  void synchronize() const;
  float elapsed_time(const CUDAEvent &other) const;
};
} // namespace cuda
} // namespace at
