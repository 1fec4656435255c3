#pragma once
#include <torch/torch.h>
inline float hidden(torch::Tensor t) { return t.item<float>(); }
