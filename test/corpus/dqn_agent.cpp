// A DQN agent: epsilon-greedy actions chosen with argmax on the GPU and sent to a
// host environment, a replay buffer of host tensors, a target network refreshed
// every 100 steps, and the TD loss logged every 50 steps.
#include <torch/torch.h>
#include <cstdio>
#include <deque>
#include <random>
#include <tuple>

struct Transition {
  torch::Tensor state, next_state;
  int64_t action;
  float reward;
};

int main() {
  torch::Device device(torch::kCUDA);
  auto make_net = [] {
    return torch::nn::Sequential(torch::nn::Linear(4, 64), torch::nn::ReLU(), torch::nn::Linear(64, 2));
  };
  auto online = make_net(), target = make_net();
  online->to(device);
  target->to(device);
  torch::optim::Adam optimizer(online->parameters(), 1e-3);
  std::deque<Transition> replay;
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> uniform(0, 1);
  auto state = torch::zeros({4});
  for (int step = 0; step < 1000; ++step) {
    int64_t action;
    if (uniform(rng) < 0.1f) {
      action = rng() % 2;
    } else {
      torch::NoGradGuard no_grad;
      action = online->forward(state.to(device)).argmax().item<int64_t>(); // SYNC: false true
    }
    auto next_state = state + 0.01 * (action == 0 ? -1 : 1);
    float reward = 1.0f - std::abs(next_state[0].item<float>());
    replay.push_back({state, next_state, action, reward});
    if (replay.size() > 500)
      replay.pop_front();
    state = next_state;
    if (replay.size() < 64)
      continue;
    std::vector<torch::Tensor> states, next_states, actions, rewards;
    for (int i = 0; i < 64; ++i) {
      const auto &t = replay[rng() % replay.size()];
      states.push_back(t.state);
      next_states.push_back(t.next_state);
      actions.push_back(torch::tensor(t.action));
      rewards.push_back(torch::tensor(t.reward));
    }
    auto s = torch::stack(states).to(device); // SYNC: false
    auto ns = torch::stack(next_states).to(device); // SYNC: false
    auto a = torch::stack(actions).to(device); // SYNC: false
    auto r = torch::stack(rewards).to(device); // SYNC: false
    auto q = online->forward(s).gather(1, a.unsqueeze(1)).squeeze(1);
    auto next_q = std::get<0>(target->forward(ns).max(1)).detach();
    auto loss = torch::smooth_l1_loss(q, r + 0.99 * next_q);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    if (step % 100 == 0) {
      torch::NoGradGuard no_grad;
      auto online_params = online->parameters(), target_params = target->parameters();
      for (size_t i = 0; i < online_params.size(); ++i)
        target_params[i].copy_(online_params[i]);
    }
    if (step % 50 == 0)
      std::printf("step %d loss %.5f\n", step, loss.item<float>()); // SYNC: false
  }
  return 0;
}
