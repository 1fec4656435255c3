// Debug output left in a training step: tensors streamed to std::cout, a
// statistics line every step, and a NaN guard that aborts the run.
#include <torch/torch.h>
#include <cstdlib>
#include <iostream>

int main() {
  torch::Device device(torch::kCUDA);
  torch::nn::Linear layer(8, 8);
  layer->to(device);
  torch::optim::SGD optimizer(layer->parameters(), 0.01);
  for (int step = 0; step < 100; ++step) {
    auto input = torch::randn({32, 8}, device);
    auto output = layer->forward(input);
    auto loss = output.pow(2).mean();
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    std::cout << "step " << step << " loss " << loss << "\n"; // SYNC: false
    std::cout << "grad mean " << layer->weight.grad().mean().item<float>() << "\n"; // SYNC: false
    if (std::isnan(loss.item<float>())) { // SYNC: true
      std::cerr << "NaN loss, weights:\n" << layer->weight << "\n"; // SYNC: false
      std::abort();
    }
  }
  return 0;
}
