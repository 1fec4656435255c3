// A unit that does not compile (`metrics` is not declared) around a sync: clang
// drops the statement that reads `s`, so the analysis sees a value never read.
#include <torch/torch.h>
float step_loss(torch::Tensor t) {
  float s = t.cuda().sum().item<float>();
  metrics.record(s);
  return 0;
}
