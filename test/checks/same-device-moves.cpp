// RUN: %check_torch_sync %s torch-sync-host-to-device %t -- %mock_flags
// A tensor moved again to the device it was made on copies nothing, whichever
// device that is at run time (a class of a header: test/tool/same-device-header.test)
// (issue 43: `.to(*m_device)` of a tensor made by
// `.to(*m_device)` reported as a possible copy from the host). Only when the
// device is one for the whole run: a device variable never reassigned, or a
// field only constructors set.
#include <torch/torch.h>
#include <memory>

class Rollout {
public:
  explicit Rollout(bool cuda)
      : device_(std::make_shared<torch::Device>(cuda ? torch::kCUDA : torch::kCPU)), plain_(torch::kCPU) {
    rewards_ = torch::zeros({4, 2}, torch::TensorOptions().device(*device_));
    values_ = torch::zeros({4, 2}, torch::TensorOptions().dtype(torch::kFloat).device(*device_));
    host_ = torch::zeros({4, 2});
    other_ = rewards_;
  }
  // --- negative: already there ------------------------------------------------
  torch::Tensor advantages() { return torch::zeros_like(rewards_).to(*device_); }
  torch::Tensor scaled() {
    auto r = rewards_ * 2 + values_;
    return r.view({-1}).to(*device_);
  }
  // --- positive: the source's device is not that one ---------------------------
  torch::Tensor fresh(const torch::Tensor &x) { return x.to(*device_); }
  // CHECK-MESSAGES: :[[@LINE-1]]:58: warning: `to(<GPU>)` may copy a host tensor to the GPU
  void set(const torch::Tensor &x) { other_ = x; }
  torch::Tensor other() { return other_.to(*device_); }
  // CHECK-MESSAGES: :[[@LINE-1]]:41: warning: `to(<GPU>)` may copy a host tensor to the GPU
  torch::Tensor mixed() { return (rewards_ + host_).to(*device_); }
  // CHECK-MESSAGES: :[[@LINE-1]]:53: warning: `to(<GPU>)` may copy a host tensor to the GPU

private:
  std::shared_ptr<torch::Device> device_;
  torch::Device plain_;
  torch::Tensor rewards_, values_, host_, other_;
};

// A device field set outside the constructors: not one device for the run.
class Retargeted {
public:
  explicit Retargeted(torch::Device d) : device_(d) { data_ = torch::ones({3}, torch::TensorOptions().device(device_)); }
  void retarget(torch::Device d) { device_ = d; }
  torch::Tensor moved() { return torch::zeros_like(data_).to(device_); }
  // CHECK-MESSAGES: :[[@LINE-1]]:59: warning: `to(<GPU>)` may copy a host tensor to the GPU

private:
  torch::Device device_;
  torch::Tensor data_;
};

// A member template that stores into the field is a store too.
class Templated {
public:
  explicit Templated(torch::Device d) : device_(d) { data_ = torch::ones({3}, torch::TensorOptions().device(device_)); }
  template <typename T> void load(const T &source) { data_ = source; }
  torch::Tensor moved() { return torch::zeros_like(data_).to(device_); }
  // CHECK-MESSAGES: :[[@LINE-1]]:59: warning: `to(<GPU>)` may copy a host tensor to the GPU

private:
  torch::Device device_;
  torch::Tensor data_;
};

torch::Tensor free_options(bool cuda) {
  const torch::Device d(cuda ? torch::kCUDA : torch::kCPU);
  torch::Tensor t = torch::zeros({3}, torch::device(d));
  t = t.to(d); // no finding: `torch::device(d)` names `d`
  return t.to(d);
}

torch::Tensor local(bool cuda) {
  torch::Device d = cuda ? torch::kCUDA : torch::kCPU;
  auto t = torch::ones({3}, torch::TensorOptions().device(d));
  return (t + 1).to(d); // no finding: made on `d`
}

torch::Tensor local_changed(bool cuda) {
  torch::Device d = cuda ? torch::kCUDA : torch::kCPU;
  auto t = torch::ones({3}, torch::TensorOptions().device(d));
  d = torch::Device(torch::kCUDA);
  return t.to(d);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `to(<GPU>)` may copy a host tensor to the GPU
  // CHECK-FIXES: return t.to(d, /*non_blocking=*/true);
}

// What a method of the same object returns (issue 43, PPO-LibTorch's
// `std::tie(next_obs, reward, done) = stepEnvs(..)`): made on the device
// field, elements then written by a worker lambda that holds them by
// reference (an element write keeps the device).
class Envs {
public:
  explicit Envs(bool cuda) : device_(std::make_shared<torch::Device>(cuda ? torch::kCUDA : torch::kCPU)) {}
  std::tuple<torch::Tensor, torch::Tensor> step() {
    torch::Tensor obs = torch::zeros({4, 3}, torch::TensorOptions(*device_).dtype(torch::kFloat));
    torch::Tensor reward = torch::zeros({4, 1}, torch::TensorOptions(*device_));
    auto fill = [&reward](int64_t i, float r) { reward[i] = r; };
    fill(0, 1.0f);
    return {obs, reward};
  }
  std::pair<torch::Tensor, torch::Tensor> mixed() {
    auto on_device = torch::ones({2}, torch::TensorOptions().device(*device_));
    return std::make_pair(on_device, torch::ones({2}));
  }
  torch::Tensor one() { return torch::ones({2}, torch::TensorOptions().device(*device_)); }
  void rollout() {
    torch::Tensor obs, reward;
    std::tie(obs, reward) = step();
    obs_ = obs.to(*device_);       // no finding: step() made it on *device_
    reward_ = reward.to(*device_); // no finding: elements written by the lambda keep its device
    auto [a, b] = mixed();
    first_ = a.to(*device_); // no finding: made on *device_
    second_ = b.to(*device_);
    // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `to(<GPU>)` copies a host tensor to the GPU
    // CHECK-FIXES: second_ = b.to(*device_, /*non_blocking=*/true);
    third_ = one().to(*device_); // no finding
#define TO_DEVICE(t) (t).to(*device_)
    first_ = TO_DEVICE(obs); // no finding: in a macro too
    second_ = TO_DEVICE(torch::ones({2}));
    // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: `ones(...).to(...)` fills the tensor on the host
#undef TO_DEVICE
  }
  // Another object's method reads another object's device.
  void from(Envs &other) {
    torch::Tensor obs, reward;
    std::tie(obs, reward) = other.step();
    obs_ = obs.to(*device_);
    // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: `to(<GPU>)` may copy a host tensor to the GPU
  }

private:
  std::shared_ptr<torch::Device> device_;
  torch::Tensor obs_, reward_, first_, second_, third_;
};
