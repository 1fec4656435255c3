// CORPUS: cpu-only
// A complete CPU training program: a torch::data dataset and loader, an
// optimizer, per-epoch validation with accuracy, early stopping and a
// checkpoint. Built for machines without a GPU: it never names a CUDA device.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

class SyntheticDataset : public torch::data::datasets::Dataset<SyntheticDataset> {
public:
  explicit SyntheticDataset(int64_t size) : x_(torch::randn({size, 10})), y_((x_.sum(1) > 0).to(torch::kLong)) {}
  torch::data::Example<> get(size_t index) override {
    return {x_[static_cast<int64_t>(index)], y_[static_cast<int64_t>(index)]};
  }
  torch::optional<size_t> size() const override { return static_cast<size_t>(x_.size(0)); }

private:
  torch::Tensor x_, y_;
};

int main() {
  torch::manual_seed(3);
  torch::Device device(torch::kCPU);
  torch::nn::Sequential model(torch::nn::Linear(10, 32), torch::nn::ReLU(), torch::nn::Linear(32, 2));
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), 1e-2);
  auto train_loader = torch::data::make_data_loader(
      SyntheticDataset(800).map(torch::data::transforms::Stack<>()), 32);
  auto val_x = torch::randn({200, 10});
  auto val_y = (val_x.sum(1) > 0).to(torch::kLong);
  double best = 0;
  int stale = 0;
  for (int epoch = 0; epoch < 20; ++epoch) {
    double running = 0;
    int64_t batches = 0;
    for (auto &batch : *train_loader) {
      auto data = batch.data.to(device), target = batch.target.to(device);
      optimizer.zero_grad();
      auto loss = torch::cross_entropy_loss(model->forward(data), target);
      loss.backward();
      optimizer.step();
      running += loss.item<double>();
      ++batches;
    }
    torch::NoGradGuard no_grad;
    auto predictions = model->forward(val_x).argmax(1);
    double accuracy = predictions.eq(val_y).to(torch::kDouble).mean().item<double>();
    auto wrong = torch::nonzero(predictions.ne(val_y));
    std::printf("epoch %d loss %.4f val acc %.3f (%lld wrong)\n", epoch, running / batches, accuracy,
                static_cast<long long>(wrong.size(0)));
    if (accuracy > best) {
      best = accuracy;
      stale = 0;
      torch::save(model, "cpu_model.pt");
    } else if (++stale == 3) {
      break;
    }
  }
  return 0;
}
