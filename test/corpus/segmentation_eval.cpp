// Evaluation of a segmentation model: per-class intersection and union summed
// over the validation set, mean IoU printed; a confusion matrix with bincount.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

int main() {
  torch::Device device(torch::kCUDA);
  const int64_t classes = 5;
  torch::nn::Conv2d head(torch::nn::Conv2dOptions(3, classes, 1));
  head->to(device);
  head->eval();
  std::vector<double> intersection(classes, 0), union_(classes, 0);
  torch::Tensor confusion = torch::zeros({classes * classes}, torch::TensorOptions().dtype(torch::kLong).device(device));
  torch::NoGradGuard no_grad;
  for (int batch = 0; batch < 10; ++batch) {
    auto images = torch::randn({4, 3, 64, 64}, device);
    auto labels = torch::randint(classes, {4, 64, 64}, torch::TensorOptions().dtype(torch::kLong).device(device));
    auto pred = head->forward(images).argmax(1);
    for (int64_t c = 0; c < classes; ++c) {
      auto p = pred.eq(c), l = labels.eq(c);
      intersection[c] += (p & l).sum().item<int64_t>(); // SYNC: false
      union_[c] += (p | l).sum().item<int64_t>(); // SYNC: false
    }
    confusion += torch::bincount(labels.flatten() * classes + pred.flatten(), {}, classes * classes); // SYNC: true
  }
  double miou = 0;
  for (int64_t c = 0; c < classes; ++c)
    miou += intersection[c] / std::max(union_[c], 1.0);
  std::printf("mIoU %.4f\n", miou / classes);
  auto host = confusion.view({classes, classes}).cpu(); // SYNC: true
  for (int64_t r = 0; r < classes; ++r)
    std::printf("row %lld: %lld\n", static_cast<long long>(r), static_cast<long long>(host[r].sum().item<int64_t>()));
  return 0;
}
