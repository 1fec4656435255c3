#include <torch/torch.h>
float broken(torch::Tensor t) { return t.item<float>() + undeclared_name; }
