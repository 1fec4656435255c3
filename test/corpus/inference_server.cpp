// An inference request handler: a TorchScript-like module replaced by a small MLP,
// requests decoded from host buffers, top-k results returned to the caller, latency
// measured around the request.
#include <torch/torch.h>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

struct Classifier : torch::nn::Module {
  Classifier() : body(register_module("body", torch::nn::Sequential(torch::nn::Linear(32, 64), torch::nn::ReLU(),
                                                                     torch::nn::Linear(64, 5)))) {}
  torch::Tensor forward(const torch::Tensor &x) { return body->forward(x); }
  torch::nn::Sequential body;
};

struct Prediction {
  int64_t label;
  float score;
};

std::vector<Prediction> handle(Classifier &model, const std::vector<float> &request, torch::Device device) {
  torch::NoGradGuard no_grad;
  auto input = torch::from_blob(const_cast<float *>(request.data()), {1, 32}).to(device); // SYNC: false
  auto logits = model.forward(input);
  auto probs = torch::softmax(logits, 1);
  auto top = probs.topk(3, 1);
  auto scores = std::get<0>(top).squeeze(0).cpu(); // SYNC: true
  auto labels = std::get<1>(top).squeeze(0).cpu(); // SYNC: true
  std::vector<Prediction> out;
  for (int64_t i = 0; i < 3; ++i)
    out.push_back({labels[i].item<int64_t>(), scores[i].item<float>()});
  return out;
}

int main() {
  torch::Device device(torch::kCUDA);
  Classifier model;
  model.to(device);
  model.eval();
  std::vector<float> request(32, 0.25f);
  for (int r = 0; r < 100; ++r) {
    auto start = std::chrono::steady_clock::now();
    auto result = handle(model, request, device); // SYNC: true
    torch::cuda::synchronize(); // SYNC: intentional
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (r % 20 == 0)
      std::printf("request %d label %lld score %.3f (%.2f ms)\n", r, static_cast<long long>(result[0].label),
                  result[0].score, ms);
  }
  return 0;
}
