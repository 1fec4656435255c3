// A variational autoencoder on flattened images: reconstruction and KL terms
// summed per epoch, a reconstruction sample written to the host every epoch for an
// image file, and the KL weight annealed on a host schedule.
#include <torch/torch.h>
#include <cstdio>
#include <fstream>
#include <tuple>

struct VAEImpl : torch::nn::Module {
  VAEImpl(int64_t in, int64_t latent)
      : enc(register_module("enc", torch::nn::Linear(in, 256))), mu(register_module("mu", torch::nn::Linear(256, latent))),
        logvar(register_module("logvar", torch::nn::Linear(256, latent))),
        dec1(register_module("dec1", torch::nn::Linear(latent, 256))), dec2(register_module("dec2", torch::nn::Linear(256, in))) {}
  std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> forward(const torch::Tensor &x) {
    auto h = torch::relu(enc->forward(x));
    auto m = mu->forward(h), lv = logvar->forward(h);
    auto z = m + torch::randn_like(m) * torch::exp(0.5 * lv);
    return {torch::sigmoid(dec2->forward(torch::relu(dec1->forward(z)))), m, lv};
  }
  torch::nn::Linear enc, mu, logvar, dec1, dec2;
};
TORCH_MODULE(VAE);

void write_sample(const torch::Tensor &image, int epoch) {
  auto host = image.detach().to(torch::kCPU).contiguous(); // SYNC: true
  std::ofstream out("sample_" + std::to_string(epoch) + ".raw", std::ios::binary);
  out.write(reinterpret_cast<const char *>(host.data_ptr<float>()), host.numel() * sizeof(float));
}

int main() {
  torch::Device device(torch::kCUDA);
  VAE model(784, 16);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), 1e-3);
  auto data = torch::rand({2048, 784}, device);
  for (int epoch = 0; epoch < 10; ++epoch) {
    double beta = std::min(1.0, epoch / 5.0);
    double recon_sum = 0, kl_sum = 0;
    for (int64_t b = 0; b < 16; ++b) {
      auto x = data.narrow(0, b * 128, 128);
      auto [recon, m, lv] = model->forward(x);
      auto recon_loss = torch::binary_cross_entropy(recon, x, {}, torch::Reduction::Sum);
      auto kl = -0.5 * torch::sum(1 + lv - m.pow(2) - lv.exp());
      auto loss = recon_loss + beta * kl;
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      recon_sum += recon_loss.item<double>(); // SYNC: false
      kl_sum += kl.item<double>(); // SYNC: false
    }
    std::printf("epoch %d recon %.2f kl %.2f beta %.2f\n", epoch, recon_sum / 2048, kl_sum / 2048, beta);
    torch::NoGradGuard no_grad;
    auto sample = std::get<0>(model->forward(data.narrow(0, 0, 1)));
    write_sample(sample, epoch); // SYNC: true
  }
  return 0;
}
