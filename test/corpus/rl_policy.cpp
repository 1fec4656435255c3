// A REINFORCE agent on a toy environment: the policy runs on the GPU, the
// environment on the host, so sampled actions must come back every step.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

struct Env {
  double state = 0;
  std::vector<float> observe() const { return {static_cast<float>(state), 1.0f, -1.0f, 0.5f}; }
  double step(int64_t action) {
    state += action == 0 ? -0.1 : 0.1;
    return -std::abs(state);
  }
};

int main() {
  torch::Device device(torch::kCUDA);
  torch::nn::Sequential policy(torch::nn::Linear(4, 32), torch::nn::Tanh(), torch::nn::Linear(32, 2));
  policy->to(device);
  torch::optim::Adam optimizer(policy->parameters(), 1e-3);
  Env env;
  for (int episode = 0; episode < 50; ++episode) {
    std::vector<torch::Tensor> log_probs;
    std::vector<double> rewards;
    for (int t = 0; t < 20; ++t) {
      auto obs = env.observe();
      auto state = torch::tensor(obs).to(device); // SYNC: false
      auto probs = torch::softmax(policy->forward(state), 0);
      auto action = probs.multinomial(1); // SYNC: false
      log_probs.push_back(probs.log().index({action}));
      rewards.push_back(env.step(action.item<int64_t>())); // SYNC: true
    }
    double ret = 0;
    std::vector<double> returns(rewards.size());
    for (int t = static_cast<int>(rewards.size()) - 1; t >= 0; --t)
      returns[t] = ret = rewards[t] + 0.99 * ret;
    auto returns_t = torch::tensor(returns, torch::kFloat).to(device); // SYNC: false
    auto loss = -(torch::cat(log_probs) * returns_t).sum();
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    std::printf("episode %d return %.3f loss %.4f\n", episode, returns[0], loss.item<float>()); // SYNC: false
  }
  return 0;
}
