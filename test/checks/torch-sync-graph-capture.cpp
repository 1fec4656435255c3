// RUN: %check_torch_sync %s torch-sync-graph-capture %t -- %mock_flags
#include <torch/torch.h>
#include <c10/cuda/CUDAStream.h>
#include <iostream>

float metric(torch::Tensor t) { return t.mean().item<float>(); }
// CHECK-MESSAGES: :[[@LINE-1]]:40: error: `item` makes the host wait inside CUDA graph capture
// CHECK-MESSAGES: :[[@LINE+4]]:3: note: captured through a call to `metric` here

void captured(torch::Tensor x, torch::Tensor y) {
  at::cuda::CUDAGraph graph;
  graph.capture_begin();
  auto z = x * 2 + y;
  float bad = z.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:15: error: `item` makes the host wait inside CUDA graph capture, which breaks the capture at run time; move it out of the captured region or keep the value on the device [torch-sync-graph-capture]
  float through_helper = metric(z);
  graph.capture_end();
  graph.replay();
  std::cout << z.sum().item<float>() << bad << through_helper;  // after capture_end: not this check's
}

void not_captured(torch::Tensor x) {
  at::cuda::CUDAGraph graph;
  auto before = x.sum().item<float>();  // before capture_begin
  graph.capture_begin();
  auto y = x * 3;                       // no sync inside
  graph.capture_end();
}

// Macros and templates: a sync spelled in a macro body is reported at the
// expansion; a template is checked once, in its definition.
#define READ(t) (t).item<float>()
void macro_and_template_cases(at::cuda::CUDAGraph &graph) {
  auto x = torch::randn({8}, torch::kCUDA);
  graph.capture_begin();
  float v = READ(x.sum());
  // CHECK-MESSAGES: :[[@LINE-1]]:13: error: `item` makes the host wait inside CUDA graph capture
  graph.capture_end();
}
template <int N> void capture_n(at::cuda::CUDAGraph &graph, torch::Tensor x) {
  graph.capture_begin();
  auto y = (x * N).cpu();
  // CHECK-MESSAGES: :[[@LINE-1]]:12: error: `cpu` makes the host wait inside CUDA graph capture
  graph.capture_end();
}
template void capture_n<1>(at::cuda::CUDAGraph &, torch::Tensor);
template void capture_n<2>(at::cuda::CUDAGraph &, torch::Tensor);
