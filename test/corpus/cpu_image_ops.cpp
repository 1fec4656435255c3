// CORPUS: cpu-only
// Image preprocessing on the host: resize with interpolate, per-channel
// normalisation, a brightness histogram, and pixel access through an accessor.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

torch::Tensor load_image(int64_t h, int64_t w) {
  std::vector<uint8_t> pixels(h * w * 3);
  for (size_t i = 0; i < pixels.size(); ++i)
    pixels[i] = static_cast<uint8_t>((i * 31) % 256);
  return torch::from_blob(pixels.data(), {h, w, 3}, torch::kUInt8).clone();
}

int main() {
  auto image = load_image(120, 160).permute({2, 0, 1}).to(torch::kFloat).div(255).unsqueeze(0);
  auto resized = torch::nn::functional::interpolate(
      image, torch::nn::functional::InterpolateFuncOptions().size(std::vector<int64_t>{64, 64}).mode(torch::kBilinear).align_corners(false));
  auto mean = resized.mean({0, 2, 3}, true), stddev = resized.std({0, 2, 3}, true, true);
  auto normalised = (resized - mean) / stddev;
  auto brightness = resized.mean(1).flatten();
  auto histogram = torch::histc(brightness, 10, 0, 1);
  auto dark = brightness.index({brightness < 0.2});
  auto acc = normalised.accessor<float, 4>();
  double corner = acc[0][0][0][0] + acc[0][1][0][0] + acc[0][2][0][0];
  std::printf("histogram peak %lld, %lld dark pixels, corner %.3f, max %.3f\n",
              static_cast<long long>(histogram.argmax().item<int64_t>()), static_cast<long long>(dark.numel()),
              corner, normalised.max().item<float>());
  if (normalised.isnan().any().item<bool>())
    std::printf("NaN in image\n");
  return 0;
}
