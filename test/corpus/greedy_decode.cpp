// Greedy decoding of a toy sequence model: the next token is chosen on the GPU,
// and the host stops at the end-of-sequence token and keeps the tokens.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

struct Decoder : torch::nn::Module {
  Decoder(int64_t vocab, int64_t dim)
      : embed(register_module("embed", torch::nn::Embedding(vocab, dim))),
        cell(register_module("cell", torch::nn::GRUCell(dim, dim))),
        out(register_module("out", torch::nn::Linear(dim, vocab))) {}
  torch::nn::Embedding embed;
  torch::nn::GRUCell cell;
  torch::nn::Linear out;
};

std::vector<int64_t> decode(Decoder &model, torch::Device device, int64_t bos, int64_t eos, int max_len) {
  torch::NoGradGuard no_grad;
  auto hidden = torch::zeros({1, 32}, device);
  auto token = torch::full({1}, bos, torch::TensorOptions().dtype(torch::kLong).device(device));
  std::vector<int64_t> tokens;
  double log_prob = 0;
  for (int i = 0; i < max_len; ++i) {
    hidden = model.cell->forward(model.embed->forward(token), hidden);
    auto logits = model.out->forward(hidden);
    auto next = logits.argmax(1);
    log_prob += torch::log_softmax(logits, 1).max().item<double>(); // SYNC: false
    int64_t id = next.item<int64_t>(); // SYNC: true
    if (id == eos)
      break;
    tokens.push_back(id);
    token = next;
  }
  std::printf("log prob %.3f\n", log_prob);
  return tokens;
}

int main() {
  torch::Device device(torch::kCUDA);
  Decoder model(100, 32);
  model.to(device);
  for (int sentence = 0; sentence < 5; ++sentence) {
    auto tokens = decode(model, device, 1, 2, 20); // SYNC: true
    std::printf("sentence %d: %zu tokens\n", sentence, tokens.size());
  }
  return 0;
}
