// A word-level LSTM language model in the style of the PyTorch examples: batches of
// token ids cut from one long host tensor, truncated backpropagation through time,
// gradient clipping with the norm logged, perplexity per epoch, tokens per second.
#include <torch/torch.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <tuple>

struct LanguageModelImpl : torch::nn::Module {
  LanguageModelImpl(int64_t vocab, int64_t dim, int64_t layers)
      : embed(register_module("embed", torch::nn::Embedding(vocab, dim))),
        lstm(register_module("lstm", torch::nn::LSTM(torch::nn::LSTMOptions(dim, dim).num_layers(layers)))),
        decoder(register_module("decoder", torch::nn::Linear(dim, vocab))) {}
  std::tuple<torch::Tensor, std::tuple<torch::Tensor, torch::Tensor>>
  forward(const torch::Tensor &tokens, std::tuple<torch::Tensor, torch::Tensor> state) {
    auto [output, next] = lstm->forward(embed->forward(tokens), state);
    return {decoder->forward(output), next};
  }
  torch::nn::Embedding embed;
  torch::nn::LSTM lstm;
  torch::nn::Linear decoder;
};
TORCH_MODULE(LanguageModel);

torch::Tensor batchify(const torch::Tensor &data, int64_t batch_size) {
  int64_t columns = data.size(0) / batch_size;
  return data.narrow(0, 0, columns * batch_size).view({batch_size, columns}).t().contiguous();
}

int main() {
  torch::manual_seed(42);
  torch::Device device(torch::kCUDA);
  const int64_t vocab = 1000, bptt = 35, dim = 128;
  auto corpus = torch::randint(vocab, {200000}, torch::kLong);
  auto train = batchify(corpus, 20).to(device); // SYNC: false
  LanguageModel model(vocab, dim, 2);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), 20.0);
  for (int epoch = 1; epoch <= 3; ++epoch) {
    model->train();
    auto state = std::make_tuple(torch::zeros({2, 20, dim}, device), torch::zeros({2, 20, dim}, device));
    double total_loss = 0, epoch_loss = 0, norm = 0;
    int64_t batches = 0;
    auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i + 1 < train.size(0); i += bptt) {
      int64_t len = std::min(bptt, train.size(0) - 1 - i);
      auto input = train.narrow(0, i, len), target = train.narrow(0, i + 1, len);
      state = std::make_tuple(std::get<0>(state).detach(), std::get<1>(state).detach());
      optimizer.zero_grad();
      auto [logits, next] = model->forward(input, state);
      state = next;
      auto loss = torch::cross_entropy_loss(logits.view({-1, vocab}), target.reshape({-1}));
      loss.backward();
      norm = torch::nn::utils::clip_grad_norm_(model->parameters(), 0.25); // SYNC: false
      optimizer.step();
      total_loss += loss.item<double>(); // SYNC: false
      ++batches;
      if (batches % 200 == 0) {
        torch::cuda::synchronize(); // SYNC: intentional
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("| epoch %d | %lld batches | loss %.2f | ppl %.2f | grad norm %.3f | %.0f tok/s\n", epoch,
                    static_cast<long long>(batches), total_loss / 200, std::exp(total_loss / 200), norm,
                    200 * bptt * 20 / seconds);
        epoch_loss += total_loss;
        total_loss = 0;
        start = std::chrono::steady_clock::now();
      }
    }
    std::printf("end of epoch %d: ppl %.2f\n", epoch, std::exp((epoch_loss + total_loss) / batches));
  }
  return 0;
}
