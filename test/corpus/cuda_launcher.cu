// Custom-op host code in a .cu file: a CUDA kernel launched on LibTorch tensors,
// with the usual input checks and an explicit error check after the launch.
#include <torch/torch.h>
#include <cuda_runtime.h>

__global__ void scale_kernel(const float *in, float *out, float factor, int64_t n) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n)
    out[i] = in[i] * factor;
}

torch::Tensor scale(const torch::Tensor &input, double factor) {
  TORCH_CHECK(input.is_cuda(), "input must be a CUDA tensor");
  TORCH_CHECK(input.scalar_type() == torch::kFloat, "input must be float32");
  auto contiguous = input.contiguous();
  auto output = torch::empty_like(contiguous);
  int64_t n = contiguous.numel();
  int threads = 256;
  int blocks = static_cast<int>((n + threads - 1) / threads);
  scale_kernel<<<blocks, threads>>>(contiguous.data_ptr<float>(), output.data_ptr<float>(),
                                    static_cast<float>(factor), n);
  TORCH_CHECK(cudaGetLastError() == cudaSuccess, "scale_kernel launch failed");
  return output;
}

torch::Tensor scale_checked(const torch::Tensor &input, double factor) {
  auto out = scale(input, factor);
  cudaDeviceSynchronize(); // SYNC: intentional
  return out;
}

int64_t count_positive(const torch::Tensor &input) {
  auto positive = input.gt(0).sum();
  int64_t host_count = 0;
  cudaMemcpy(&host_count, positive.data_ptr<int64_t>(), sizeof(int64_t), cudaMemcpyDeviceToHost); // SYNC: true
  auto buffer = torch::empty({host_count}, input.options());
  return buffer.numel();
}
