#include <torch/torch.h>
#include <iostream>
#include "user_header.h"
float step(torch::Tensor maybe_gpu) {
  auto host = torch::rand({4});
  auto g = host.cuda();
  std::cout << g.sum().item<float>();
  return maybe_gpu.item<float>();
}
