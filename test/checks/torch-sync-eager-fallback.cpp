// RUN: %check_torch_sync --compile-fixed %s torch-sync-eager-fallback %t -- %mock_flags
// With torch-sync-item enabled, an item() read inside value_or's argument is
// still one finding (this check's); the reads elsewhere stay torch-sync-item's.
// RUN: %check_torch_sync --check-prefix=CHECK,BOTH %s torch-sync-eager-fallback,torch-sync-item %t-both -- %mock_flags
// A second --fix changes nothing: the fixed reads are torch-sync-item's (no fix).
// RUN: rm -rf %t.fp && mkdir -p %t.fp && cp %s %t.fp/a.cpp
// RUN: %expect_exit 1 %torch_syncfree --quiet --fix --checks=torch-sync-eager-fallback,torch-sync-item %t.fp/a.cpp -- %mock_flags > /dev/null 2>&1
// RUN: cp %t.fp/a.cpp %t.fp/once.cpp
// RUN: %expect_exit 1 %torch_syncfree --quiet --fix --checks=torch-sync-eager-fallback,torch-sync-item %t.fp/a.cpp -- %mock_flags > /dev/null 2>&1
// RUN: diff %t.fp/once.cpp %t.fp/a.cpp
// RUN: not diff -q %s %t.fp/a.cpp > /dev/null
#include <torch/torch.h>
#include <optional>

// --- positive: the fix ---------------------------------------------------------
int64_t initialiser(std::optional<int64_t> cap, torch::Tensor lengths) {
  int64_t n = cap.value_or(lengths.max().item<int64_t>());
// CHECK-MESSAGES: :[[@LINE-1]]:19: warning: the argument of `value_or` is evaluated even when `cap` holds a value, and its `item()` on a tensor that may be on the GPU makes the host wait for all queued GPU work; false dependency: the value is needed only when `cap` is empty (then a true dependency: through `n`, the value is returned to the caller); evaluate it only then: `cap.has_value() ? *cap : ...` waits only when `cap` is empty instead of on every call [torch-sync-eager-fallback]
// CHECK-FIXES:   int64_t n = cap.has_value() ? *cap : lengths.max().item<int64_t>() /* torch-syncfree: read only when empty */;
  return n;
}

int64_t returned(std::optional<int64_t> cap, torch::Tensor lengths) {
  return cap.value_or(lengths.max().item<int64_t>());
// CHECK-MESSAGES: :[[@LINE-1]]:14: warning: the argument of `value_or` is evaluated even when `cap` holds a value, and its `item()` on a tensor that may be on the GPU makes the host wait for all queued GPU work; false dependency: the value is needed only when `cap` is empty (then a true dependency: the value is returned to the caller); evaluate it only then: `cap.has_value() ? *cap : ...` waits only when `cap` is empty instead of on every call [torch-sync-eager-fallback]
// CHECK-FIXES:   return cap.has_value() ? *cap : lengths.max().item<int64_t>() /* torch-syncfree: read only when empty */;
}

torch::Tensor argument(std::optional<int64_t> start, torch::Tensor x) {
  return x.narrow(0, start.value_or(x.argmax().item<int64_t>()), 2);
// CHECK-MESSAGES: :[[@LINE-1]]:28: warning: the argument of `value_or` is evaluated even when `start` holds a value, and its `item()` on a tensor that may be on the GPU makes the host wait for all queued GPU work; false dependency: the value is needed only when `start` is empty (then a true dependency: the value is a size, index or dimension argument (`start` of `narrow`)); evaluate it only then: `start.has_value() ? *start : ...` waits only when `start` is empty instead of on every call [torch-sync-eager-fallback]
// CHECK-FIXES:   return x.narrow(0, start.has_value() ? *start : x.argmax().item<int64_t>() /* torch-syncfree: read only when empty */, 2);
}

int64_t operand(std::optional<int64_t> cap, torch::Tensor t) {
  return 2 * cap.value_or(t.sum().item<int64_t>()) + 1;
// CHECK-MESSAGES: :[[@LINE-1]]:18: warning: the argument of `value_or` is evaluated even when `cap` holds a value, and its `item()` on a tensor that may be on the GPU makes the host wait for all queued GPU work; false dependency: the value is needed only when `cap` is empty (then a true dependency: the value is returned to the caller); evaluate it only then: `cap.has_value() ? *cap : ...` waits only when `cap` is empty instead of on every call [torch-sync-eager-fallback]
// CHECK-FIXES:   return 2 * (cap.has_value() ? *cap : t.sum().item<int64_t>() /* torch-syncfree: read only when empty */) + 1;
}

double c10_spelling(c10::optional<double> scale, torch::Tensor t) {
  double s = scale.value_or(t.abs().max().item<double>());
// CHECK-MESSAGES: :[[@LINE-1]]:20: warning: the argument of `value_or` is evaluated even when `scale` holds a value, and its `item()` on a tensor that may be on the GPU makes the host wait for all queued GPU work; false dependency: the value is needed only when `scale` is empty (then a true dependency: through `s`, the value is returned to the caller); evaluate it only then: `scale.has_value() ? *scale : ...` waits only when `scale` is empty instead of on every call [torch-sync-eager-fallback]
// CHECK-FIXES:   double s = scale.has_value() ? *scale : t.abs().max().item<double>() /* torch-syncfree: read only when empty */;
  return s;
}

struct Config {
  std::optional<int64_t> k;
};

int64_t member(const Config &cfg, torch::Tensor scores) {
  const int64_t k = cfg.k.value_or(scores.size(0) - scores.sum().item<int64_t>());
// CHECK-MESSAGES: :[[@LINE-1]]:27: warning: the argument of `value_or` is evaluated even when `cfg.k` holds a value, and its `item()` on a tensor that may be on the GPU makes the host wait for all queued GPU work; false dependency: the value is needed only when `cfg.k` is empty (then a true dependency: through `k`, the value is returned to the caller); evaluate it only then: `cfg.k.has_value() ? *cfg.k : ...` waits only when `cfg.k` is empty instead of on every call [torch-sync-eager-fallback]
// CHECK-FIXES:   const int64_t k = cfg.k.has_value() ? *cfg.k : scores.size(0) - scores.sum().item<int64_t>() /* torch-syncfree: read only when empty */;
  return k;
}

torch::Tensor host_copy(std::optional<torch::Tensor> cached, torch::Tensor t) {
  torch::Tensor host = cached.value_or(t.cpu());
// CHECK-MESSAGES: :[[@LINE-1]]:31: warning: the argument of `value_or` is evaluated even when `cached` holds a value, and its `cpu()` on a tensor that may be on the GPU makes the host wait for all queued GPU work; false dependency: the value is needed only when `cached` is empty (then a true dependency: through `host`, the value is returned to the caller); evaluate it only then: `cached.has_value() ? *cached : ...` waits only when `cached` is empty instead of on every call [torch-sync-eager-fallback]
// CHECK-FIXES:   torch::Tensor host = cached.has_value() ? *cached : t.cpu() /* torch-syncfree: read only when empty */;
  return host;
}

// A function template: reported once (its analysed instantiation), fixed in the pattern.
template <typename T>
int64_t in_template(std::optional<int64_t> cap, T t) {
  return cap.value_or(t.max().template item<int64_t>());
// CHECK-MESSAGES: :[[@LINE-1]]:14: warning: the argument of `value_or` is evaluated even when `cap` holds a value, {{.*}}[torch-sync-eager-fallback]
// CHECK-FIXES:   return cap.has_value() ? *cap : t.max().template item<int64_t>() /* torch-syncfree: read only when empty */;
}
int64_t use_template(std::optional<int64_t> cap, torch::Tensor t) { return in_template(cap, t); }

// --- no fix ------------------------------------------------------------------
// The argument has an effect that runs on every call today (a counter advanced
// in place): evaluating it only when the optional is empty would skip it.
int64_t next_seed(std::optional<int64_t> seed, torch::Tensor counter) {
  return seed.value_or(counter.mul_(2).item<int64_t>());
// CHECK-MESSAGES: :[[@LINE-1]]:15: warning: the argument of `value_or` is evaluated even when `seed` holds a value, {{.*}} (no fix: the argument has side effects (an in-place op, an assignment or a call of code that is not LibTorch's) that run on every call today; move them out of the argument first) [torch-sync-eager-fallback]
}

int64_t other_type(std::optional<int> small, torch::Tensor t) {
  return small.value_or(t.max().item<int64_t>());
// CHECK-MESSAGES: :[[@LINE-1]]:16: warning: the argument of `value_or` is evaluated even when `small` holds a value, and its `item()` on a tensor that may be on the GPU makes the host wait for all queued GPU work; false dependency: the value is needed only when `small` is empty (then a true dependency: the value is returned to the caller); evaluate it only then: `small.has_value() ? *small : ...` waits only when `small` is empty instead of on every call (no fix: the argument's type is not the optional's value type, so the conditional's type could differ from `value_or`'s) [torch-sync-eager-fallback]
// CHECK-MESSAGES: :[[@LINE-2]]:16: note: the rewrite, if the conditional's type is the one needed: `small.has_value() ? *small : t.max().item<int64_t>() /* torch-syncfree: read only when empty */`
}

std::optional<int64_t> make();
int64_t side_effects(torch::Tensor t) {
  return make().value_or(t.max().item<int64_t>());
// CHECK-MESSAGES: :[[@LINE-1]]:17: warning: the argument of `value_or` is evaluated even when `make()` holds a value, and its `item()` on a tensor that may be on the GPU makes the host wait for all queued GPU work; false dependency: the value is needed only when `make()` is empty (then a true dependency: the value is returned to the caller); evaluate it only then: `opt.has_value() ? *opt : ...` waits only when `make()` is empty instead of on every call (no fix: the optional is not a variable read without side effects; store it in one first) [torch-sync-eager-fallback]
}

int64_t through_pointer(const std::optional<int64_t> *cap, torch::Tensor t) {
  return cap->value_or(t.max().item<int64_t>());
// CHECK-MESSAGES: :[[@LINE-1]]:15: warning: the argument of `value_or` is evaluated even when `*cap` holds a value, and its `item()` on a tensor that may be on the GPU makes the host wait for all queued GPU work; false dependency: the value is needed only when `*cap` is empty (then a true dependency: the value is returned to the caller); evaluate it only then: `opt.has_value() ? *opt : ...` waits only when `*cap` is empty instead of on every call (no fix: the optional is not a variable read without side effects; store it in one first) [torch-sync-eager-fallback]
}

#define CAP_OR_MAX(o, t) (o).value_or((t).max().item<int64_t>())
int64_t in_macro(std::optional<int64_t> cap, torch::Tensor t) {
  return CAP_OR_MAX(cap, t);
// CHECK-MESSAGES: :[[@LINE-1]]:10: warning: the argument of `value_or` is evaluated even when the optional holds a value, {{.*}}; evaluate it only then: `opt.has_value() ? *opt : ...` waits only when the optional is empty instead of on every call (no fix: the call is spelled in a macro) [torch-sync-eager-fallback]
}

// --- negative ------------------------------------------------------------------
int64_t host_only(std::optional<int64_t> cap, std::vector<int64_t> sizes) {
  auto on_cpu = torch::rand({4});
  return cap.value_or(16) + cap.value_or(static_cast<int64_t>(sizes.size())) +
         cap.value_or(on_cpu.argmax().item<int64_t>());
}

int64_t object_only(std::vector<std::optional<int64_t>> caps, torch::Tensor t) {
  return caps[t.argmax().item<int64_t>()].value_or(0);
// BOTH-MESSAGES: :[[@LINE-1]]:26: warning: `item()` on a tensor that may be on the GPU {{.*}} [torch-sync-item]
}
