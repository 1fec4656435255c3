// RUN: %check_torch_sync --compile-fixed %s 'torch-sync-*' %t -- %mock_flags
// A realistic training program (data loading, model, training loop with metrics and
// logging, validation, checkpoint statistics, an inference helper) run through the
// whole catalog. Every finding is listed; any other warning fails the test.
#include <torch/torch.h>
#include <c10/cuda/CUDAStream.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace {

struct Config {
  int epochs = 3;
  int batches_per_epoch = 20;
  int64_t batch_size = 64;
  int64_t features = 32;
  int64_t classes = 4;
  double learning_rate = 0.05;
  double max_grad_norm = 1.0;
  int log_every = 10;
};

struct Batch {
  torch::Tensor data;
  torch::Tensor target;
};

// Host-side synthetic data, as a loader would deliver it.
std::vector<Batch> make_batches(const Config &config) {
  std::vector<Batch> batches;
  for (int i = 0; i < config.batches_per_epoch; ++i) {
    Batch batch;
    batch.data = torch::randn({config.batch_size, config.features});
    batch.target = torch::randint(config.classes, {config.batch_size});
    batches.push_back(batch);
  }
  return batches;
}

struct Classifier {
  Classifier(const Config &config) : hidden(config.features, 64), output(64, config.classes) {}
  torch::Tensor forward(torch::Tensor x) {
    return output->forward(torch::relu(hidden->forward(x)));
  }
  std::vector<torch::Tensor> parameters() {
    auto p = hidden->parameters();
    auto q = output->parameters();
    p.insert(p.end(), q.begin(), q.end());
    return p;
  }
  torch::nn::Linear hidden;
  torch::nn::Linear output;
};

torch::Device pick_device() {
  return torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
}

// Class weights computed from label counts on the host.
torch::Tensor class_weights(const Config &config, torch::Device device) {
  std::vector<float> weights(config.classes, 1.0f);
  for (int64_t c = 0; c < config.classes; ++c)
    weights[c] = 1.0f / static_cast<float>(c + 1);
  return torch::tensor(weights, torch::TensorOptions().dtype(torch::kFloat).device(device));
  // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: `torch::tensor(<list>, <GPU options>)` builds the values on the host and copies them to the GPU with a blocking copy; false dependency: the host does not need to wait for the copy; build it on the CPU with the same dtype, then `.to(device, /*non_blocking=*/true)` [torch-sync-tensor-factory]
  // CHECK-FIXES: return torch::tensor(weights, torch::TensorOptions().dtype(torch::kFloat)).to(device, /*non_blocking=*/true);
}

double evaluate(Classifier &model, const std::vector<Batch> &batches, torch::Device device) {
  torch::NoGradGuard no_grad;
  int64_t correct = 0;
  int64_t seen = 0;
  for (const auto &batch : batches) {
    auto data = batch.data.to(device);
    // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: `to(<GPU>)` copies a host tensor to the GPU and blocks the host until the copy is done; false dependency: the host does not need to wait for a copy to the GPU (every iteration of the loop at line [[@LINE-2]]); pass `non_blocking=true`; the source is pageable host memory, so a large copy stays synchronous until the source is pinned (`.pin_memory()` where it is made, or a pinned staging buffer reused across steps) [torch-sync-host-to-device]
    // CHECK-FIXES: auto data = batch.data.to(device, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
    auto target = batch.target.to(device);
    // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: `to(<GPU>)` copies a host tensor to the GPU
    // CHECK-FIXES: auto target = batch.target.to(device, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
    auto predictions = model.forward(data).argmax(1);
    correct += predictions.eq(target).sum().item<int64_t>();
    // CHECK-MESSAGES: :[[@LINE-1]]:45: warning: `correct` accumulates `item()` every iteration, so every iteration waits for the GPU; false dependency: the sum is read only after the loop (every iteration of the loop at line [[@LINE-9]]); accumulate on the device and read the total once after the loop [torch-sync-deferred-accumulate]
    // CHECK-FIXES: auto correct_step = predictions.eq(target).sum();
    seen += target.size(0);
  }
  // CHECK-FIXES: correct += correct_on_device.item<int64_t>();
  return static_cast<double>(correct) / static_cast<double>(seen);
}

// Statistics printed after each epoch.
void report_weights(Classifier &model) {
  for (auto &p : model.parameters()) {
    auto finite = p.isfinite().all();
    if (!finite.item<bool>())
      // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `item<bool>()` on a tensor that may be on the GPU turns a GPU value into a host `bool`, so the host waits for the GPU; true dependency: the value decides an `if` (every iteration of the loop at line [[@LINE-3]]); decide on the device instead (`torch::where`, masks) or check less often [torch-sync-host-bool]
      std::cerr << "non-finite parameter\n";
    auto large = p.abs() > 1.0;
    auto large_sum = p.index({large}).sum();
    // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: selecting with a boolean mask on a tensor that may be on the GPU makes the result's size depend on GPU data, so the host waits to learn it; false dependency: only the selection's `sum()` is used (every iteration of the loop at line [[@LINE-7]]); reduce with `torch::where(mask, x, 0)` instead: same value, fixed shape [torch-sync-mask-index]
    // CHECK-FIXES: auto large_sum = torch::where(large, p, 0).sum();
    std::cout << "large weights sum " << large_sum << "\n";
    // CHECK-MESSAGES: :[[@LINE-1]]:39: warning: printing a tensor that may be on the GPU copies its values to the host and waits for the GPU; false dependency: the values are only logged (every iteration of the loop at line [[@LINE-10]]); print after the step or at a log interval [torch-sync-print]
  }
}

// An inference helper: scores on the device, the top rows back to the host.
std::vector<int64_t> top_rows(Classifier &model, torch::Tensor inputs, double threshold) {
  auto scores = torch::softmax(model.forward(inputs), 1).max();
  auto keep = (scores > threshold).nonzero();
  // CHECK-MESSAGES: :[[@LINE-1]]:36: warning: `nonzero` on a tensor that may be on the GPU has an output size that depends on the data, so the host waits for the GPU; true dependency: the output's size is computed from GPU values; with a known bound use `at::nonzero_static(x, size, fill)`; as a guard use `.any()` kept on the device [torch-sync-dynamic-shape]
  auto host = keep.cpu();
  // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: `cpu()` on a tensor that may be on the GPU copies it to the host and waits for all queued GPU work; true dependency: through `host`, the host reads the tensor's memory; copy once, later: into pinned memory with `non_blocking=true` and one synchronization before the host reads it [torch-sync-device-to-host]
  std::vector<int64_t> rows;
  const int64_t *data = host.data_ptr<int64_t>();
  for (int64_t i = 0; i < host.numel(); ++i)
    rows.push_back(data[i]);
  return rows;
}

} // namespace

int main() {
  Config config;
  torch::manual_seed(0);
  torch::Device device = pick_device();
  Classifier model(config);
  model.hidden->to(device);
  model.output->to(device);
  torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(config.learning_rate));
  auto train_batches = make_batches(config);
  auto val_batches = make_batches(config);
  auto weights = class_weights(config, device);
  auto label_smoothing = torch::full({config.classes}, 0.01).to(device);
  // CHECK-MESSAGES: :[[@LINE-1]]:62: warning: `full(...).to(...)` fills the tensor on the host, then copies it to the GPU and blocks the host; false dependency: the values can be made on the GPU directly; create it on the device: no copy at all [torch-sync-host-to-device]
  // CHECK-FIXES: auto label_smoothing = torch::full({config.classes}, 0.01, torch::device(device));

  auto started = std::chrono::steady_clock::now();
  for (int epoch = 0; epoch < config.epochs; ++epoch) {
    double running_loss = 0;
    int64_t correct = 0;
    int64_t seen = 0;
    int step = 0;
    for (auto &batch : train_batches) {
      auto data = batch.data.to(device);
      // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: `to(<GPU>)` copies a host tensor to the GPU {{.*}}; the source is pageable host memory, so a large copy stays synchronous {{.*}}[torch-sync-host-to-device]
      // CHECK-FIXES: auto data = batch.data.to(device, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
      auto target = batch.target.to(device);
      // CHECK-MESSAGES: :[[@LINE-1]]:34: warning: `to(<GPU>)` copies a host tensor to the GPU {{.*}}; the source is pageable host memory, so a large copy stays synchronous {{.*}}[torch-sync-host-to-device]
      // CHECK-FIXES: auto target = batch.target.to(device, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
      optimizer.zero_grad();
      auto logits = model.forward(data);
      auto loss = torch::nn::functional::cross_entropy(logits * weights + label_smoothing, target);
      loss.backward();
      torch::nn::utils::clip_grad_norm_(model.parameters(), config.max_grad_norm);
      // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: `clip_grad_norm_` returns the total norm as a host `double`, so it waits for the backward pass; false dependency: the value is unused (every iteration of the loop at line [[@LINE-12]]); compute the norm and scale on the device (a 0-dim norm, `clamp_max`, `mul_`); read the norm only when it is logged [torch-sync-grad-norm]
      // CHECK-FIXES: torch_syncfree_clip_grad_norm(model.parameters(), config.max_grad_norm);
      optimizer.step();

      running_loss += loss.item<double>() * data.size(0);
      // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: `running_loss` accumulates `item()` every iteration, {{.*}}[torch-sync-deferred-accumulate]
      // CHECK-FIXES: running_loss_on_device.add_(running_loss_step, data.size(0));
      correct += logits.argmax(1).eq(target).sum().item<int64_t>();
      // CHECK-MESSAGES: :[[@LINE-1]]:52: warning: `correct` accumulates `item()` every iteration, {{.*}}[torch-sync-deferred-accumulate]
      // CHECK-FIXES: correct_on_device.add_(correct_step);
      seen += data.size(0);
      if (++step % config.log_every == 0)
        std::printf("epoch %d step %d loss %.4f\n", epoch, step, loss.item<float>());
        // (read at the log interval: the remedy already, not a finding)
    }
    // CHECK-FIXES: running_loss += running_loss_on_device.item<double>();
    // CHECK-FIXES: correct += correct_on_device.item<int64_t>();
    double accuracy = evaluate(model, val_batches, device);
    // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: the call to `evaluate` makes the host wait for the GPU (`item` on a tensor that may be on the GPU at line 85); false dependency: in the callee, the value is accumulated into a host metric (every iteration of the loop at line 142); let the callee return device tensors and read them after the loop or at a log interval [torch-sync-call-in-loop]
    // CHECK-MESSAGES: :85:16: note: the host waits here
    std::printf("epoch %d train loss %.4f train acc %.4f val acc %.4f\n", epoch,
                running_loss / seen, static_cast<double>(correct) / seen, accuracy);
    report_weights(model);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: the call to `report_weights` makes the host wait for the GPU (`item` on a tensor that may be on the GPU at line 98); true dependency: in the callee, the value decides an `if` (every iteration of the loop at line 142); move the host decision out of the loop or onto the device [torch-sync-call-in-loop]
    // CHECK-MESSAGES: :98:10: note: the host waits here
  }
  torch::cuda::synchronize();
  // CHECK-MESSAGES: :[[@LINE-1]]:3: warning: `synchronize` blocks the host until the GPU work it covers is done (PyTorch's sync debug mode does not see this one); intentional barrier: it brackets a timer or the release of a buffer; for timing, CUDA events measure without stalling the host [torch-sync-explicit]
  auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("training took %.2f s\n", elapsed);

  // Inference on a held-out batch and a checkpoint of the first layer.
  auto probe = torch::randn({16, config.features}).to(device);
  // CHECK-MESSAGES: :[[@LINE-1]]:52: warning: `to(<GPU>)` copies a host tensor to the GPU
  // CHECK-FIXES: auto probe = torch::randn({16, config.features}).to(device, /*non_blocking=*/true) /* torch-syncfree: non_blocking overlaps only from pinned memory */;
  auto rows = top_rows(model, probe, 0.5);
  std::printf("%zu confident rows\n", rows.size());
  auto first = model.hidden->parameters()[0].detach();
  auto best_row = first.index({first.sum(1).argmax()});
  // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: indexing with a 0-dim integer tensor that may be on the GPU reads the index on the host (the host waits); false dependency: a one-element index tensor selects the same row on the device; index with `t.unsqueeze(0)` and `squeeze(0)` the result [torch-sync-scalar-index]
  // CHECK-FIXES: auto best_row = first.index({first.sum(1).argmax().unsqueeze(0)}).squeeze(0);
  auto inverse = torch::linalg_inv(torch::eye(4, torch::TensorOptions().device(device)) * 2);
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `linalg_inv` on a tensor that may be on the GPU checks the factorisation on the host, so it waits for the GPU; false dependency: the result itself does not need the host; use `linalg_inv_ex`, which returns an `info` tensor instead of raising, and check `info` later (errors are then no longer raised here) [torch-sync-checked-linalg]
  std::cout << "checkpoint row norm " << best_row.norm().item<float>() << " inverse trace "
            // CHECK-MESSAGES: :[[@LINE-1]]:58: warning: `item()` on a tensor that may be on the GPU {{.*}}; false dependency: the value is only logged; {{.*}}[torch-sync-item]
            << inverse.sum().item<float>() << "\n";
            // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: `item()` on a tensor that may be on the GPU {{.*}}; false dependency: the value is only logged; {{.*}}[torch-sync-item]
  return 0;
}
