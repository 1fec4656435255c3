// Single-process data-parallel training of an MLP classifier over two CUDA
// devices: one replica per device, the batch is scattered in halves, the
// gradients are averaged on device 0 and written back to every replica.
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

struct MLPImpl : torch::nn::Module {
  MLPImpl(int64_t in, int64_t hidden, int64_t out)
      : fc1(register_module("fc1", torch::nn::Linear(in, hidden))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, hidden))),
        head(register_module("head", torch::nn::Linear(hidden, out))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x));
    x = torch::relu(fc2->forward(x));
    return head->forward(x);
  }

  torch::nn::Linear fc1, fc2, head;
};
TORCH_MODULE(MLP);

// Make the replica on another device start from exactly the same weights.
static void broadcast_params(const MLP& src, MLP& dst) {
  torch::NoGradGuard no_grad;
  auto sp = src->parameters();
  auto dp = dst->parameters();
  for (size_t i = 0; i < sp.size(); ++i) {
    dp[i].copy_(sp[i], /*non_blocking=*/true);
  }
}

// "All-reduce" by hand: average the gradients of all replicas on the first
// device and copy the mean back to the others.
static void average_gradients(std::vector<MLP>& replicas) {
  torch::NoGradGuard no_grad;
  auto p0 = replicas[0]->parameters();
  for (size_t r = 1; r < replicas.size(); ++r) {
    auto pr = replicas[r]->parameters();
    for (size_t i = 0; i < p0.size(); ++i) {
      p0[i].mutable_grad().add_(pr[i].grad().to(p0[i].device()));
    }
  }
  for (size_t i = 0; i < p0.size(); ++i) {
    p0[i].mutable_grad().div_(static_cast<double>(replicas.size()));
    for (size_t r = 1; r < replicas.size(); ++r) {
      replicas[r]->parameters()[i].mutable_grad().copy_(p0[i].grad());
    }
  }
}

static double evaluate(MLP& model, const torch::Tensor& x, const torch::Tensor& y) {
  torch::NoGradGuard no_grad;
  model->eval();
  auto pred = model->forward(x).argmax(/*dim=*/1);
  auto correct = pred.eq(y).sum();
  model->train();
  return correct.item<double>() / static_cast<double>(x.size(0));  // SYNC: true
}

int main() {
  torch::manual_seed(0);
  if (torch::cuda::device_count() < 2) {
    std::cerr << "this example needs two CUDA devices\n";
    return 1;
  }
  const std::vector<torch::Device> devices = {torch::Device(torch::kCUDA, 0),
                                              torch::Device(torch::kCUDA, 1)};
  const int64_t kIn = 32, kClasses = 10, kN = 16384, kBatch = 512;

  std::vector<MLP> replicas;
  std::vector<std::unique_ptr<torch::optim::SGD>> optimizers;
  for (const auto& dev : devices) {
    MLP m(kIn, 256, kClasses);
    m->to(dev);  // SYNC: false
    replicas.push_back(m);
  }
  broadcast_params(replicas[0], replicas[1]);
  for (auto& m : replicas) {
    optimizers.push_back(std::make_unique<torch::optim::SGD>(
        m->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9)));
  }

  // Synthetic data set in ordinary (pageable) host memory; the held-out set
  // is pinned once and moved to device 0.
  auto data = torch::randn({kN, kIn});
  auto labels = data.narrow(1, 0, kClasses).argmax(1);
  auto eval_x = torch::randn({2048, kIn}).pin_memory();
  auto eval_y = eval_x.narrow(1, 0, kClasses).argmax(1).pin_memory();
  auto eval_x_gpu = eval_x.to(devices[0]);  // SYNC: false FIX
  auto eval_y_gpu = eval_y.to(devices[0], /*non_blocking=*/true);
  std::cout << "first labels: " << labels.slice(0, 0, 8) << "\n";

  double loss_sum = 0.0;
  int64_t step = 0;
  for (const auto& dev : devices) torch::cuda::synchronize(dev.index());  // SYNC: intentional
  const auto t0 = std::chrono::steady_clock::now();

  for (int epoch = 0; epoch < 20; ++epoch) {
    auto perm = torch::randperm(kN);
    for (int64_t b = 0; b + kBatch <= kN; b += kBatch, ++step) {
      auto idx = perm.slice(0, b, b + kBatch);
      auto xs = data.index_select(0, idx).chunk(2);
      auto ys = labels.index_select(0, idx).chunk(2);

      std::vector<torch::Tensor> losses;
      for (size_t r = 0; r < replicas.size(); ++r) {
        auto x = xs[r].to(devices[r]);  // SYNC: false
        auto y = ys[r].pin_memory().to(devices[r], /*non_blocking=*/true);
        optimizers[r]->zero_grad();
        auto logits = replicas[r]->forward(x);
        auto loss = torch::nn::functional::cross_entropy(logits, y);
        loss.backward();
        losses.push_back(loss.detach().to(devices[0]));
      }
      average_gradients(replicas);
      for (auto& opt : optimizers) opt->step();

      auto mean_loss = torch::stack(losses).mean();
      loss_sum += mean_loss.item<double>();  // SYNC: false FIX
      if (step % 100 == 0) {
        std::printf("epoch %d step %ld loss %.4f\n", epoch, static_cast<long>(step),
                    mean_loss.item<double>());  // SYNC: interval
      }
      if (step % 500 == 0) {
        // The replicas apply identical updates, so they must stay identical.
        auto w0 = replicas[0]->head->weight;
        auto w1 = replicas[1]->head->weight.to(devices[0]);
        TORCH_CHECK(w0.equal(w1), "replicas diverged at step ", step);  // SYNC: true
      }
    }

    const double acc = evaluate(replicas[0], eval_x_gpu, eval_y_gpu);  // SYNC: true
    std::printf("epoch %d mean loss %.4f eval acc %.3f (batch on %s, %ld params)\n", epoch,
                loss_sum / static_cast<double>(step), acc,
                eval_x_gpu.device().str().c_str(),
                static_cast<long>(replicas[0]->head->weight.numel()));
    if (acc > 0.97) break;
  }

  for (const auto& dev : devices) torch::cuda::synchronize(dev.index());  // SYNC: intentional
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%ld steps in %.2f s\n", static_cast<long>(step), secs);
  return 0;
}
