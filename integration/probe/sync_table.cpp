// Reproduces the sync reference table on the GPU machine: for each LibTorch call,
// run it twice to warm up, synchronize, queue ~60 ms of GPU work (at::cuda::sleep),
// then time the call on the host (oracle 2) while sync debug mode counts warnings
// (oracle 1). A call "waited" when it returned only after the queued work (> 25 ms).
// Built only with SYNCPROBE_CUDA; output: a markdown table on stdout.
#include "syncprobe.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAEvent.h>
#include <functional>
#include <thread>
#include <utility>

using torch::indexing::Slice;

int main() {
  if (!torch::cuda::is_available()) {
    std::printf("no CUDA device\n");
    return 1;
  }
  torch::manual_seed(0);
  auto gpu = torch::TensorOptions().device(torch::kCUDA);
  auto v = torch::randn({4096}, gpu);
  auto mask = v > 0;
  auto idx_gpu = torch::randint(4096, {128}, gpu.dtype(torch::kLong));
  auto idx_cpu = idx_gpu.cpu();
  auto g0 = torch::tensor(0.5, gpu);
  auto t0 = torch::tensor(int64_t{3}, gpu.dtype(torch::kLong));
  auto pageable = torch::randn({4096});
  auto pinned = torch::randn({4096}).pin_memory();
  auto li = torch::randint(10, {256}, gpu.dtype(torch::kLong));
  auto spd = torch::eye(8, gpu) * 2;
  std::vector<float> host_vec(64, 1.0f);
  auto model = torch::nn::Linear(16, 16);
  model->to(torch::kCUDA);
  auto mask_cpu = mask.cpu();
  auto values = torch::randn({128}, gpu);
  auto probs = torch::rand({1000}, gpu);
  const std::string saved = "/tmp/syncprobe-save.pt";
  at::cuda::CUDAEvent event;

  std::vector<std::pair<std::string, std::function<void()>>> calls = {
      {"baseline: x.add(1)", [&] { v.add(1); }},
      {"item<float>()", [&] { v.sum().item<float>(); }},
      {"item().toFloat()", [&] { v.sum().item().toFloat(); }},
      {"cpu()", [&] { v.cpu(); }},
      {"to(kCPU)", [&] { v.to(torch::kCPU); }},
      {"to(kCPU, non_blocking=true)", [&] { v.to(torch::kCPU, true); }},
      {"pageable.cuda()", [&] { pageable.cuda(); }},
      {"pageable.to(kCUDA)", [&] { pageable.to(torch::kCUDA); }},
      {"pageable.to(kCUDA, nb=true)", [&] { pageable.to(torch::kCUDA, true); }},
      {"pinned.to(kCUDA)", [&] { pinned.to(torch::kCUDA); }},
      {"pinned.to(kCUDA, nb=true)", [&] { pinned.to(torch::kCUDA, true); }},
      {"gpu.copy_(pageable)", [&] { v.copy_(pageable); }},
      {"gpu.copy_(pageable, nb=true)", [&] { v.copy_(pageable, true); }},
      {"zeros({4096}).to(kCUDA)", [&] { torch::zeros({4096}).to(torch::kCUDA); }},
      {"zeros({4096}, device(kCUDA))", [&] { torch::zeros({4096}, gpu); }},
      {"torch::tensor({1.,2.,3.}, kCUDA)", [&] { torch::tensor({1., 2., 3.}, gpu); }},
      {"torch::tensor(0.5, kCUDA)", [&] { torch::tensor(0.5, gpu); }},
      {"tensor(std::vector<float>, kCUDA)", [&] { torch::tensor(host_vec, gpu); }},
      {"tensor(vector).to(kCUDA, nb)", [&] { torch::tensor(host_vec).to(torch::kCUDA, true); }},
      {"v.index({mask})", [&] { v.index({mask}); }},
      {"masked_select", [&] { v.masked_select(mask); }},
      {"where(mask, v, 0).sum()", [&] { torch::where(mask, v, torch::zeros({}, gpu)).sum(); }},
      {"v.index({mask}).sum()", [&] { v.index({mask}).sum(); }},
      {"index_put_({mask}, 0.0)", [&] { v.index_put_({mask}, 0.0); }},
      {"index_put_({mask}, gpu0dim)", [&] { v.index_put_({mask}, g0); }},
      {"index_put_({idx_gpu}, 0.0)", [&] { v.index_put_({idx_gpu}, 0.0); }},
      {"index_put_({idx_gpu}, scalar_tensor)", [&] { v.index_put_({idx_gpu}, torch::scalar_tensor(0.0, v.options())); }},
      {"masked_fill_(mask, gpu0dim)", [&] { v.masked_fill_(mask, g0); }},
      {"v.copy_(where(mask, g0, v))", [&] { v.copy_(torch::where(mask, g0, v)); }},
      {"index({idx_cpu})", [&] { v.index({idx_cpu}); }},
      {"index({idx_gpu})", [&] { v.index({idx_gpu}); }},
      {"index({0-dim long gpu})", [&] { v.index({t0}); }},
      {"index({t0.unsqueeze(0)}).squeeze(0)", [&] { v.index({t0.unsqueeze(0)}).squeeze(0); }},
      {"nonzero()", [&] { mask.nonzero(); }},
      {"argwhere", [&] { torch::argwhere(mask); }},
      {"unique (_unique2)", [&] { torch::_unique2(li); }},
      {"unique_consecutive", [&] { torch::unique_consecutive(li); }},
      {"repeat_interleave(r)", [&] { torch::repeat_interleave(li.clamp(0, 3)); }},
      {"bincount(li)", [&] { li.bincount(); }},
      {"histc", [&] { v.histc(10); }},
      {"histc(10, -1, 1) explicit range", [&] { v.histc(10, -1, 1); }},
      {"masked_scatter_", [&] { v.masked_scatter_(mask, v); }},
      {"is_nonzero", [&] { v.sum().is_nonzero(); }},
      {"equal(distinct)", [&] { v.equal(v + 1); }},
      {"allclose", [&] { v.allclose(v + 1); }},
      {"any().item<bool>()", [&] { v.gt(0).any().item<bool>(); }},
      {"_assert_async(mask.any())", [&] { at::_assert_async(mask.any()); }},
      {"ostream << tensor", [&] { std::ostringstream os; os << v.sum(); }},
      {"cuda::synchronize", [&] { torch::cuda::synchronize(); }},
      {"cudaDeviceSynchronize", [&] { cudaDeviceSynchronize(); }},
      {"stream.synchronize()", [&] { at::cuda::getCurrentCUDAStream().synchronize(); }},
      {"linalg_inv", [&] { torch::linalg_inv(spd); }},
      {"linalg_inv_ex", [&] { torch::linalg_inv_ex(spd); }},
      {"linalg_cholesky", [&] { torch::linalg_cholesky(spd); }},
      {"linalg_cholesky_ex", [&] { torch::linalg_cholesky_ex(spd); }},
      {"clip_grad_norm_ (returns double)", [&] {
         model->zero_grad();
         model->forward(torch::randn({4, 16}, gpu)).sum().backward();
         torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
       }},
      {"clip_grad_value_", [&] { torch::nn::utils::clip_grad_value_(model->parameters(), 1.0); }},
      {"to(kCUDA) on gpu tensor (noop)", [&] { v.to(torch::kCUDA); }},
      {"cuda() on gpu tensor (noop)", [&] { v.cuda(); }},
      {"item on cpu tensor", [&] { pageable.sum().item<float>(); }},
      {"index_put_({mask_cpu}, 0.0)", [&] { v.index_put_({mask_cpu}, 0.0); }},
      {"idx_cpu.to(v.device(), nb) then index", [&] { v.index({idx_cpu.to(v.device(), true)}); }},
      // Version-dependent syncs (issue 43, item 3): 1.13 range-checks the indices of an
      // accumulating index_put_ and validates multinomial's probabilities with item().
      {"index_put_({idx_gpu}, values, accumulate=true)", [&] { v.index_put_({idx_gpu}, values, true); }},
      {"index_put_({idx_gpu}, values) accumulate=false", [&] { v.index_put_({idx_gpu}, values); }},
      {"index_add_(0, idx_gpu, values)", [&] { v.index_add_(0, idx_gpu, values); }},
      {"multinomial(1) (replacement=false)", [&] { probs.multinomial(1); }},
      {"multinomial(8) (replacement=false)", [&] { probs.multinomial(8); }},
      {"multinomial(8, replacement=true)", [&] { probs.multinomial(8, true); }},
      {"torch::save(gpu tensor)", [&] { torch::save(v, saved); }},
      {"torch::save(cpu tensor)", [&] { torch::save(pageable, saved); }},
      {"torch::save(module on gpu)", [&] { torch::save(model, saved); }},
      // Polling (issue 43, item 11): one query() returns at once; a loop until it is
      // true waits like synchronize().
      {"event.query() once", [&] { event.record(); (void)event.query(); }},
      {"while (!event.query()) sleep", [&] {
         event.record();
         while (!event.query())
           std::this_thread::sleep_for(std::chrono::microseconds(50));
       }},
      {"stream.query() once", [&] { (void)at::cuda::getCurrentCUDAStream().query(); }},
      {"while (cudaStreamQuery(s) != cudaSuccess)", [&] {
         while (cudaStreamQuery(at::cuda::getCurrentCUDAStream()) != cudaSuccess)
           std::this_thread::yield();
       }},
  };

  const double sleep_ms = 60;
  // Calibrate at::cuda::sleep: cycles per millisecond.
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  auto stream = at::cuda::getCurrentCUDAStream();
  cudaEventRecord(a, stream);
  at::cuda::sleep(100000000);
  cudaEventRecord(b, stream);
  cudaEventSynchronize(b);
  float calib_ms = 0;
  cudaEventElapsedTime(&calib_ms, a, b);
  const int64_t cycles = static_cast<int64_t>(sleep_ms * 100000000.0 / calib_ms);

  syncprobe::CountingHandler handler;
  c10::WarningUtils::WarningHandlerGuard guard(&handler);
  std::printf("| call | debug-mode warnings | host ms | host waited |\n|---|---|---|---|\n");
  for (auto &[name, call] : calls) {
    call();
    call();
    cudaDeviceSynchronize();
    at::cuda::sleep(cycles);
    long before = handler.count;
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_WARN);
    auto start = std::chrono::steady_clock::now();
    call();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
    cudaDeviceSynchronize();
    std::printf("| `%s` | %ld | %.2f | %s |\n", name.c_str(), handler.count - before, ms,
                ms > 25 ? "YES" : "no");
  }
  return 0;
}
