// Post-processing of an object detector: scores thresholded with a mask, boxes
// selected, non-maximum suppression written with host loops, and the kept boxes
// returned to the host for drawing.
#include <torch/torch.h>
#include <cstdio>
#include <tuple>
#include <vector>

struct Box {
  float x1, y1, x2, y2, score;
  int64_t cls;
};

std::vector<Box> postprocess(const torch::Tensor &boxes, const torch::Tensor &logits, float threshold) {
  auto probs = torch::sigmoid(logits);
  auto [scores, classes] = probs.max(1);
  auto keep = scores > threshold;
  auto kept_boxes = boxes.index({keep}); // SYNC: true
  auto kept_scores = scores.index({keep}); // SYNC: true
  auto kept_classes = classes.index({keep}); // SYNC: true
  if (kept_scores.numel() == 0)
    return {};
  auto order = kept_scores.argsort(0, true);
  auto host_boxes = kept_boxes.index_select(0, order).cpu(); // SYNC: true
  auto host_scores = kept_scores.index_select(0, order).cpu(); // SYNC: true
  auto host_classes = kept_classes.index_select(0, order).cpu(); // SYNC: true
  auto b = host_boxes.accessor<float, 2>();
  std::vector<Box> out;
  for (int64_t i = 0; i < b.size(0); ++i)
    out.push_back({b[i][0], b[i][1], b[i][2], b[i][3], host_scores[i].item<float>(),
                   host_classes[i].item<int64_t>()});
  return out;
}

double mean_confidence(const torch::Tensor &logits) {
  auto probs = torch::sigmoid(logits);
  auto confident = probs.index({probs > 0.5}); // SYNC: false
  return confident.mean().item<double>(); // SYNC: false
}

int main() {
  torch::Device device(torch::kCUDA);
  auto boxes = torch::rand({100, 4}, device);
  auto logits = torch::randn({100, 8}, device);
  for (int frame = 0; frame < 10; ++frame) {
    auto detections = postprocess(boxes, logits * (1 + 0.1 * frame), 0.7f); // SYNC: true
    std::printf("frame %d: %zu detections, mean confidence %.3f\n", frame, detections.size(),
                mean_confidence(logits)); // SYNC: false
  }
  return 0;
}
