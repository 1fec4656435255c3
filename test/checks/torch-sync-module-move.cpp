// RUN: %check_torch_sync %s torch-sync-module-move %t -config="{CheckOptions: {ReportModuleMoves: true}}" -- %mock_flags
// RUN: %check_torch_sync --check-prefix=OFF %s torch-sync-module-move %t.off -- %mock_flags
// Off by default: a module is moved once, as set-up, and there is nothing to
// change. With ReportModuleMoves (the tool sets it under --profile, to label
// the syncs such a move makes) each move is reported, never rewritten.
#include <torch/torch.h>

struct Net : torch::nn::Module {
  torch::nn::Linear fc{4, 2};
};

void setup(torch::Device device) {
  torch::nn::Linear layer(4, 2);
  layer->to(device);
  // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: `to(<device>)` on a module copies each of its parameters and buffers with a blocking copy (one sync per tensor); false dependency: the host does not need the copies; they run once, as set-up; nothing to change for a one-time move; build and move the module before the timed part of the program [torch-sync-module-move]
  Net net;
  net.to(torch::kCUDA, torch::kHalf);
  // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: `to(<device>)` on a module {{.*}} [torch-sync-module-move]
  net.to(torch::kCUDA, /*non_blocking=*/true);
  // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: `to(<device>)` on a module {{.*}} [torch-sync-module-move]
}

void in_a_loop(torch::nn::Linear layer) {
  for (int step = 0; step < 10; ++step) {
    layer->to(torch::kCUDA);
    // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: `to(<device>)` on a module {{.*}}; move the module once, before the loop (later calls copy nothing) [torch-sync-module-move]
  }
}

void scripted(torch::Device device) {
  torch::jit::Module module = torch::jit::load("model.pt");
  module.to(device);
  // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: `to(<device>)` on a module {{.*}} [torch-sync-module-move]
  module.to(torch::kHalf);
}

#define MOVE_TO_GPU(m) (m)->to(torch::kCUDA)
void in_a_macro(torch::nn::Linear layer) {
  MOVE_TO_GPU(layer);
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `to(<device>)` on a module {{.*}} [torch-sync-module-move]
}

template <typename Holder> void move_template(Holder layer, torch::Device device) {
  layer->to(device);
  // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: `to(<device>)` on a module {{.*}} [torch-sync-module-move]
  // (dependent: reported once, in the template, for its instantiation with a module)
}
void instantiate(torch::nn::Linear layer) { move_template(layer, torch::kCUDA); }

void negatives(Net &net, torch::Tensor t) {
  net.to(torch::kHalf);        // a dtype change moves nothing between devices
  auto u = t.to(torch::kCUDA); // a tensor, not a module: torch-sync-host-to-device's
}
// OFF-MESSAGES-NOT: warning
