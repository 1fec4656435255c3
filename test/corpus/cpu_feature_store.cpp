// CORPUS: cpu-only
// A feature store on the host: rows appended to a growing tensor, lookups by key
// with index_select, missing values imputed with the column median, and a
// summary printed per column.
#include <torch/torch.h>
#include <cstdio>
#include <unordered_map>
#include <vector>

class FeatureStore {
public:
  void put(int64_t key, const std::vector<float> &row) {
    index_[key] = static_cast<int64_t>(rows_.size());
    rows_.push_back(torch::tensor(row));
  }
  torch::Tensor get(const std::vector<int64_t> &keys) const {
    auto table = torch::stack(rows_);
    std::vector<int64_t> positions;
    for (int64_t key : keys)
      positions.push_back(index_.at(key));
    return table.index_select(0, torch::tensor(positions));
  }

private:
  std::vector<torch::Tensor> rows_;
  std::unordered_map<int64_t, int64_t> index_;
};

int main() {
  FeatureStore store;
  for (int64_t k = 0; k < 100; ++k)
    store.put(k, {static_cast<float>(k), k % 7 == 0 ? NAN : static_cast<float>(k % 13), 1.0f});
  auto batch = store.get({1, 7, 14, 50, 99});
  auto missing = batch.isnan();
  for (int64_t c = 0; c < batch.size(1); ++c) {
    auto column = batch.select(1, c);
    auto present = column.index({missing.select(1, c).logical_not()});
    if (present.numel() > 0)
      column.masked_fill_(missing.select(1, c), present.median().item<float>());
    std::printf("column %lld: mean %.3f max %.3f\n", static_cast<long long>(c), column.mean().item<double>(),
                column.max().item<double>());
  }
  return 0;
}
