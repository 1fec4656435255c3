#pragma once
#include <torch/torch.h>
inline float header_item(torch::Tensor t) { return t.item<float>(); }
