// Attention with a padding mask: masked positions filled, per-example scalars
// written with index_put_, a causal mask built from host indices.
#include <torch/torch.h>
#include <cstdio>

torch::Tensor attend(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
                     const torch::Tensor &padding) {
  auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(-1)));
  scores = scores.masked_fill(padding.unsqueeze(1), -1e9);
  auto causal = torch::ones({q.size(1), k.size(1)}, torch::kBool).triu(1);
  scores = scores.masked_fill(causal.to(q.device()), -1e9); // SYNC: false
  return torch::matmul(torch::softmax(scores, -1), v);
}

int main() {
  torch::Device device(torch::kCUDA);
  auto q = torch::randn({4, 16, 32}, device), k = torch::randn({4, 16, 32}, device), v = torch::randn({4, 16, 32}, device);
  auto padding = torch::zeros({4, 16}, torch::TensorOptions().dtype(torch::kBool).device(device));
  auto lengths = torch::randint(8, 16, {4}, torch::TensorOptions().dtype(torch::kLong).device(device));
  for (int64_t i = 0; i < 4; ++i)
    padding[i].narrow(0, lengths[i].item<int64_t>(), 16 - lengths[i].item<int64_t>()).fill_(true); // SYNC: true true
  auto out = attend(q, k, v, padding);
  auto first = torch::zeros({4}, torch::TensorOptions().dtype(torch::kLong).device(device));
  out.index_put_({torch::arange(4, first.options()), first, first}, 0.0); // SYNC: false
  std::printf("output norm %.4f\n", out.norm().item<double>()); // SYNC: false
  return 0;
}
