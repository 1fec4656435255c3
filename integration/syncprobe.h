// syncprobe.h: the measurement header every integration program includes.
//
//   syncprobe::Harness harness("name");
//   harness.run([&](int step) { ... one training/inference step ... });
//   harness.result("loss", final_loss_tensor_or_double);
//
// With CUDA (SYNCPROBE_CUDA defined) `run` executes the step in four phases:
//   1. warm-up steps;
//   2. oracle 1, PyTorch's sync debug mode: c10::cuda::warning_state() set to L_WARN
//      and a counting c10::WarningHandler; syncs per step = warnings per step;
//   3. oracle 2, the host-wait probe: before each step ~SLEEP_MS of GPU work is queued
//      with at::cuda::sleep; a step whose host call returns only after that work
//      finished waited for the GPU (sees cudaDeviceSynchronize, torch::cuda::synchronize
//      and large pageable copies that debug mode misses);
//   4. timing: CUDA events around each step, median over the timed steps (GPU time
//      of a step), then wall-clock time of many steps with one synchronization at the
//      end (throughput: what syncs cost a loop, since the GPU idles while the host waits);
//   5. kernel launches of one step (Kineto).
// SYNCPROBE_TIMING_ONLY=1 skips phases 2, 3 and 5 (the harness's repeat runs).
// SYNCPROBE_PROFILE=<trace.json> adds a sixth: where the host time of a step goes
// (profileSteps).
// Without CUDA (the CPU mode CI runs) the same number of steps run and only the
// results are printed. Every program runs the same total number of steps in both
// variants, so original and rewritten programs print comparable results.
#pragma once

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#ifdef TORCH_SYNCFREE_PROBE_STEPS
#include "torch_syncfree/probe.h"
#endif
#ifdef SYNCPROBE_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/Sleep.h>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <map>
#include <set>
#endif

namespace syncprobe {

inline int envInt(const char *name, int fallback) {
  const char *value = std::getenv(name);
  return value ? std::atoi(value) : fallback;
}

inline torch::Device device() {
  return torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
}

#ifdef SYNCPROBE_CUDA
/// Counts the warnings sync debug mode raises; passes every other warning on.
class CountingHandler : public c10::WarningHandler {
public:
  void process(const c10::Warning &warning) override {
    if (warning.msg().find("synchroniz") != std::string::npos)
      ++count;
    else
      std::fprintf(stderr, "warning: %s\n", warning.msg().c_str());
  }
  long count = 0;
};
#endif

class Harness {
  /// One step; with torch-syncfree's probe linked (TORCH_SYNCFREE_PROBE_STEPS),
  /// also its step marker, so a profile reports syncs per step (docs/profiles.md).
  template <typename Step> static void markStep(Step &step, int index) {
    step(index);
#ifdef TORCH_SYNCFREE_PROBE_STEPS
    torch_syncfree::probe::step();
#endif
  }

public:
  explicit Harness(std::string name)
      : name_(std::move(name)), warmup_(envInt("SYNCPROBE_WARMUP", 3)),
        probe_steps_(envInt("SYNCPROBE_PROBE_STEPS", 5)),
        timed_steps_(envInt("SYNCPROBE_TIMED_STEPS", 20)),
        wall_steps_(envInt("SYNCPROBE_WALL_STEPS", 50)) {}

  /// Runs `step(i)` warmup + 2 * probe_steps + timed_steps + wall_steps times in all.
  template <typename Step> void run(Step &&step) {
    int index = 0;
    for (int i = 0; i < warmup_; ++i)
      markStep(step, index++);
#ifdef SYNCPROBE_CUDA
    if (torch::cuda::is_available()) {
      runProbes(step, index);
      return;
    }
#endif
    const int steps = 2 * probe_steps_ + timed_steps_ + wall_steps_;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i)
      markStep(step, index++);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count();
    std::printf("SYNCPROBE mode cpu\n");
    std::printf("SYNCPROBE wall_ms_per_step %.4f\n", ms / steps);
  }

  /// A result line `RESULT key value`; tensors print sum and sum of absolute values.
  void result(const std::string &key, double value) {
    std::printf("RESULT %s %.9g\n", key.c_str(), value);
  }
  void result(const std::string &key, const torch::Tensor &tensor) {
    auto host = tensor.detach().to(torch::kCPU, torch::kDouble);
    result(key + ".sum", host.sum().item<double>());
    result(key + ".abssum", host.abs().sum().item<double>());
    result(key + ".numel", static_cast<double>(host.numel()));
  }

private:
#ifdef SYNCPROBE_CUDA
  template <typename Step> void runProbes(Step &step, int &index) {
    // SYNCPROBE_TIMING_ONLY: the harness's repeat runs, which only time the steps (the
    // oracles and the profiler ran in the first run of each variant).
    const bool timing_only = envInt("SYNCPROBE_TIMING_ONLY", 0) != 0;
    // Oracle 1: sync debug mode with a counting warning handler.
    CountingHandler handler;
    std::vector<long> debug_counts;
    if (!timing_only) {
      c10::WarningUtils::WarningHandlerGuard guard(&handler);
      for (int i = 0; i < probe_steps_; ++i) {
        cudaDeviceSynchronize();
        long before = handler.count;
        c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_WARN);
        markStep(step, index++);
        c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
        debug_counts.push_back(handler.count - before);
      }
    }
    // Oracle 2: the host-wait probe.
    const double sleep_ms = envInt("SYNCPROBE_SLEEP_MS", 50);
    const int64_t cycles = static_cast<int64_t>(sleep_ms * cyclesPerMs());
    int waited_steps = 0;
    std::vector<double> host_ms;
    for (int i = 0; i < (timing_only ? 0 : probe_steps_); ++i) {
      cudaDeviceSynchronize();
      at::cuda::sleep(cycles);
      auto start = std::chrono::steady_clock::now();
      markStep(step, index++);
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                      .count();
      host_ms.push_back(ms);
      waited_steps += ms > 0.8 * sleep_ms;
    }
    cudaDeviceSynchronize();
    // Timing: CUDA events around each step.
    auto stream = at::cuda::getCurrentCUDAStream();
    std::vector<cudaEvent_t> events(2 * timed_steps_);
    for (auto &event : events)
      cudaEventCreate(&event);
    for (int i = 0; i < timed_steps_; ++i) {
      cudaEventRecord(events[2 * i], stream);
      markStep(step, index++);
      cudaEventRecord(events[2 * i + 1], stream);
    }
    cudaDeviceSynchronize();
    std::vector<double> step_ms;
    for (int i = 0; i < timed_steps_; ++i) {
      float ms = 0;
      cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]);
      step_ms.push_back(ms);
    }
    for (auto &event : events)
      cudaEventDestroy(event);
    // Throughput: wall-clock time of many steps, one synchronization at the end. This
    // is what a sync costs a real loop: the GPU idles while the host catches up.
    cudaDeviceSynchronize();
    auto wall_start = std::chrono::steady_clock::now();
    for (int i = 0; i < wall_steps_; ++i)
      markStep(step, index++);
    cudaDeviceSynchronize();
    double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                               wall_start)
                         .count();
    // Kernel launches and copies of one step, from LibTorch's Kineto profiler.
    long kernels = -1, copies = -1;
    if (!timing_only) try {
      using namespace torch::profiler::impl;
      ProfilerConfig config(ProfilerState::KINETO);
      std::set<ActivityType> activities{ActivityType::CPU, ActivityType::CUDA};
      torch::autograd::profiler::prepareProfiler(config, activities);
      torch::autograd::profiler::enableProfiler(config, activities);
      markStep(step, index++);
      cudaDeviceSynchronize();
      auto profile = torch::autograd::profiler::disableProfiler();
      kernels = copies = 0;
      for (const auto &event : profile->events()) {
        if (event.deviceType() != c10::DeviceType::CUDA)
          continue;
        std::string name = event.name();
        if (name.rfind("Memcpy", 0) == 0 || name.rfind("Memset", 0) == 0)
          ++copies;
        else
          ++kernels;
      }
    } catch (const std::exception &e) {
      std::fprintf(stderr, "kernel count unavailable: %s\n", e.what());
    }
    if (!timing_only && std::getenv("SYNCPROBE_PROFILE"))
      profileSteps(step, index, std::getenv("SYNCPROBE_PROFILE"));
    cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess) {
      std::fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(error));
      std::exit(3);
    }
    std::printf("SYNCPROBE mode gpu\n");
    if (!timing_only) {
      std::printf("SYNCPROBE debug_syncs_per_step %.2f\n", mean(debug_counts));
      std::printf("SYNCPROBE host_waited_steps %d/%d\n", waited_steps, probe_steps_);
      std::printf("SYNCPROBE host_ms_median %.3f\n", median(host_ms));
      std::printf("SYNCPROBE kernels_per_step %ld\n", kernels);
      std::printf("SYNCPROBE copies_per_step %ld\n", copies);
    }
    std::printf("SYNCPROBE step_ms %.4f\n", median(step_ms));
    std::printf("SYNCPROBE wall_ms_per_step %.4f\n", wall_ms / wall_steps_);
    std::printf("SYNCPROBE wall_sample_ms %.1f\n", wall_ms);
  }

  /// SYNCPROBE_PROFILE=<trace.json>: where a step's host time goes. Runs
  /// SYNCPROBE_PROFILE_STEPS (20) steps under Kineto, saves the trace and prints
  /// the host events (LibTorch ops, CUDA runtime calls) by inclusive time per
  /// step: `SYNCPROBE profile <us/step> <calls/step> <name>`, the 25 largest.
  template <typename Step> void profileSteps(Step &step, int &index, const std::string &path) {
    try {
      using namespace torch::profiler::impl;
      const int steps = envInt("SYNCPROBE_PROFILE_STEPS", 20);
      ProfilerConfig config(ProfilerState::KINETO);
      std::set<ActivityType> activities{ActivityType::CPU, ActivityType::CUDA};
      torch::autograd::profiler::prepareProfiler(config, activities);
      cudaDeviceSynchronize();
      torch::autograd::profiler::enableProfiler(config, activities);
      for (int i = 0; i < steps; ++i)
        markStep(step, index++);
      cudaDeviceSynchronize();
      auto profile = torch::autograd::profiler::disableProfiler();
      std::map<std::string, std::pair<double, long>> host; // name -> (ns, calls)
      for (const auto &event : profile->events()) {
        if (event.deviceType() == c10::DeviceType::CUDA)
          continue;
        auto &entry = host[event.name()];
        entry.first += static_cast<double>(event.durationNs());
        entry.second += 1;
      }
      std::vector<std::pair<double, std::string>> order;
      for (const auto &[name, entry] : host)
        order.push_back({entry.first, name});
      std::sort(order.rbegin(), order.rend());
      for (size_t i = 0; i < order.size() && i < 25; ++i)
        std::printf("SYNCPROBE profile %10.1f %7.2f %s\n", order[i].first / 1000.0 / steps,
                    static_cast<double>(host[order[i].second].second) / steps, order[i].second.c_str());
      profile->save(path);
    } catch (const std::exception &e) {
      std::fprintf(stderr, "profile unavailable: %s\n", e.what());
    }
  }

  static double cyclesPerMs() {
    static double value = [] {
      cudaEvent_t start, stop;
      cudaEventCreate(&start);
      cudaEventCreate(&stop);
      auto stream = at::cuda::getCurrentCUDAStream();
      const int64_t cycles = 100000000;
      at::cuda::sleep(cycles / 10); // warm-up
      cudaEventRecord(start, stream);
      at::cuda::sleep(cycles);
      cudaEventRecord(stop, stream);
      cudaEventSynchronize(stop);
      float ms = 0;
      cudaEventElapsedTime(&ms, start, stop);
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
      return cycles / std::max(ms, 0.001f);
    }();
    return value;
  }
#endif

  template <typename T> static double mean(const std::vector<T> &v) {
    double total = 0;
    for (T x : v)
      total += x;
    return v.empty() ? 0 : total / v.size();
  }
  static double median(std::vector<double> v) {
    if (v.empty())
      return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }

  std::string name_;
  int warmup_, probe_steps_, timed_steps_, wall_steps_;
};

} // namespace syncprobe
