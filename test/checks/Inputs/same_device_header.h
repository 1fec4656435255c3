// A class of a header, its members defined by the unit that includes it
// (same-device-moves.cpp), one of them a member template that stores a tensor
// of unknown device into the field.
#include <torch/torch.h>

class HeaderRollout {
public:
  explicit HeaderRollout(torch::Device d);
  template <typename T> void load(const T &source) { data_ = source; }
  torch::Tensor moved();
  torch::Tensor again();

private:
  torch::Device device_;
  torch::Tensor data_, made_;
};
