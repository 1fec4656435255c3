// Training over LibTorch's own data pipeline, in the style of pytorch/examples'
// cpp/mnist: a custom dataset class (synthetic Gaussian clusters, one per class, made
// on the host in the constructor) read through `.map(Stack<>())` and
// `make_data_loader` with a RandomSampler (seeded by torch::manual_seed, no worker
// threads: the same batches in every run), each loader batch copied with
// `.to(device)`, a NaN guard on the loss (AT_ASSERT as the example writes it), and the
// epoch's loss and accuracy summed with `item()`. One harness step = one epoch.
// Sizes: 4096 samples of 128 features, batch 64 (64 batches), hidden 512 on the GPU;
// 512 samples of 32 features, batch 64, hidden 64 on the CPU.
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
    double total_loss = 0;
    int64_t correct = 0;
    for (auto &batch : *data_loader) {
      auto data = batch.data.to(device), targets = batch.target.to(device);
      optimizer.zero_grad();
      auto output = model.forward(data);
      auto loss = torch::nll_loss(output, targets);
      AT_ASSERT(!std::isnan(loss.template item<float>()));
      loss.backward();
      optimizer.step();
      total_loss += loss.template item<float>() * data.size(0);
      auto pred = output.argmax(1);
      correct += pred.eq(targets).sum().template item<int64_t>();
    }
    train_loss = total_loss / dataset_size;
    train_accuracy = static_cast<double>(correct) / dataset_size;
    if (epoch == 0)
      std::printf("Train Epoch: %d | Loss: %.4f | Accuracy: %.3f\n", epoch, train_loss, train_accuracy);
  });
  harness.result("train_loss", train_loss);
  harness.result("train_accuracy", train_accuracy);
  harness.result("fc2_weight", model.fc2->weight);
  return 0;
}
