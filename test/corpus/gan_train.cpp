// A small GAN: discriminator and generator steps, losses summed per epoch and
// logged, a sample of generated values printed at the end of each epoch.
#include <torch/torch.h>
#include <cstdio>
#include <iostream>

int main() {
  torch::Device device(torch::kCUDA);
  torch::nn::Sequential generator(torch::nn::Linear(8, 32), torch::nn::ReLU(), torch::nn::Linear(32, 2));
  torch::nn::Sequential discriminator(torch::nn::Linear(2, 32), torch::nn::LeakyReLU(), torch::nn::Linear(32, 1));
  generator->to(device);
  discriminator->to(device);
  torch::optim::Adam g_opt(generator->parameters(), torch::optim::AdamOptions(2e-4));
  torch::optim::Adam d_opt(discriminator->parameters(), torch::optim::AdamOptions(2e-4));
  auto real_data = torch::randn({4096, 2}, device) * 0.5 + 1.0;
  for (int epoch = 0; epoch < 10; ++epoch) {
    double d_total = 0, g_total = 0;
    for (int64_t b = 0; b < 32; ++b) {
      auto real = real_data.narrow(0, b * 128, 128);
      auto noise = torch::randn({128, 8}, device);
      auto fake = generator->forward(noise);
      d_opt.zero_grad();
      auto d_real = discriminator->forward(real);
      auto d_fake = discriminator->forward(fake.detach());
      auto d_loss = torch::binary_cross_entropy_with_logits(d_real, torch::ones_like(d_real)) +
                    torch::binary_cross_entropy_with_logits(d_fake, torch::zeros_like(d_fake));
      d_loss.backward();
      d_opt.step();
      g_opt.zero_grad();
      auto g_out = discriminator->forward(fake);
      auto g_loss = torch::binary_cross_entropy_with_logits(g_out, torch::ones_like(g_out));
      g_loss.backward();
      g_opt.step();
      d_total += d_loss.item<double>(); // SYNC: false
      g_total += g_loss.item<double>(); // SYNC: false
    }
    std::printf("epoch %d D %.4f G %.4f\n", epoch, d_total / 32, g_total / 32);
    torch::NoGradGuard no_grad;
    auto sample = generator->forward(torch::randn({4, 8}, device));
    std::cout << sample << "\n"; // SYNC: false
  }
  return 0;
}
