#pragma once
#include <torch/torch.h>
inline torch::Tensor to_gpu(const torch::Tensor &host) { return host.cuda(); }
