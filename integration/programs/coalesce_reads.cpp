// harness-tool-args: '--config={CheckOptions: {torch-sync-coalesce.Fix: true}}'
// torch-sync-coalesce: a step that reports three metrics (a loss, an accuracy and a
// count) reads each with item(), three waits per step. The rewrite stacks them on the
// device and copies once (the count travels as int64, the others as the bits of a
// double), one wait per step, with the same printed values.
#include "syncprobe.h"
#include <cstdio>

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  torch::nn::Linear model(64, 8);
  model->to(device);
  auto input = torch::randn({256, 64}, torch::device(device));
  auto target = torch::randint(8, {256}, torch::TensorOptions().dtype(torch::kLong).device(device));
  double loss_sum = 0, accuracy_sum = 0;
  int64_t correct_sum = 0;
  syncprobe::Harness harness("coalesce_reads");
  harness.run([&](int step) {
    torch::NoGradGuard no_grad;
    auto logits = model->forward(input * (1.0 + 0.001 * step));
    auto loss = torch::nn::functional::cross_entropy(logits, target);
    auto hits = logits.argmax(1).eq(target);
    auto accuracy = hits.to(torch::kFloat).mean();
    float loss_value = loss.item<float>();
    float accuracy_value = accuracy.item<float>();
    int64_t correct = hits.sum().item<int64_t>();
    if (step == 0)
      std::printf("loss %.5f accuracy %.4f correct %lld\n", loss_value, accuracy_value,
                  static_cast<long long>(correct));
    loss_sum += loss_value;
    accuracy_sum += accuracy_value;
    correct_sum += correct;
  });
  harness.result("loss_sum", loss_sum);
  harness.result("accuracy_sum", accuracy_sum);
  harness.result("correct_sum", static_cast<double>(correct_sum));
  return 0;
}
