// RUN: %check_torch_sync %s torch-sync-item %t -- %mock_flags
// Device knowledge is flow-sensitive within a function: the definitions that
// reach a use decide where the tensor lives there.
#include <torch/torch.h>
#include <iostream>

void flow(bool cond, torch::Tensor param) {
  auto t = torch::rand({4}, torch::kCUDA);
  t = t.cpu();
  std::cout << t.sum().item<float>();      // moved back to the CPU: no finding

  auto u = torch::rand({4});
  float a = u.sum().item<float>();         // still on the CPU: no finding
  if (cond)
    u = u.cuda();
  std::cout << u.sum().item<float>() << a;
  // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: `item()` on a tensor that may be on the GPU {{.*}}[torch-sync-item]

  auto w = torch::rand({4});
  for (int i = 0; i < 3; ++i) {
    std::cout << w.sum().item<float>();    // GPU from the second iteration (back edge)
    // CHECK-MESSAGES: :[[@LINE-1]]:26: warning: `item()` on a tensor that may be on the GPU
    w = w.cuda();
  }

  auto g = torch::rand({4}, torch::kCUDA);
  std::cout << g.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: `item()` on a GPU tensor
  g = torch::zeros({4});
  std::cout << g.sum().item<float>();      // reassigned on the CPU: no finding

  torch::Tensor later;                     // undefined until assigned
  later = torch::ones({2});
  std::cout << later.sum().item<float>();  // CPU: no finding

  auto from_param = param;
  from_param = from_param.cpu();
  std::cout << from_param.sum().item<float>();  // CPU after cpu(): no finding
}
