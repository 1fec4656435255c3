// Two-tower recommendation model: a user tower that sums the embeddings of
// the user's recent item ids (EmbeddingBag + offsets) and an item tower, with
// a row-wise sparse Adagrad update and HR@10 / MRR evaluation.
#include <torch/torch.h>

#include <cstdio>
#include <random>
#include <vector>

struct TwoTowerImpl : torch::nn::Module {
  TwoTowerImpl(int64_t num_items, int64_t dim)
      : history(register_module(
            "history", torch::nn::EmbeddingBag(
                           torch::nn::EmbeddingBagOptions(num_items, dim).mode(torch::kMean)))),
        items(register_module("items", torch::nn::Embedding(num_items, dim))),
        cold_user(register_parameter("cold_user", torch::zeros({dim}))) {}

  torch::Tensor user_vec(const torch::Tensor& ids, const torch::Tensor& offsets) {
    return history->forward(ids, offsets);
  }
  torch::nn::EmbeddingBag history;
  torch::nn::Embedding items;
  torch::Tensor cold_user;
};
TORCH_MODULE(TwoTower);

struct Batch {
  std::vector<int64_t> ids, offsets, targets;
};

static Batch sample_batch(std::mt19937_64& rng, int64_t users, int64_t num_items) {
  Batch b;
  std::uniform_int_distribution<int64_t> len(0, 20), item(0, num_items - 1);
  for (int64_t u = 0; u < users; ++u) {
    b.offsets.push_back(static_cast<int64_t>(b.ids.size()));
    const int64_t n = len(rng);
    for (int64_t k = 0; k < n; ++k) b.ids.push_back(item(rng) % (num_items / 4));
    b.targets.push_back(b.ids.empty() ? 0 : (b.ids.back() + 1) % num_items);
  }
  return b;
}

int main() {
  torch::manual_seed(3);
  std::mt19937_64 rng(3);
  const torch::Device dev(torch::kCUDA);
  const auto lopts = torch::TensorOptions().dtype(torch::kLong).device(dev);
  const int64_t kItems = 200000, kDim = 64, kUsers = 1024, kSteps = 2000;

  TwoTower model(kItems, kDim);
  model->to(dev);  // SYNC: false
  auto adagrad_state = torch::zeros({kItems}, torch::TensorOptions().device(dev));
  const double lr = 0.05;
  auto hits_total = torch::zeros({}, lopts);

  for (int64_t step = 0; step < kSteps; ++step) {
    Batch b = sample_batch(rng, kUsers, kItems);
    auto ids = torch::from_blob(b.ids.data(), {static_cast<int64_t>(b.ids.size())}, torch::kLong)
                   .to(dev);  // SYNC: false
    auto offsets = torch::tensor(b.offsets, lopts);  // SYNC: false
    auto targets = torch::from_blob(b.targets.data(), {kUsers}, torch::kLong)
                       .pin_memory()
                       .to(dev, /*non_blocking=*/true);
    TORCH_CHECK(ids.min().item<int64_t>() >= 0, "negative item id");  // SYNC: true
    TORCH_CHECK(ids.max().item<int64_t>() < kItems, "item id out of range");  // SYNC: true

    // Users without history get a learned "cold user" vector instead of the
    // zero vector EmbeddingBag returns for an empty bag.
    auto lens = torch::diff(offsets, 1, 0, {},
                            torch::full({1}, static_cast<int64_t>(b.ids.size()), lopts));
    auto u = model->user_vec(ids, offsets);
    auto cold = lens.eq(0).nonzero().squeeze(1);  // SYNC: false
    if (cold.numel() > 0) {
      u = u.index_put({cold}, model->cold_user.expand({cold.size(0), kDim}));
    }

    // In-batch sampled softmax: every user against all targets of the batch.
    auto v = model->items->forward(targets);
    auto logits = u.matmul(v.t());
    auto labels = torch::arange(kUsers, lopts);
    auto loss = torch::nn::functional::cross_entropy(logits, labels);
    model->zero_grad();
    loss.backward();

    {
      // Row-wise sparse Adagrad on the rows touched by this batch only.
      torch::NoGradGuard no_grad;
      auto touched = std::get<0>(torch::_unique2(torch::cat({ids, targets})));  // SYNC: true
      for (auto* table : {&model->history->weight, &model->items->weight}) {
        auto g = table->grad().index_select(0, touched);
        auto g2 = g.pow(2).mean(1);
        adagrad_state.index_add_(0, touched, g2);
        auto denom = adagrad_state.index_select(0, touched).sqrt().add_(1e-10).unsqueeze(1);
        table->index_add_(0, touched, g.div(denom).mul(-lr));
      }
      if (model->cold_user.grad().defined()) model->cold_user.sub_(model->cold_user.grad(), lr);
    }

    // Cold users do not count towards the hit rate (masked_fill_ keeps the
    // shapes static).
    auto top10 = std::get<1>(logits.detach().topk(10, /*dim=*/1));
    auto hit = top10.eq(labels.unsqueeze(1)).any(1).masked_fill_(lens.eq(0), false);
    hits_total += hit.sum();
    if (step % 100 == 0) {
      std::printf("step %ld loss %.4f hr@10 %.3f batch ids %ld\n", static_cast<long>(step),
                  loss.item<double>(),  // SYNC: interval
                  hit.to(torch::kFloat).mean().item<double>(),  // SYNC: interval
                  static_cast<long>(ids.numel()));
    }
  }

  // Held-out evaluation: HR@10 and MRR over the whole item catalogue.
  torch::NoGradGuard no_grad;
  int64_t hit_count = 0, evaluated = 0;
  double mrr_sum = 0.0;
  for (int64_t e = 0; e < 20; ++e) {
    Batch b = sample_batch(rng, 256, kItems);
    auto ids = torch::tensor(b.ids, torch::kLong).to(dev);  // SYNC: false
    auto offsets = torch::tensor(b.offsets, torch::kLong).pin_memory().to(dev, true);
    auto targets = torch::tensor(b.targets, torch::kLong).pin_memory().to(dev, true);
    auto scores = model->user_vec(ids, offsets).matmul(model->items->weight.t());
    auto target_score = scores.gather(1, targets.unsqueeze(1));
    auto rank = scores.gt(target_score).sum(1);  // 0-based rank of the target item
    auto is_hit = rank.lt(10);
    hit_count += is_hit.sum().item<int64_t>();  // SYNC: false FIX
    auto hit_ranks = rank.index({is_hit});  // SYNC: false
    mrr_sum += (hit_ranks + 1).to(torch::kDouble).reciprocal().sum().item<double>();  // SYNC: false FIX
    evaluated += targets.numel();
  }
  std::printf("eval HR@10 %.4f MRR@10 %.4f train hits %ld\n",
              static_cast<double>(hit_count) / evaluated, mrr_sum / evaluated,
              static_cast<long>(hits_total.item<int64_t>()));  // SYNC: true
  return 0;
}
