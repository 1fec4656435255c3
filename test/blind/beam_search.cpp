// Beam search decoding for a small GRU decoder, keeping a pool of finished
// hypotheses (fairseq / HF style) and applying a GNMT length penalty.
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <tuple>
#include <vector>

struct DecoderImpl : torch::nn::Module {
  DecoderImpl(int64_t vocab, int64_t hidden)
      : emb(register_module("emb", torch::nn::Embedding(vocab, hidden))),
        cell(register_module("cell", torch::nn::GRUCell(hidden, hidden))),
        out(register_module("out", torch::nn::Linear(hidden, vocab))) {}
  torch::nn::Embedding emb;
  torch::nn::GRUCell cell;
  torch::nn::Linear out;
};
TORCH_MODULE(Decoder);

struct Hypothesis {
  std::vector<int64_t> tokens;
  double score;
};

static double length_penalty(int64_t len, double alpha) {
  return std::pow((5.0 + static_cast<double>(len)) / 6.0, alpha);
}

std::vector<Hypothesis> beam_search(Decoder& dec, const torch::Tensor& h0, int64_t beam,
                                    int64_t max_len, int64_t bos, int64_t eos, double alpha,
                                    bool verbose) {
  torch::NoGradGuard no_grad;
  const auto dev = h0.device();
  const int64_t vocab = dec->out->weight.size(0);
  const float neg_inf = -std::numeric_limits<float>::infinity();

  auto tokens = torch::full({beam, 1}, bos, torch::TensorOptions().dtype(torch::kLong).device(dev));
  auto scores = torch::zeros({beam}, h0.options());
  scores.index_put_({torch::indexing::Slice(1, torch::indexing::None)}, neg_inf);
  auto h = h0.expand({beam, h0.size(1)}).contiguous();
  std::vector<Hypothesis> finished;

  for (int64_t t = 0; t < max_len && static_cast<int64_t>(finished.size()) < beam; ++t) {
    h = dec->cell->forward(dec->emb->forward(tokens.select(1, -1)), h);
    auto logp = torch::log_softmax(dec->out->forward(h), /*dim=*/-1);

    // 2*beam candidates so that `beam` live ones remain after removing EOS.
    auto cand = (scores.unsqueeze(1) + logp).view({-1});
    torch::Tensor top_scores, top_idx;
    std::tie(top_scores, top_idx) = cand.topk(2 * beam);
    auto src_beam = torch::div(top_idx, vocab, "floor");
    auto next_tok = top_idx.remainder(vocab);
    auto new_tokens = torch::cat({tokens.index_select(0, src_beam), next_tok.unsqueeze(1)}, 1);
    if (verbose) {
      std::cout << "t=" << t << " candidates " << top_scores.sizes() << ":\n" << top_scores << "\n";  // SYNC: false
    }

    auto is_eos = next_tok.eq(eos);
    if (is_eos.any().item<bool>()) {  // SYNC: true
      auto eos_rows = is_eos.nonzero().squeeze(1);  // SYNC: true
      auto fin_tokens = new_tokens.index_select(0, eos_rows).cpu();  // SYNC: true
      auto fin_scores = top_scores.masked_select(is_eos).cpu();  // SYNC: true true
      for (int64_t i = 0; i < fin_tokens.size(0); ++i) {
        auto row = fin_tokens[i].contiguous();
        const int64_t* p = row.data_ptr<int64_t>();
        const double s = fin_scores[i].item<double>();
        finished.push_back({std::vector<int64_t>(p, p + row.numel()),
                            s / length_penalty(row.numel(), alpha)});
      }
    }

    // Keep the `beam` best candidates that did not end; EOS ones get -inf.
    auto live_scores = top_scores.masked_fill(is_eos, neg_inf);
    torch::Tensor keep_scores, keep_pos;
    std::tie(keep_scores, keep_pos) = live_scores.topk(beam);
    tokens = new_tokens.index_select(0, keep_pos);
    h = h.index_select(0, src_beam.index_select(0, keep_pos));
    scores = keep_scores;
  }

  if (finished.empty()) {
    // Nothing reached EOS: fall back to the best live beam.
    const int64_t best = scores.argmax().item<int64_t>();  // SYNC: true
    auto row = tokens[best].to(torch::kCPU);  // SYNC: true
    const double s = scores[best].item().toDouble();  // SYNC: true
    finished.push_back({std::vector<int64_t>(row.data_ptr<int64_t>(),
                                             row.data_ptr<int64_t>() + row.numel()),
                        s / length_penalty(row.numel(), alpha)});
  }
  std::sort(finished.begin(), finished.end(),
            [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  if (static_cast<int64_t>(finished.size()) > beam) finished.resize(beam);
  return finished;
}

int main() {
  torch::manual_seed(7);
  const torch::Device dev(torch::kCUDA);
  const int64_t kVocab = 1000, kHidden = 256, kBos = 1, kEos = 2;

  Decoder dec(kVocab, kHidden);
  dec->to(dev);  // SYNC: false
  dec->eval();

  // "Encoder" states for a handful of source sentences.
  auto enc_states = torch::randn({16, kHidden}, torch::TensorOptions().device(dev));
  std::cout << "decoding " << enc_states.size(0) << " sentences on " << enc_states.device()
            << "\n";

  int64_t total_tokens = 0;
  for (int64_t i = 0; i < enc_states.size(0); ++i) {
    auto h0 = enc_states.slice(0, i, i + 1);
    auto hyps = beam_search(dec, h0, /*beam=*/5, /*max_len=*/40, kBos, kEos,  // SYNC: true
                            /*alpha=*/0.6, /*verbose=*/i == 0);
    const auto& best = hyps.front();
    total_tokens += static_cast<int64_t>(best.tokens.size());
    std::cout << "sent " << i << " score " << best.score << " :";
    for (int64_t tok : best.tokens) std::cout << ' ' << tok;
    std::cout << "\n";
  }
  std::cout << "total output tokens " << total_tokens << "\n";
  return 0;
}
