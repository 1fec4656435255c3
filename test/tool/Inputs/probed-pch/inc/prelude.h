#include <torch/torch.h>
inline float prelude_read(torch::Tensor t) { return t.cuda().sum().item<float>(); }
