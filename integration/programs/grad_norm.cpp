// torch-sync-grad-norm: clip_grad_norm_ returns the norm as a host double and waits
// for the backward pass; its result is unused here, so the rewrite clips on the device.
#include "syncprobe.h"

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  torch::nn::Linear model(64, 64);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  auto x = torch::randn({128, 64}, torch::device(device));
  syncprobe::Harness harness("grad_norm");
  harness.run([&](int step) {
    optimizer.zero_grad();
    auto loss = model->forward(x).pow(2).mean();
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), 0.1);
    optimizer.step();
  });
  harness.result("weight", model->weight);
  return 0;
}
