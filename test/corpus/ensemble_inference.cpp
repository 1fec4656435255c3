// Ensemble inference: three models vote, the agreement rate is reported, and the
// disagreeing rows are collected for review on the host.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

int main() {
  torch::Device device(torch::kCUDA);
  std::vector<torch::nn::Linear> members;
  for (int i = 0; i < 3; ++i) {
    members.emplace_back(torch::nn::Linear(12, 4));
    members.back()->to(device);
  }
  torch::NoGradGuard no_grad;
  double agreement_total = 0;
  int64_t reviewed = 0;
  for (int batch = 0; batch < 20; ++batch) {
    auto x = torch::randn({256, 12}, device);
    std::vector<torch::Tensor> votes;
    for (auto &m : members)
      votes.push_back(m->forward(x).argmax(1));
    auto stacked = torch::stack(votes);
    auto majority = std::get<0>(stacked.mode(0));
    auto agree = stacked.eq(majority).all(0);
    agreement_total += agree.to(torch::kDouble).mean().item<double>(); // SYNC: false
    auto disagreeing = x.index({agree.logical_not()}); // SYNC: true
    if (disagreeing.size(0) > 0) {
      auto host_rows = disagreeing.cpu(); // SYNC: true
      reviewed += host_rows.size(0);
    }
  }
  std::printf("agreement %.4f, %lld rows for review\n", agreement_total / 20, static_cast<long long>(reviewed));
  return 0;
}
