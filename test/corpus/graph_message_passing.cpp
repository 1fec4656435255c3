// Message passing on a graph stored as an edge list: messages gathered with
// index_select, aggregated with index_add_, node degrees, isolated nodes found
// with nonzero, and the edge list deduplicated with unique.
#include <torch/torch.h>
#include <cstdio>

torch::Tensor propagate(const torch::Tensor &features, const torch::Tensor &edges, torch::nn::Linear &lin) {
  auto src = edges.select(0, 0), dst = edges.select(0, 1);
  auto messages = lin->forward(features.index_select(0, src));
  auto out = torch::zeros_like(features);
  out.index_add_(0, dst, messages);
  auto degree = torch::zeros({features.size(0)}, features.options()).index_add_(0, dst, torch::ones_like(dst, features.options()));
  return out / degree.clamp_min(1).unsqueeze(1);
}

int main() {
  torch::Device device(torch::kCUDA);
  const int64_t nodes = 1000;
  auto features = torch::randn({nodes, 32}, device);
  auto edges = torch::randint(nodes, {2, 5000}, torch::TensorOptions().dtype(torch::kLong).device(device));
  auto flat = edges.select(0, 0) * nodes + edges.select(0, 1);
  auto unique_flat = std::get<0>(torch::_unique(flat)); // SYNC: true
  edges = torch::stack({unique_flat.div(nodes, "floor"), unique_flat.remainder(nodes)});
  torch::nn::Linear lin1(32, 32), lin2(32, 32);
  lin1->to(device);
  lin2->to(device);
  auto h = torch::relu(propagate(features, edges, lin1));
  h = propagate(h, edges, lin2);
  auto in_degree = torch::zeros({nodes}, torch::TensorOptions().dtype(torch::kLong).device(device));
  in_degree.index_add_(0, edges.select(0, 1), torch::ones({edges.size(1)}, in_degree.options()));
  auto isolated = torch::nonzero(in_degree.eq(0)).squeeze(1); // SYNC: true
  std::printf("%lld edges, %lld isolated nodes, embedding norm %.3f\n", static_cast<long long>(edges.size(1)),
              static_cast<long long>(isolated.numel()), h.norm().item<double>()); // SYNC: false
  return 0;
}
