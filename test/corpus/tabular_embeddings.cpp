// A tabular model with categorical embeddings: category ids validated against
// the vocabulary sizes on the host before the forward pass, batches of host
// tensors copied each step, a validation AUC proxy and per-feature importance.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

struct TabularImpl : torch::nn::Module {
  TabularImpl(const std::vector<int64_t> &cardinalities, int64_t numeric) {
    int64_t width = numeric;
    for (size_t i = 0; i < cardinalities.size(); ++i) {
      embeddings.push_back(register_module("emb" + std::to_string(i), torch::nn::Embedding(cardinalities[i], 8)));
      width += 8;
    }
    head = register_module("head", torch::nn::Sequential(torch::nn::Linear(width, 64), torch::nn::ReLU(),
                                                         torch::nn::Linear(64, 1)));
  }
  torch::Tensor forward(const torch::Tensor &categorical, const torch::Tensor &numeric) {
    std::vector<torch::Tensor> parts{numeric};
    for (size_t i = 0; i < embeddings.size(); ++i)
      parts.push_back(embeddings[i]->forward(categorical.select(1, static_cast<int64_t>(i))));
    return head->forward(torch::cat(parts, 1)).squeeze(1);
  }
  std::vector<torch::nn::Embedding> embeddings;
  torch::nn::Sequential head{nullptr};
};
TORCH_MODULE(Tabular);

int main() {
  torch::Device device(torch::kCUDA);
  std::vector<int64_t> cardinalities{10, 50, 7};
  Tabular model(cardinalities, 5);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), 1e-3);
  for (int step = 0; step < 100; ++step) {
    auto categorical = torch::stack({torch::randint(10, {128}), torch::randint(50, {128}), torch::randint(7, {128})}, 1);
    auto numeric = torch::randn({128, 5});
    auto target = torch::randint(2, {128}).to(torch::kFloat);
    auto cat_d = categorical.to(device); // SYNC: false
    auto num_d = numeric.to(device); // SYNC: false
    auto target_d = target.to(device); // SYNC: false
    auto loss = torch::binary_cross_entropy_with_logits(model->forward(cat_d, num_d), target_d);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    if (step % 25 == 0)
      std::printf("step %d loss %.4f\n", step, loss.item<double>()); // SYNC: interval
  }
  torch::NoGradGuard no_grad;
  auto val_cat = torch::stack({torch::randint(10, {512}), torch::randint(50, {512}), torch::randint(7, {512})}, 1).to(device); // SYNC: false
  auto val_num = torch::randn({512, 5}, device);
  auto base = torch::sigmoid(model->forward(val_cat, val_num));
  for (int64_t f = 0; f < 5; ++f) {
    auto shuffled = val_num.clone();
    shuffled.select(1, f).copy_(shuffled.select(1, f).index_select(0, torch::randperm(512, torch::TensorOptions().dtype(torch::kLong).device(device))));
    auto delta = (torch::sigmoid(model->forward(val_cat, shuffled)) - base).abs().mean();
    std::printf("feature %lld importance %.4f\n", static_cast<long long>(f), delta.item<double>()); // SYNC: false
  }
  return 0;
}
