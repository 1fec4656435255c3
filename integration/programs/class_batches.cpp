// The training data kept in FIELDS of the program's own class, the shape most public
// LibTorch trainers take. `Trainer`'s constructor builds the data set on the CPU
// (pageable host tensors): std::vector<torch::Tensor> fields inputs_ and labels_ filled
// with push_back of torch::randn / torch::randint batches in its body, and a validation
// set in two plain torch::Tensor fields (val_images_ made in the member-initialiser
// list, val_labels_ assigned in the body). The model (Linear/ReLU, moved to the device
// in the constructor) and an SGD optimizer are members too. train_epoch() copies each
// batch with `.to(device_)`, runs forward/backward/step and sums `loss.item<double>()`
// and `...sum().item<int64_t>()`; validate() copies `narrow()` slices of the validation
// fields under NoGradGuard and sums its loss and correct count the same way.
// One harness step = train_epoch() then validate().
// GPU-bound size: features 512, hidden 2048, batch 1024, 16 training and 4 validation
// batches (CPU: features 32, hidden 64, batch 32).
#include "syncprobe.h"
#include <cstdio>
#include <memory>
#include <vector>

struct Net : torch::nn::Module {
  Net(int64_t features, int64_t hidden, int64_t classes)
      : fc1(register_module("fc1", torch::nn::Linear(features, hidden))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, hidden))),
        fc3(register_module("fc3", torch::nn::Linear(hidden, classes))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x));
    x = torch::relu(fc2->forward(x));
    return fc3->forward(x);
  }

  torch::nn::Linear fc1, fc2, fc3;
};

struct Stats {
  double loss = 0;
  double accuracy = 0;
};

class Trainer {
public:
  static constexpr int64_t kClasses = 10;

  Trainer(torch::Device device, int64_t features, int64_t hidden, int64_t batch_size,
          int64_t num_batches, int64_t val_batches)
      : device_(device), batch_size_(batch_size), val_batches_(val_batches),
        val_images_(torch::randn({val_batches * batch_size, features})),
        model_(std::make_shared<Net>(features, hidden, kClasses)),
        optimizer_(model_->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9)) {
    model_->to(device_);
    for (int64_t i = 0; i < num_batches; ++i) {
      inputs_.push_back(torch::randn({batch_size, features}));
      labels_.push_back(torch::randint(kClasses, {batch_size}));
    }
    val_labels_ = torch::randint(kClasses, {val_batches * batch_size});
  }

  Stats train_epoch() {
    model_->train();
    double epoch_loss = 0;
    int64_t correct = 0;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      torch::Tensor data = inputs_[i].to(device_);
      torch::Tensor target = labels_[i].to(device_);
      optimizer_.zero_grad();
      torch::Tensor output = model_->forward(data);
      torch::Tensor loss = torch::nn::functional::cross_entropy(output, target);
      loss.backward();
      optimizer_.step();
      epoch_loss += loss.item<double>();
      correct += output.argmax(1).eq(target).sum().item<int64_t>();
    }
    Stats stats;
    stats.loss = epoch_loss / inputs_.size();
    stats.accuracy = static_cast<double>(correct) / (inputs_.size() * batch_size_);
    return stats;
  }

  Stats validate() {
    torch::NoGradGuard no_grad;
    model_->eval();
    double val_loss = 0;
    int64_t correct = 0;
    for (int64_t b = 0; b < val_batches_; ++b) {
      torch::Tensor data = val_images_.narrow(0, b * batch_size_, batch_size_).to(device_);
      torch::Tensor target = val_labels_.narrow(0, b * batch_size_, batch_size_).to(device_);
      torch::Tensor output = model_->forward(data);
      val_loss += torch::nn::functional::cross_entropy(output, target).item<double>();
      correct += output.argmax(1).eq(target).sum().item<int64_t>();
    }
    Stats stats;
    stats.loss = val_loss / val_batches_;
    stats.accuracy = static_cast<double>(correct) / val_images_.size(0);
    return stats;
  }

  const std::shared_ptr<Net> &model() const { return model_; }

private:
  torch::Device device_;
  int64_t batch_size_, val_batches_;
  torch::Tensor val_images_, val_labels_;
  std::vector<torch::Tensor> inputs_, labels_;
  std::shared_ptr<Net> model_;
  torch::optim::SGD optimizer_;
};

int main() {
  torch::manual_seed(0);
  const bool gpu = torch::cuda::is_available();
  Trainer trainer(syncprobe::device(), gpu ? 512 : 32, gpu ? 2048 : 64, gpu ? 1024 : 32, 16, 4);

  Stats train, val;
  syncprobe::Harness harness("class_batches");
  harness.run([&](int epoch) {
    train = trainer.train_epoch();
    val = trainer.validate();
    if (epoch == 0)
      std::printf("epoch %d loss %.5f accuracy %.4f val_loss %.5f val_accuracy %.4f\n", epoch,
                  train.loss, train.accuracy, val.loss, val.accuracy);
  });
  harness.result("mean_loss", train.loss);
  harness.result("accuracy", train.accuracy);
  harness.result("val_loss", val.loss);
  harness.result("val_accuracy", val.accuracy);
  harness.result("fc3_weight", trainer.model()->fc3->weight);
  return 0;
}
