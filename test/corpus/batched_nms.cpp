// Non-maximum suppression written with a host loop over sorted boxes: each kept
// box's overlaps are computed on the GPU and the suppressed set is read back to
// decide which boxes remain, one read per kept box.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

torch::Tensor iou(const torch::Tensor &box, const torch::Tensor &boxes) {
  auto x1 = torch::maximum(box[0], boxes.select(1, 0)), y1 = torch::maximum(box[1], boxes.select(1, 1));
  auto x2 = torch::minimum(box[2], boxes.select(1, 2)), y2 = torch::minimum(box[3], boxes.select(1, 3));
  auto inter = (x2 - x1).clamp_min(0) * (y2 - y1).clamp_min(0);
  auto area = [](const torch::Tensor &b) { return (b.select(-1, 2) - b.select(-1, 0)) * (b.select(-1, 3) - b.select(-1, 1)); };
  return inter / (area(box) + area(boxes) - inter);
}

std::vector<int64_t> nms(const torch::Tensor &boxes, const torch::Tensor &scores, double threshold) {
  auto order = scores.argsort(0, true);
  auto remaining = torch::ones({boxes.size(0)}, torch::TensorOptions().dtype(torch::kBool).device(boxes.device()));
  auto host_order = order.cpu(); // SYNC: true
  std::vector<int64_t> keep;
  for (int64_t k = 0; k < host_order.size(0); ++k) {
    int64_t i = host_order[k].item<int64_t>();
    if (!remaining[i].item<bool>()) // SYNC: true
      continue;
    keep.push_back(i);
    remaining &= iou(boxes[i], boxes).le(threshold);
  }
  return keep;
}

int main() {
  torch::Device device(torch::kCUDA);
  auto corners = torch::rand({300, 2}, device) * 100;
  auto boxes = torch::cat({corners, corners + torch::rand({300, 2}, device) * 20 + 1}, 1);
  auto scores = torch::rand({300}, device);
  auto keep = nms(boxes, scores, 0.5); // SYNC: true
  std::printf("kept %zu of %lld boxes\n", keep.size(), static_cast<long long>(boxes.size(0)));
  return 0;
}
