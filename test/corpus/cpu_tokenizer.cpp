// CORPUS: cpu-only
// A whitespace tokenizer producing id tensors, vocabulary statistics computed with
// LibTorch on the CPU, and padding to a batch.
#include <torch/torch.h>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

class Vocabulary {
public:
  int64_t id(const std::string &word) {
    auto it = ids_.find(word);
    if (it != ids_.end())
      return it->second;
    int64_t next = static_cast<int64_t>(ids_.size()) + 2;
    ids_[word] = next;
    return next;
  }
  int64_t size() const { return static_cast<int64_t>(ids_.size()) + 2; }

private:
  std::map<std::string, int64_t> ids_;
};

torch::Tensor encode(Vocabulary &vocab, const std::string &text) {
  std::istringstream stream(text);
  std::vector<int64_t> ids{1};
  for (std::string word; stream >> word;)
    ids.push_back(vocab.id(word));
  return torch::tensor(ids, torch::kLong);
}

int main() {
  Vocabulary vocab;
  std::vector<std::string> corpus{"the cat sat on the mat", "a dog sat", "the end"};
  std::vector<torch::Tensor> encoded;
  for (const auto &line : corpus)
    encoded.push_back(encode(vocab, line));
  int64_t longest = 0;
  for (const auto &e : encoded)
    longest = std::max(longest, e.size(0));
  auto batch = torch::zeros({static_cast<int64_t>(encoded.size()), longest}, torch::kLong);
  for (size_t i = 0; i < encoded.size(); ++i)
    batch[i].narrow(0, 0, encoded[i].size(0)).copy_(encoded[i]);
  auto counts = torch::bincount(batch.flatten(), {}, vocab.size());
  auto used = torch::nonzero(counts).size(0);
  auto most = counts.argmax().item<int64_t>();
  auto padding = batch.eq(0).sum().item<int64_t>();
  std::printf("%lld ids used, most frequent %lld, %lld padding\n", static_cast<long long>(used),
              static_cast<long long>(most), static_cast<long long>(padding));
  if (batch.index({batch > 3}).numel() > 0)
    std::printf("rare words present\n");
  return 0;
}
