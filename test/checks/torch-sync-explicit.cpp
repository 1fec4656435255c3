// RUN: %check_torch_sync %s torch-sync-explicit %t -- %mock_flags
#include <torch/torch.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/core/Event.h>
#include <c10/cuda/CUDAStream.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <thread>

void positives(float *device_buffer, float *host_buffer) {
  for (int step = 0; step < 10; ++step) {
    torch::cuda::synchronize();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `synchronize` blocks the host until the GPU work it covers is done (PyTorch's sync debug mode does not see this one); intentional barrier: the tool cannot show that nothing after it needs the GPU's work (the return to callers the tool does not see) (every iteration of the loop at line [[@LINE-2]]); keep it unless that does not use the GPU's results; to wait for less, record a CUDA event after the work that is needed and wait on that event [torch-sync-explicit]
  }
  cudaDeviceSynchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `cudaDeviceSynchronize` blocks the host {{.*}} (PyTorch's sync debug mode does not see this one); intentional barrier: the tool cannot show that nothing after it needs the GPU's work (the return to callers the tool does not see)
  cudaMemcpy(host_buffer, device_buffer, 16, cudaMemcpyDeviceToHost);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `cudaMemcpy` blocks the host
  c10::cuda::getCurrentCUDAStream().synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `synchronize` blocks the host
}

double timed() {
  auto start = std::chrono::steady_clock::now();
  auto x = torch::randn({1024}, torch::kCUDA).sum();
  torch::cuda::synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `synchronize` blocks the host {{.*}}; intentional barrier: it brackets a timer or the release of a buffer; for timing, CUDA events measure without stalling the host [torch-sync-explicit]
  auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(stop - start).count();
}

// A device-to-host copy into a host variable: its class is how the host uses
// what arrived (an allocation size: true; only printed: false).
void copied_counts(int *device_count) {
  int n = 0;
  cudaMemcpy(&n, device_count, sizeof(int), cudaMemcpyDeviceToHost);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `cudaMemcpy` blocks the host until the GPU work it covers is done; true dependency: through `n`, the value is passed to `malloc`; if the host must decide (a size, a branch), keep the decision on the device or read the value less often [torch-sync-explicit]
  float *buffer = static_cast<float *>(malloc(n * sizeof(float)));
  free(buffer);
  int m = 0;
  cudaMemcpy(&m, device_count, sizeof(int), cudaMemcpyDeviceToHost);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `cudaMemcpy` blocks the host until the GPU work it covers is done; false dependency: through `m`, the value is only logged; copy with `cudaMemcpyAsync` on the stream and read the value after the step [torch-sync-explicit]
  std::printf("%d\n", m);
}

void negatives(float *a, float *b) {
  cudaMemcpy(a, b, 16, cudaMemcpyDeviceToDevice);   // device to device
  cudaMemcpyAsync(a, b, 16, cudaMemcpyHostToDevice); // asynchronous
}

// Macros and templates: a barrier spelled in a macro body is reported at the
// expansion; a template is checked once, in its definition.
#define SYNC_ALL() torch::cuda::synchronize()
void macro_and_template_cases() {
  for (int i = 0; i < 3; ++i)
    SYNC_ALL();
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `synchronize` blocks the host
}
template <int N> void step_n() {
  for (int i = 0; i < N; ++i)
    torch::cuda::synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `synchronize` blocks the host
}
template void step_n<1>();
template void step_n<2>();

// A wait that protects memory: the staging buffer an asynchronous copy reads is
// refilled in the next iteration, so the wait is needed (intentional), as is a wait
// right before the program ends. The same wait without a refilled buffer is not
// that barrier (it is kept because the function returns to an unseen caller).
void staging_buffer(torch::Tensor source, torch::Device device, int steps) {
  auto staging = torch::empty({16}, torch::TensorOptions().pinned_memory(true));
  for (int b = 0; b < steps; ++b) {
    staging.copy_(source);
    auto on_device = staging.to(device, /*non_blocking=*/true);
    torch::cuda::synchronize();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `synchronize` blocks the host {{.*}}; intentional barrier: it keeps a host buffer that an asynchronous copy in this loop reads from being refilled before the copy is done{{.*}}; keep it; to overlap more, double-buffer (two staging buffers, each with its own event) [torch-sync-explicit]
  }
}
void no_buffer_refilled(torch::Device device, int steps) {
  auto fixed = torch::empty({16}, torch::TensorOptions().pinned_memory(true));
  for (int b = 0; b < steps; ++b) {
    auto on_device = fixed.to(device, /*non_blocking=*/true);
    torch::cuda::synchronize();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `synchronize` blocks the host {{.*}}; intentional barrier: the tool cannot show that nothing after it needs the GPU's work (the return to callers the tool does not see){{.*}}[torch-sync-explicit]
  }
}
int main() {
  auto x = torch::randn({4}, torch::kCUDA) * 2;
  // In main, with only stream-ordered tensor work and host arithmetic after
  // it, the wait protects nothing (issue 43, item 1's negative).
  for (int i = 0; i < 3; ++i) {
    x = x * 2;
    torch::cuda::synchronize();
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `synchronize` blocks the host {{.*}}; false dependency: nothing after it on the host reads or writes memory the GPU uses, and no timer or host-buffer release next to it needs the GPU to be idle (every iteration of the loop at line [[@LINE-3]]); remove it, or wait on an event for just the work that is needed [torch-sync-explicit]
    std::printf("%d\n", i);
  }
  // Issue 43, item 11: a loop polling an event until it is done is the same
  // wait, classified the same way (here: nothing after it needs the GPU).
  at::cuda::CUDAEvent step_done;
  for (int i = 0; i < 3; ++i) {
    x = x * 2;
    step_done.record();
    while (!step_done.query())
      // CHECK-MESSAGES: :[[@LINE-1]]:13: warning: polling `CUDAEvent::query` in a loop until the work is done blocks the host like `synchronize()` (PyTorch's sync debug mode does not see this one); false dependency: nothing after it on the host reads or writes memory the GPU uses, and no timer or host-buffer release next to it needs the GPU to be idle (every iteration of the loop at line [[@LINE-4]]); remove the loop: nothing after it needs the GPU's work [torch-sync-explicit]
      std::this_thread::yield();
    std::printf("%d\n", i);
  }
  torch::cuda::synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `synchronize` blocks the host {{.*}}; intentional barrier: it comes right before the program ends; keep it: it waits once, at the end [torch-sync-explicit]
  return 0;
}

// Issue 21: the program's own wrapper of a release (its body frees the host
// buffer) and an unseen function named and typed as one (`stbi_image_free`)
// make the wait an intentional barrier as a release; a helper that frees
// nothing, or an unseen "release" that takes no buffer, does not (the waits are
// kept for issue 43's reasons: an unseen call, the return to a caller).
static void free_image(unsigned char *pixels) { std::free(pixels); }
static void log_step(int step) { std::printf("%d\n", step); }
void stbi_image_free(void *retval_from_stbi_load);
void release_slot(int slot);
void wrapped_release(torch::Tensor gpu, unsigned char *pixels, void *decoded) {
  torch::from_blob(pixels, {16}, torch::kByte).copy_(gpu, /*non_blocking=*/true);
  torch::cuda::synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `synchronize` blocks the host {{.*}}; intentional barrier: it brackets a timer or the release of a buffer
  free_image(pixels);
  cudaDeviceSynchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `cudaDeviceSynchronize` blocks the host {{.*}}; intentional barrier: it brackets a timer or the release of a buffer
  stbi_image_free(decoded);
}
void not_a_release(int step) {
  torch::cuda::synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `synchronize` blocks the host {{.*}}; intentional barrier: the tool cannot show that nothing after it needs the GPU's work (a call to `release_slot`, whose body the tool cannot see)
  log_step(step);
  cudaDeviceSynchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `cudaDeviceSynchronize` blocks the host {{.*}}; intentional barrier: the tool cannot show that nothing after it needs the GPU's work (a call to `release_slot`, whose body the tool cannot see)
  release_slot(step);
}

// Issue 43, item 1: a wait is a false dependency only when nothing after it on
// the host may need the GPU's work. Before a memcpy into a reused pinned
// staging buffer (the previous non_blocking copy may still read it), before a
// read of managed memory a kernel wrote, before a data_ptr read, a call the
// tool cannot see, or the return to an unseen caller, "remove it" would race:
// such a wait is kept, with the reason.
void staging_memcpy(torch::Tensor staging, const float *next, bool in_flight, torch::Device device) {
  if (in_flight)
    torch::cuda::synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: `synchronize` blocks the host {{.*}}; intentional barrier: the tool cannot show that nothing after it needs the GPU's work (`memcpy` on host memory); keep it unless that does not use the GPU's results; to wait for less, record a CUDA event after the work that is needed and wait on that event [torch-sync-explicit]
  std::memcpy(staging.data_ptr<float>(), next, 16 * sizeof(float));
  auto on_device = staging.to(device, /*non_blocking=*/true);
}
float managed_read(float *managed, cudaEvent_t done) {
  cudaEventSynchronize(done);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `cudaEventSynchronize` blocks the host {{.*}}; intentional barrier: the tool cannot show that nothing after it needs the GPU's work (a read or write through a raw pointer); keep it
  return managed[0];
}
void unseen_after(torch::Tensor t);
void calls_unseen(torch::Tensor t) {
  cudaDeviceSynchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `cudaDeviceSynchronize` blocks the host {{.*}}; intentional barrier: the tool cannot show that nothing after it needs the GPU's work (a call to `unseen_after`, whose body the tool cannot see)
  unseen_after(t);
}
void returns_to_caller(torch::Tensor t) {
  auto u = t * 2;
  torch::cuda::synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `synchronize` blocks the host {{.*}}; intentional barrier: the tool cannot show that nothing after it needs the GPU's work (the return to callers the tool does not see)
}

// Issue 43, item 11: polling. A loop that runs until a completion query says
// done waits for the GPU like the synchronize it replaces, whatever spells the
// query (an event, a stream, the CUDA runtime) and whichever way the loop tests
// it; the class is the synchronize's (here the waits return to unseen callers,
// or bracket a timer).
void poll_event(at::cuda::CUDAEvent &done) {
  done.record();
  while (!done.query())
    // CHECK-MESSAGES: :[[@LINE-1]]:11: warning: polling `CUDAEvent::query` in a loop until the work is done blocks the host like `synchronize()` (PyTorch's sync debug mode does not see this one); intentional barrier: the tool cannot show that nothing after it needs the GPU's work (the return to callers the tool does not see); keep it unless that does not use the GPU's results; to wait for less, record a CUDA event after the work that is needed and wait on that event [torch-sync-explicit]
    std::this_thread::sleep_for(std::chrono::microseconds(50));
}
void poll_runtime(cudaEvent_t event, cudaStream_t stream) {
  while (cudaEventQuery(event) == cudaErrorNotReady) {
    // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: polling `cudaEventQuery` in a loop until the work is done blocks the host like `synchronize()` {{.*}}; intentional barrier: the tool cannot show that nothing after it needs the GPU's work (the return to callers the tool does not see){{.*}} [torch-sync-explicit]
    std::this_thread::yield();
  }
  do {
    std::this_thread::yield();
  } while (cudaStreamQuery(stream) != cudaSuccess);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: polling `cudaStreamQuery` in a loop until the work is done blocks the host like `synchronize()` {{.*}} [torch-sync-explicit]
  while (cudaStreamQuery(stream)) // any code but cudaSuccess: not done yet
    // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: polling `cudaStreamQuery` in a loop until the work is done blocks the host like `synchronize()` {{.*}} [torch-sync-explicit]
    std::this_thread::yield();
}
void poll_until_break(c10::cuda::CUDAStream stream, c10::Event &event, bool &stop) {
  for (;;) {
    if (stream.query())
      // CHECK-MESSAGES: :[[@LINE-1]]:9: warning: polling `CUDAStream::query` in a loop until the work is done blocks the host like `synchronize()` {{.*}} [torch-sync-explicit]
      break;
    std::this_thread::yield();
  }
  while (true) {
    if (!event.query()) {
      // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: polling `Event::query` in a loop until the work is done blocks the host like `synchronize()` {{.*}} [torch-sync-explicit]
      std::this_thread::yield();
      continue;
    } else {
      std::printf("done\n");
      return;
    }
  }
  // Through a variable the loop assigns, and with a further exit condition.
  bool done = false;
  while (!done) {
    done = event.query();
    // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: polling `Event::query` in a loop until the work is done blocks the host like `synchronize()` {{.*}} [torch-sync-explicit]
  }
  bool finished = false;
  do {
    std::this_thread::yield();
    finished = cudaStreamQuery(stream.stream()) == cudaSuccess;
    // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: polling `cudaStreamQuery` in a loop until the work is done blocks the host like `synchronize()` {{.*}} [torch-sync-explicit]
  } while (!finished);
  while (!stream.query() && !stop)
    // CHECK-MESSAGES: :[[@LINE-1]]:11: warning: polling `CUDAStream::query` in a loop until the work is done blocks the host like `synchronize()` {{.*}} [torch-sync-explicit]
    std::this_thread::yield();
}
double timed_poll(at::cuda::CUDAEvent &done) {
  auto start = std::chrono::steady_clock::now();
  done.record();
  while (!done.query())
    // CHECK-MESSAGES: :[[@LINE-1]]:11: warning: polling `CUDAEvent::query` in a loop until the work is done blocks the host like `synchronize()` (PyTorch's sync debug mode does not see this one); intentional barrier: it brackets a timer or the release of a buffer; for timing, CUDA events measure without stalling the host [torch-sync-explicit]
    std::this_thread::yield();
  auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(stop - start).count();
}
void staging_poll(torch::Tensor source, torch::Device device, int steps) {
  auto staging = torch::empty({16}, torch::TensorOptions().pinned_memory(true));
  at::cuda::CUDAEvent copied;
  for (int b = 0; b < steps; ++b) {
    staging.copy_(source);
    auto on_device = staging.to(device, /*non_blocking=*/true);
    copied.record();
    while (!copied.query())
      // CHECK-MESSAGES: :[[@LINE-1]]:13: warning: polling `CUDAEvent::query` {{.*}}; intentional barrier: it keeps a host buffer that an asynchronous copy in this loop reads from being refilled before the copy is done{{.*}}; keep it; to overlap more, double-buffer (two staging buffers, each with its own event) [torch-sync-explicit]
      std::this_thread::yield();
  }
}

// A query that no loop waits on is not a wait: one test, a loop that ends
// anyway (over batches, a counter), a loop that runs while the work IS done
// (draining finished events), a break that only leaves a switch.
void do_other_work();
void process(int batch);
void not_polling(at::cuda::CUDAEvent &event, cudaEvent_t raw, std::deque<at::cuda::CUDAEvent> &pending,
                 const std::vector<int> &batches, int mode) {
  if (event.query())
    do_other_work();
  if (cudaEventQuery(raw) == cudaSuccess)
    do_other_work();
  bool ready = event.query();
  if (ready)
    do_other_work();
  bool pending_work = !event.query(); // assigned once, before the loop: not polled
  while (pending_work)
    pending_work = false;
  for (int batch : batches) {
    if (event.query())
      break;
    process(batch);
  }
  for (int i = 0; i < 100; ++i) {
    if (event.query())
      break;
    process(i);
  }
  while (!pending.empty() && pending.front().query())
    pending.pop_front();
  for (;;) {
    switch (mode) {
    case 0:
      if (event.query())
        break;
      process(0);
    }
    process(mode);
  }
}
