// Hand-written sync-free twin of programs/data_loader_train.cpp: the same dataset,
// loader and model; each loader batch pinned (only when CUDA is available, as
// DataLoader(pin_memory=True) does in Python) and copied with non_blocking=true; the
// epoch's loss and correct count summed on the device and read once per epoch. The NaN
// guard moves to the epoch's end: a NaN loss makes the summed loss NaN (the losses are
// >= 0, so no inf - inf makes one that the per-batch guard would not have seen).
#include "syncprobe.h"
#include <cmath>
#include <cstdio>

class ClusterDataset : public torch::data::datasets::Dataset<ClusterDataset> {
public:
  ClusterDataset(int64_t samples, int64_t features, int64_t classes) {
    targets_ = torch::randint(classes, {samples});
    auto centers = torch::randn({classes, features}) * 0.5;
    data_ = centers.index_select(0, targets_) + torch::randn({samples, features});
  }

  torch::data::Example<> get(size_t index) override {
    return {data_[index], targets_[index]};
  }

  torch::optional<size_t> size() const override { return data_.size(0); }

private:
  torch::Tensor data_, targets_;
};

struct Classifier : torch::nn::Module {
  Classifier(int64_t features, int64_t hidden, int64_t classes) {
    fc1 = register_module("fc1", torch::nn::Linear(features, hidden));
    fc2 = register_module("fc2", torch::nn::Linear(hidden, classes));
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x));
    return torch::log_softmax(fc2->forward(x), /*dim=*/1);
  }

  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  const bool gpu = torch::cuda::is_available();
  const int64_t samples = gpu ? 4096 : 512, features = gpu ? 128 : 32, hidden = gpu ? 512 : 64;
  const int64_t classes = 10, kBatchSize = 64;

  auto dataset = ClusterDataset(samples, features, classes).map(torch::data::transforms::Stack<>());
  const size_t dataset_size = dataset.size().value();
  auto data_loader = torch::data::make_data_loader<torch::data::samplers::RandomSampler>(
      std::move(dataset), torch::data::DataLoaderOptions().batch_size(kBatchSize).workers(0));

  Classifier model(features, hidden, classes);
  model.to(device);
  torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(0.01).momentum(0.5));

  double train_loss = 0, train_accuracy = 0;
  syncprobe::Harness harness("data_loader_train");
  harness.run([&](int epoch) {
    model.train();
    auto total_loss = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
    auto correct = torch::zeros({}, torch::TensorOptions().dtype(torch::kLong).device(device));
    for (auto &batch : *data_loader) {
      auto data = batch.data, targets = batch.target;
      if (gpu) {
        data = data.pin_memory();
        targets = targets.pin_memory();
      }
      data = data.to(device, /*non_blocking=*/true);
      targets = targets.to(device, /*non_blocking=*/true);
      optimizer.zero_grad();
      auto output = model.forward(data);
      auto loss = torch::nll_loss(output, targets);
      loss.backward();
      optimizer.step();
      // float * int64 is a float product on the host too; the double sum adds it as is.
      total_loss.add_(loss.detach() * data.size(0));
      correct.add_(output.argmax(1).eq(targets).sum());
    }
    train_loss = total_loss.item<double>() / dataset_size;
    AT_ASSERT(!std::isnan(train_loss));
    train_accuracy = static_cast<double>(correct.item<int64_t>()) / dataset_size;
    if (epoch == 0)
      std::printf("Train Epoch: %d | Loss: %.4f | Accuracy: %.3f\n", epoch, train_loss, train_accuracy);
  });
  harness.result("train_loss", train_loss);
  harness.result("train_accuracy", train_accuracy);
  harness.result("fc2_weight", model.fc2->weight);
  return 0;
}
