// k-nearest-neighbour classification: distances on the GPU, the k nearest labels
// voted with bincount on the host, predictions compared with the truth.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

int64_t vote(const torch::Tensor &neighbour_labels, int64_t classes) {
  auto counts = torch::bincount(neighbour_labels, {}, classes);
  return counts.argmax().item<int64_t>();
}

int main() {
  torch::Device device(torch::kCUDA);
  const int64_t classes = 4;
  auto train_x = torch::randn({2000, 16}, device);
  auto train_y = torch::randint(classes, {2000}, torch::TensorOptions().dtype(torch::kLong).device(device));
  auto test_x = torch::randn({100, 16}, device);
  auto test_y = torch::randint(classes, {100}, torch::TensorOptions().dtype(torch::kLong).device(device));
  auto distances = torch::cdist(test_x, train_x);
  auto nearest = std::get<1>(distances.topk(7, 1, false));
  auto neighbour_labels = train_y.index({nearest}).cpu(); // SYNC: true
  auto truth = test_y.cpu(); // SYNC: true
  int64_t correct = 0;
  for (int64_t i = 0; i < neighbour_labels.size(0); ++i)
    correct += vote(neighbour_labels[i], classes) == truth[i].item<int64_t>();
  std::printf("accuracy %.3f\n", static_cast<double>(correct) / neighbour_labels.size(0));
  return 0;
}
