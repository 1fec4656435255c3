// RUN: %check_torch_sync %s 'torch-sync-host-to-device,torch-sync-tensor-factory,torch-sync-deferred-accumulate' %t -- %mock_flags
// RUN: %check_torch_sync --check-prefix=ANYWAY %s 'torch-sync-host-to-device,torch-sync-tensor-factory,torch-sync-deferred-accumulate' %t.anyway -config="{CheckOptions: {RewriteDespiteWaits: true}}" -- %mock_flags
// Issue 25: a rewrite exists to save a wait. In a loop that still waits every
// iteration for a value the host needs (an early stop on `loss.item()`, a `.cpu()`
// whose memory the host reads), non_blocking copies, device-side sums and
// asynchronous factories save nothing: reported with the wait that remains, not
// rewritten (RewriteDespiteWaits rewrites anyway). A wait only under a branch, or
// a loop without one, keeps the rewrites.
#include <torch/torch.h>
#include <cstdio>
#include <vector>

float early_stop(torch::Tensor w, torch::Tensor batch, torch::Device device) {
  float total = 0;
  for (int step = 0; step < 100; ++step) {
    auto x = batch.to(torch::kCUDA);
    // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: `to(<GPU>)` may copy a host tensor to the GPU {{.*}}; no fix: no gain while `loss.item<float>()` at line [[@LINE+7]] waits every iteration for a value the host needs; remove that wait first (`RewriteDespiteWaits: true` rewrites anyway) [torch-sync-host-to-device]
    // ANYWAY-MESSAGES: :[[@LINE-2]]:20: warning: `to(<GPU>)` may copy a host tensor to the GPU
    // ANYWAY-FIXES: auto x = batch.to(torch::kCUDA, /*non_blocking=*/true);
    auto loss = (w * x).sum();
    total += (w * x).mean().item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `total` accumulates `item()` every iteration, {{.*}}(no fix: no gain while `loss.item<float>()` at line [[@LINE+2]] waits every iteration for a value the host needs; {{.*}}) [torch-sync-deferred-accumulate]
    // ANYWAY-MESSAGES: :[[@LINE-2]]:29: warning: `total` accumulates `item()` every iteration,
    if (loss.item<float>() < 0.01f)
      break;
  }
  return total;
}

double host_reads_copy(torch::Tensor w, const std::vector<float> &values) {
  double served = 0;
  for (int step = 0; step < 10; ++step) {
    auto input = torch::tensor(values, torch::TensorOptions().device(torch::kCUDA));
    // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `torch::tensor(<list>, <GPU options>)` {{.*}} (no fix: no gain while `(w * input).cpu()` at line [[@LINE+3]] waits every iteration for a value the host needs; {{.*}}) [torch-sync-tensor-factory]
    // ANYWAY-MESSAGES: :[[@LINE-2]]:18: warning: `torch::tensor(<list>, <GPU options>)`
    // ANYWAY-FIXES: auto input = torch::tensor(values, torch::TensorOptions()).to(torch::kCUDA, /*non_blocking=*/true);
    auto host = (w * input).cpu();
    served += host.data_ptr<float>()[0];
  }
  return served;
}

// Negatives: the wait is under a branch (not every iteration), or is the
// rewritten site itself; the rewrites stay.
float waits_sometimes(torch::Tensor w, torch::Tensor batch, torch::Device device, bool check) {
  float total = 0;
  for (int step = 0; step < 100; ++step) {
    auto x = batch.to(torch::kCUDA);
    // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: `to(<GPU>)` may copy a host tensor to the GPU
    // ANYWAY-MESSAGES: :[[@LINE-2]]:20: warning: `to(<GPU>)` may copy a host tensor to the GPU
    // CHECK-FIXES: auto x = batch.to(torch::kCUDA, /*non_blocking=*/true);
    total += (w * x).mean().item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `total` accumulates `item()` every iteration,
    // ANYWAY-MESSAGES: :[[@LINE-2]]:29: warning: `total` accumulates `item()` every iteration,
    // CHECK-FIXES: total_on_device.add_(total_step);
    if (check) {
      if ((w * x).sum().item<float>() < 0.01f)
        break;
    }
  }
  return total;
}

// Issue 43, item 7: the waits of every check count alike. A selection whose
// size the host needs every iteration (a true dependency of masked_select)
// withholds the loop's other rewrites as an item() does.
float selection_sizes(torch::Tensor w, torch::Tensor batch, torch::Tensor mask) {
  float total = 0;
  for (int step = 0; step < 100; ++step) {
    auto x = batch.to(torch::kCUDA);
    // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: `to(<GPU>)` may copy a host tensor to the GPU {{.*}}; no fix: no gain while `x.masked_select(mask)` at line [[@LINE+3]] waits every iteration for a value the host needs; {{.*}} [torch-sync-host-to-device]
    // ANYWAY-MESSAGES: :[[@LINE-2]]:20: warning: `to(<GPU>)` may copy a host tensor to the GPU
    // ANYWAY-FIXES: auto x = batch.to(torch::kCUDA, /*non_blocking=*/true);
    auto kept = x.masked_select(mask);
    auto first = torch::zeros({kept.size(0)}, torch::kCUDA);
    total += (w * first).sum().item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: `total` accumulates `item()` every iteration, {{.*}}(no fix: no gain while `x.masked_select(mask)` at line [[@LINE-3]] waits every iteration {{.*}}) [torch-sync-deferred-accumulate]
    // ANYWAY-MESSAGES: :[[@LINE-2]]:32: warning: `total` accumulates `item()` every iteration,
  }
  return total;
}

// Issue 43, item 14: a wait the host does not need still blocks the loop when
// no fix of the run removes it: the loss logged every iteration leaves the
// deferred sum and the non_blocking copy without gain.
float logged_every_step(torch::Tensor w, torch::Tensor batch) {
  float total = 0;
  for (int step = 0; step < 100; ++step) {
    auto x = batch.to(torch::kCUDA);
    // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: `to(<GPU>)` may copy a host tensor to the GPU {{.*}}; no fix: no gain while `loss.item<float>()` at line [[@LINE+8]] still waits every iteration (no fix of this run removes it); {{.*}} [torch-sync-host-to-device]
    // ANYWAY-MESSAGES: :[[@LINE-2]]:20: warning: `to(<GPU>)` may copy a host tensor to the GPU
    // ANYWAY-FIXES: auto x = batch.to(torch::kCUDA, /*non_blocking=*/true);
    auto loss = (w * x).sum();
    total += loss.item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: `total` accumulates `item()` every iteration, {{.*}}(no fix: no gain while `loss.item<float>()` at line [[@LINE+3]] still waits every iteration {{.*}}) [torch-sync-deferred-accumulate]
    // ANYWAY-MESSAGES: :[[@LINE-2]]:19: warning: `total` accumulates `item()` every iteration,
    // ANYWAY-FIXES: total_on_device.add_(total_step);
    std::printf("step %d loss %f\n", step, loss.item<float>());
  }
  return total;
}

// Negatives: reads another fix of the run moves out of the loop do not count
// (two deferred sums keep both their fixes and the copy's), and a read logged
// only at an interval is not every iteration.
float two_sums(torch::Tensor w, torch::Tensor batch) {
  float total = 0, norm = 0;
  for (int step = 0; step < 100; ++step) {
    auto x = batch.to(torch::kCUDA);
    // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: `to(<GPU>)` may copy a host tensor to the GPU
    // ANYWAY-MESSAGES: :[[@LINE-2]]:20: warning: `to(<GPU>)` may copy a host tensor to the GPU
    // CHECK-FIXES: auto x = batch.to(torch::kCUDA, /*non_blocking=*/true);
    total += (w * x).sum().item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: `total` accumulates `item()` every iteration,
    // ANYWAY-MESSAGES: :[[@LINE-2]]:28: warning: `total` accumulates `item()` every iteration,
    norm += x.norm().item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: `norm` accumulates `item()` every iteration,
    // ANYWAY-MESSAGES: :[[@LINE-2]]:22: warning: `norm` accumulates `item()` every iteration,
    // CHECK-FIXES: norm_on_device.add_(norm_step);
    if (step % 10 == 0)
      std::printf("step %d loss %f\n", step, (w * x).sum().item<float>());
  }
  return total + norm;
}

// A wait around the rewritten copy, in the same expression (a per-epoch
// accuracy print of what the copied tensors compute): a non_blocking copy saves
// nothing, the read waits for it (issue 43, fresh sample 5).
void accuracy_per_epoch(torch::Tensor w, torch::Tensor x_dev, torch::Tensor y_dev, int epochs) {
  for (int epoch = 0; epoch < epochs; ++epoch) {
    std::printf("%f\n", ((w * x_dev.cuda()).argmax(1) == y_dev.cuda()).sum().item<double>());
    // CHECK-MESSAGES: :[[@LINE-1]]:37: warning: `cuda()` may copy a host tensor to the GPU {{.*}}; no fix: no gain while `{{.*}}` at line [[@LINE-1]] {{.*}} [torch-sync-host-to-device]
    // CHECK-MESSAGES: :[[@LINE-2]]:64: warning: `cuda()` may copy a host tensor to the GPU {{.*}}; no fix: no gain while `{{.*}}` at line [[@LINE-2]] {{.*}} [torch-sync-host-to-device]
    // ANYWAY-MESSAGES: :[[@LINE-3]]:37: warning: `cuda()` may copy a host tensor to the GPU
    // ANYWAY-MESSAGES: :[[@LINE-4]]:64: warning: `cuda()` may copy a host tensor to the GPU
  }
}
