// An inference service loop: requests arrive as host vectors, are turned into tensors,
// scored, thresholded with a mask, gathered with indices, and the selected results go
// back to the host. The host really needs those results: true dependencies remain.
#include "syncprobe.h"
#include <vector>

int main() {
  torch::manual_seed(0);
  torch::Device device = syncprobe::device();
  auto weights = torch::randn({16, 8}, torch::device(device));
  double served = 0, selected_total = 0;
  syncprobe::Harness harness("inference_service");
  harness.run([&](int step) {
    std::vector<float> request(64 * 16);
    for (size_t i = 0; i < request.size(); ++i)
      request[i] = static_cast<float>((i * 37 + step * 11) % 101) / 101.0f - 0.5f;
    auto input = torch::tensor(request, torch::TensorOptions().device(device)).view({64, 16});
    auto scores = torch::sigmoid(torch::matmul(input, weights)).amax(1);
    auto keep = scores > 0.6;
    auto selected = scores.index({keep});
    auto top = std::get<1>(scores.topk(4));
    auto gathered = scores.index_select(0, top).cpu();
    served += gathered.data_ptr<float>()[0];
    selected_total += selected.sum().item<double>();
  });
  harness.result("served", served);
  harness.result("selected_total", selected_total);
  return 0;
}
