// Variable-length sequences packed on the GPU: lengths computed from a padding
// mask, valid positions gathered with nonzero, and a histogram of lengths.
#include <torch/torch.h>
#include <cstdio>

torch::Tensor pack(const torch::Tensor &tokens, int64_t pad) {
  auto mask = tokens.ne(pad);
  auto lengths = mask.sum(1);
  auto positions = torch::nonzero(mask); // SYNC: true
  auto values = tokens.masked_select(mask); // SYNC: true
  auto max_len = lengths.max().item<int64_t>(); // SYNC: true
  auto packed = torch::full({tokens.size(0), max_len}, pad, tokens.options());
  packed.index_put_({positions.select(1, 0), positions.select(1, 1)}, values);
  return packed;
}

int main() {
  torch::Device device(torch::kCUDA);
  auto tokens = torch::randint(0, 50, {64, 128}, torch::TensorOptions().dtype(torch::kLong).device(device));
  tokens.masked_fill_(torch::rand({64, 128}, device) < 0.3, 0);
  auto packed = pack(tokens, 0);
  auto lengths = tokens.ne(0).sum(1);
  auto histogram = torch::bincount(lengths); // SYNC: true
  auto distinct = std::get<0>(torch::_unique(lengths)); // SYNC: true
  std::printf("packed to %lld columns, %lld distinct lengths, histogram of %lld bins\n",
              static_cast<long long>(packed.size(1)), static_cast<long long>(distinct.numel()),
              static_cast<long long>(histogram.numel()));
  return 0;
}
