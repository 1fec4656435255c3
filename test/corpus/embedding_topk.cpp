// Nearest-neighbour lookup in an embedding table: the best match of a query is
// found on the GPU and used to index the table; results go to the host.
#include <torch/torch.h>
#include <cstdio>
#include <string>
#include <vector>

int main() {
  torch::Device device(torch::kCUDA);
  auto table = torch::nn::functional::normalize(torch::randn({10000, 64}, device),
                                                torch::nn::functional::NormalizeFuncOptions().dim(1));
  std::vector<std::string> names(10000, "item");
  auto queries = torch::randn({16, 64}, device);
  double similarity_total = 0;
  for (int64_t q = 0; q < queries.size(0); ++q) {
    auto query = queries[q];
    auto scores = torch::matmul(table, query);
    auto best = scores.argmax();
    auto row = table.index({best}); // SYNC: false
    similarity_total += torch::dot(row, query).item<double>(); // SYNC: false
    auto top = std::get<1>(scores.topk(5));
    auto host_top = top.cpu(); // SYNC: true
    const int64_t *ids = host_top.data_ptr<int64_t>();
    std::printf("query %lld -> %s #%lld\n", static_cast<long long>(q), names[ids[0]].c_str(),
                static_cast<long long>(ids[0]));
  }
  std::printf("mean similarity %.4f\n", similarity_total / queries.size(0));
  return 0;
}
