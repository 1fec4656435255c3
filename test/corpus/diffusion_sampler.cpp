// A DDPM-style sampler: the noise schedule precomputed on the host and moved to
// the GPU once, a denoising loop of 50 steps, progress printed every 10 steps and
// the final sample clamped and returned.
#include <torch/torch.h>
#include <cmath>
#include <cstdio>
#include <vector>

torch::Tensor sample(torch::nn::Sequential &denoiser, torch::Device device, int64_t steps) {
  std::vector<double> betas;
  for (int64_t t = 0; t < steps; ++t)
    betas.push_back(1e-4 + (0.02 - 1e-4) * t / (steps - 1));
  auto beta = torch::tensor(betas, torch::kDouble).to(torch::kFloat).to(device); // SYNC: false
  auto alpha = 1 - beta;
  auto alpha_bar = torch::cumprod(alpha, 0);
  auto x = torch::randn({8, 16}, device);
  torch::NoGradGuard no_grad;
  for (int64_t t = steps - 1; t >= 0; --t) {
    auto t_embed = torch::full({8, 1}, static_cast<double>(t) / steps, device);
    auto eps = denoiser->forward(torch::cat({x, t_embed}, 1));
    auto a = alpha[t], ab = alpha_bar[t];
    x = (x - (1 - a) / torch::sqrt(1 - ab) * eps) / torch::sqrt(a);
    if (t > 0)
      x = x + torch::sqrt(beta[t]) * torch::randn_like(x);
    if (t % 10 == 0)
      std::printf("t=%lld mean %.4f std %.4f\n", static_cast<long long>(t), x.mean().item<double>(), // SYNC: false
                  x.std().item<double>()); // SYNC: false
  }
  return x.clamp(-1, 1);
}

int main() {
  torch::Device device(torch::kCUDA);
  torch::nn::Sequential denoiser(torch::nn::Linear(17, 64), torch::nn::SiLU(), torch::nn::Linear(64, 16));
  denoiser->to(device);
  auto result = sample(denoiser, device, 50);
  std::printf("sample range [%.3f, %.3f]\n", result.min().item<float>(), result.max().item<float>()); // SYNC: false false
  return 0;
}
