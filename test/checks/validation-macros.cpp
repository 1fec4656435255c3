// RUN: %check_torch_sync %s 'torch-sync-item,torch-sync-host-bool' %t -- %mock_flags
// A read inside an assertion or check macro is a validation: reported at the
// expansion as a true dependency with the device-side remedy, never rewritten.
// A statement macro's `do { } while (0)` is not a loop.
#include <torch/torch.h>
#include <cassert>
#include <cmath>
#include <vector>
#define CHECK(cond) do { if (!(cond)) throw 1; } while (0)
#define WHEN_BAD(x) do { if (x) {} } while (0)

void steps(std::vector<torch::Tensor> &xs) {
  for (auto &x : xs) {
    auto loss = x.cuda().sum();
    assert(!std::isnan(loss.item<float>()));
    // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; true dependency: the value is validated by `assert(...)` on the host (every iteration of the loop at line [[@LINE-3]]); validate on the device instead (`at::_assert_async(<condition>)` queues the check without a host wait), or check outside the hot path (every N steps, or once after the loop) [torch-sync-item]
    CHECK(loss.item<float>() < 100.f);
    // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; true dependency: the value is validated by `CHECK(...)` on the host (every iteration of the loop at line [[@LINE-5]]); validate on the device instead
  }
}

// Outside any loop: still a validation, and the macro's do-while is no loop.
void once(torch::Tensor t) {
  auto g = t.cuda();
  CHECK(g.sum().item<float>() > 0.f);
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; true dependency: the value is validated by `CHECK(...)` on the host; validate on the device instead
}

// A macro that is not a check: the usual classification.
void branch(torch::Tensor t) {
  auto g = t.cuda();
  WHEN_BAD(g.sum().item<float>() > 1.f);
  // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; true dependency: the value decides an `if`; if the host must decide
}

// Issue 21: a read in TORCH_CHECK's message arguments runs only when the check
// fails: not reported. The condition is read on every call: reported.
void message_only(torch::Tensor loss, torch::Tensor w) {
  auto g = loss.cuda();
  TORCH_CHECK(w.numel() > 0, "bad loss ", g.item<float>(), " at step");
  TORCH_CHECK(g.item<float>() > 0.f, "negative loss ", g.item<float>());
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: `item()` on a GPU tensor copies the value to the host and waits for all queued GPU work; true dependency: the value is validated by `TORCH_CHECK(...)` on the host
}
