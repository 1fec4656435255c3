#pragma once
#include <torch/torch.h>
inline torch::Tensor to_gpu(torch::Tensor host) { return host.cuda(); }
