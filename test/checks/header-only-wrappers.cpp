// RUN: %check_torch_sync %s torch-sync-call-in-loop %t -- %mock_flags
// RUN: %check_torch_sync --check-prefix=CHECK,CHECK-BLOCKING %s torch-sync-call-in-loop %t -config="{CheckOptions: {BlockingFunctions: 'vendor::download_results;other_lib_wait'}}" -- %mock_flags
// Issue 42: an inline function of a header-only library on the system include
// path (gpulib/staging_buffer.h, a mock) that blocks the host counts at the
// user's call in a loop, directly or through the user's own function; the
// library is followed for its barriers only.
#include <torch/torch.h>
#include <gpulib/staging_buffer.h>
#include <vector>

void upload_loop(const std::vector<std::vector<float>> &batches, cudaStream_t stream) {
  gpulib::StagingBuffer<float> scales(256);
  for (const auto &batch : batches)
    scales.copy_from_host(batch.data());
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: the call to `copy_from_host` makes the host wait for the GPU (`cudaMemcpy` at staging_buffer.h:14); true dependency: inside the library's `copy_from_host`, `cudaMemcpy` blocks the host until the GPU is done (every iteration of the loop at line [[@LINE-2]]); use the library's asynchronous variant (a stream-ordered copy from pinned memory) or move the call out of the loop [torch-sync-call-in-loop]
  for (const auto &batch : batches)
    scales.copy_from_host_async(batch.data(), stream); // stream-ordered: no finding
  std::vector<float> out(256);
  for (int i = 0; i < 3; ++i)
    scales.copy_to_host(out.data());
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: the call to `copy_to_host` makes the host wait for the GPU (`cudaMemcpy` at staging_buffer.h:24 through `copy_out`); true dependency: inside the library's `copy_to_host`
  scales.copy_from_host(out.data()); // once, outside a loop: no finding
}

// Through the user's own function.
static void refresh(gpulib::StagingBuffer<float> &buffer, const std::vector<float> &values) {
  buffer.copy_from_host(values.data());
}
void refresh_each_step(const std::vector<float> &values, int steps) {
  gpulib::StagingBuffer<float> buffer(values.size());
  for (int i = 0; i < steps; ++i)
    refresh(buffer, values);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: the call to `refresh` makes the host wait for the GPU (`cudaMemcpy` at staging_buffer.h:14 through `copy_from_host`); true dependency: inside the library's `copy_from_host`, `cudaMemcpy` blocks the host until the GPU is done (every iteration of the loop at line [[@LINE-2]])
}

// A compiled library the tool cannot see: its blocking functions are listed in
// the BlockingFunctions option (global or per check), by qualified or plain name.
namespace vendor {
void download_results(float *host, int n); // defined in a compiled library
void enqueue(const float *host, int n);
} // namespace vendor
static void fetch(float *host) { vendor::download_results(host, 16); }
void poll_results(float *host, int steps) {
  for (int i = 0; i < steps; ++i)
    vendor::download_results(host, 16);
  // CHECK-BLOCKING-MESSAGES: :[[@LINE-1]]:5: warning: the call to `download_results` makes the host wait for the GPU (listed in the `BlockingFunctions` option); true dependency: the library blocks the host until the GPU is done (every iteration of the loop at line [[@LINE-2]]); use the library's asynchronous variant or move the call out of the loop [torch-sync-call-in-loop]
  for (int i = 0; i < steps; ++i)
    fetch(host);
  // CHECK-BLOCKING-MESSAGES: :[[@LINE-1]]:5: warning: the call to `fetch` makes the host wait for the GPU (`download_results` at line [[@LINE-7]]); true dependency: the callee needs GPU results on the host
  // CHECK-BLOCKING-MESSAGES: :[[@LINE-8]]:34: note: the host waits here
  for (int i = 0; i < steps; ++i)
    vendor::enqueue(host, 16); // not listed: no finding
}
