// A multi-task model with a classification head and a regression head: per-task
// losses weighted by host-side uncertainty weights, metrics kept in a struct
// returned to the caller, which prints them and adapts the weights.
#include <torch/torch.h>
#include <cstdio>

struct TaskMetrics {
  double cls_loss = 0, reg_loss = 0, accuracy = 0;
  int64_t batches = 0;
};

struct MultiTaskImpl : torch::nn::Module {
  MultiTaskImpl()
      : trunk(register_module("trunk", torch::nn::Sequential(torch::nn::Linear(24, 64), torch::nn::ReLU()))),
        cls(register_module("cls", torch::nn::Linear(64, 3))), reg(register_module("reg", torch::nn::Linear(64, 1))) {}
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor &x) {
    auto h = trunk->forward(x);
    return {cls->forward(h), reg->forward(h)};
  }
  torch::nn::Sequential trunk;
  torch::nn::Linear cls, reg;
};
TORCH_MODULE(MultiTask);

TaskMetrics train_epoch(MultiTask &model, torch::optim::Optimizer &optimizer, const torch::Tensor &x,
                        const torch::Tensor &labels, const torch::Tensor &values, double w_cls, double w_reg) {
  TaskMetrics m;
  for (int64_t b = 0; b < x.size(0) / 64; ++b) {
    auto xb = x.narrow(0, b * 64, 64);
    auto [logits, pred] = model->forward(xb);
    auto cls_loss = torch::cross_entropy_loss(logits, labels.narrow(0, b * 64, 64));
    auto reg_loss = torch::mse_loss(pred.squeeze(1), values.narrow(0, b * 64, 64));
    auto loss = w_cls * cls_loss + w_reg * reg_loss;
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    m.cls_loss += cls_loss.item<double>(); // SYNC: false
    m.reg_loss += reg_loss.item<double>(); // SYNC: false
    m.accuracy += logits.argmax(1).eq(labels.narrow(0, b * 64, 64)).to(torch::kDouble).mean().item<double>(); // SYNC: false
    ++m.batches;
  }
  return m;
}

int main() {
  torch::Device device(torch::kCUDA);
  MultiTask model;
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), 1e-3);
  auto x = torch::randn({1024, 24}, device);
  auto labels = torch::randint(3, {1024}, torch::TensorOptions().dtype(torch::kLong).device(device));
  auto values = torch::randn({1024}, device);
  double w_cls = 1.0, w_reg = 1.0;
  for (int epoch = 0; epoch < 10; ++epoch) {
    auto m = train_epoch(model, optimizer, x, labels, values, w_cls, w_reg); // SYNC: true
    std::printf("epoch %d cls %.4f reg %.4f acc %.3f\n", epoch, m.cls_loss / m.batches, m.reg_loss / m.batches,
                m.accuracy / m.batches);
    if (m.reg_loss > m.cls_loss)
      w_reg *= 1.1;
  }
  return 0;
}
