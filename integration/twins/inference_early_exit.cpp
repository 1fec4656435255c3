// Hand-written sync-free twin of programs/inference_early_exit.cpp: the request queue
// pinned once (only when CUDA is available) and copied with non_blocking=true, the
// confidence metrics summed on the device and read once per step. The convergence
// test is a true dependency and stays a read per iteration: checking every k
// iterations would run extra iterations and change the results.
#include "syncprobe.h"
#include <cmath>
#include <cstdio>
#include <vector>

struct FixedPointNet : torch::nn::Module {
  FixedPointNet(int64_t features, int64_t hidden, int64_t classes) {
    encoder = register_module("encoder", torch::nn::Linear(features, hidden));
    W = register_module("W", torch::nn::Linear(torch::nn::LinearOptions(hidden, hidden).bias(false)));
    head = register_module("head", torch::nn::Linear(hidden, classes));
    torch::nn::init::normal_(W->weight, 0.0, 0.7 / std::sqrt(static_cast<double>(hidden)));
  }

  torch::nn::Linear encoder{nullptr}, W{nullptr}, head{nullptr};
};

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  const bool gpu = torch::cuda::is_available();
  const int64_t batch = gpu ? 256 : 16, features = gpu ? 512 : 32, hidden = gpu ? 1024 : 64;
  const int64_t classes = 10, queue_length = 12, requests_per_step = 4;
  const int kMaxIterations = 50;
  const float kTolerance = 1e-4f;

  std::vector<torch::Tensor> queue;
  for (int64_t i = 0; i < queue_length; ++i)
    queue.push_back(torch::randn({batch, features}) * (1.0 + 0.1 * i));
  if (gpu)
    for (auto &request : queue)
      request = request.pin_memory();

  auto model = std::make_shared<FixedPointNet>(features, hidden, classes);
  model->to(device);
  model->eval();

  int64_t last_iterations = 0, last_confident = 0;
  double last_confidence = 0;
  torch::Tensor last_state;
  syncprobe::Harness harness("inference_early_exit");
  harness.run([&](int step) {
    torch::NoGradGuard no_grad;
    int64_t iterations = 0;
    auto confidence_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
    auto confident = torch::zeros({}, torch::TensorOptions().dtype(torch::kLong).device(device));
    for (int64_t r = 0; r < requests_per_step; ++r) {
      auto x = queue[(step * requests_per_step + r) % queue_length].to(device, /*non_blocking=*/true);
      auto injection = model->encoder->forward(x);
      auto z = torch::zeros_like(injection);
      for (int it = 0; it < kMaxIterations; ++it) {
        auto z_next = torch::tanh(model->W->forward(z) + injection);
        float update = ((z_next - z).norm() / (z_next.norm() + 1e-6)).item<float>();
        z = z_next;
        ++iterations;
        if (update < kTolerance)
          break;
      }
      auto probs = torch::softmax(model->head->forward(z), /*dim=*/1);
      auto top = std::get<0>(probs.max(/*dim=*/1));
      confidence_sum.add_(top.mean());
      confident.add_(top.gt(0.2).sum());
      last_state = z;
    }
    last_iterations = iterations;
    last_confidence = confidence_sum.item<double>();
    last_confident = confident.item<int64_t>();
    if (step == 0)
      std::printf("step %d: %lld iterations, confidence %.5f\n", step,
                  static_cast<long long>(iterations), last_confidence / requests_per_step);
  });
  harness.result("iterations", static_cast<double>(last_iterations));
  harness.result("confidence_sum", last_confidence);
  harness.result("confident", static_cast<double>(last_confident));
  harness.result("state", last_state);
  return 0;
}
