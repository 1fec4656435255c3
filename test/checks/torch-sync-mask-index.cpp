// RUN: %check_torch_sync %s torch-sync-mask-index %t -- %mock_flags
#include <torch/torch.h>
#include <vector>

void positives(torch::Tensor maybe_gpu, torch::Tensor idx) {
  auto x = torch::randn({64}, torch::kCUDA);
  auto mask = x > 0;
  auto total = x.index({mask}).sum();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: selecting with a boolean mask on a GPU tensor makes the result's size depend on GPU data, so the host waits to learn it; false dependency: only the selection's `sum()` is used; reduce with `torch::where(mask, x, 0)` instead: same value, fixed shape [torch-sync-mask-index]
  // CHECK-FIXES: auto total = torch::where(mask, x, 0).sum();
  auto avg = x.index({x.isnan().logical_not()}).mean();
  // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: selecting with a boolean mask {{.*}}; false dependency: only the selection's `mean()` is used;
  // CHECK-FIXES: auto avg = (torch::where(x.isnan().logical_not(), x, 0).sum() / x.isnan().logical_not().sum());
  auto kept = x.index({mask});
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: selecting with a boolean mask {{.*}}; true dependency: the selection's size shapes what follows; keep shapes fixed with `torch::where(mask, x, fill)` and reduce or mask later [torch-sync-mask-index]
  auto sel = maybe_gpu.masked_select(maybe_gpu.gt(0.5));
  // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: selecting with a boolean mask on a tensor that may be on the GPU {{.*}}; true dependency
  auto maybe = x.index({idx}).sum();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `index({t})` with a tensor that may be a boolean mask {{.*}}; false dependency: only the selection's `sum()` is used; reduce with `torch::where(mask, x, 0)` instead: same value, fixed shape (if `idx` is a boolean mask) [torch-sync-mask-index]
}

void negatives() {
  auto x = torch::randn({64}, torch::kCUDA);
  auto rows = torch::randint(64, {8}, torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA));
  auto gathered = x.index({rows});                    // an integer gather keeps its shape
  auto host = torch::randn({64});
  auto on_cpu = host.index({host > 0}).sum();         // CPU: no sync
  auto fixed = torch::where(x > 0, x, 0).sum();       // already the remedy
}

// Macros and templates: a sync spelled in a macro body is reported at the
// expansion and never rewritten; a template is checked once, in its definition.
#define MASKED_SUM(x, m) (x).index({m}).sum()
// CHECK-FIXES: #define MASKED_SUM(x, m) (x).index({m}).sum()
void macro_and_template_cases() {
  auto x = torch::randn({8}, torch::kCUDA);
  auto s = MASKED_SUM(x, x > 0);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: selecting with a boolean mask
  // CHECK-FIXES: auto s = MASKED_SUM(x, x > 0);
}
template <int N> torch::Tensor positive_sum(const torch::Tensor &x) {
  return x.index({x > N}).sum();
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: selecting with a boolean mask on a tensor that may be on the GPU
  // CHECK-FIXES: return torch::where(x > N, x, 0).sum();
}
template torch::Tensor positive_sum<0>(const torch::Tensor &);
template torch::Tensor positive_sum<1>(const torch::Tensor &);

// A selection kept in a variable that is only summed or averaged needs no size on
// the host either (false, remedy without a fix: the declaration itself selects);
// one whose size is read is true.
double reduced_through_a_variable(const torch::Tensor &logits) {
  auto probs = torch::sigmoid(logits.cuda());
  auto confident = probs.index({probs > 0.5});
  // CHECK-MESSAGES: :[[@LINE-1]]:26: warning: selecting with a boolean mask on a GPU tensor makes the result's size depend on GPU data, so the host waits to learn it; false dependency: through `confident`, only full sums or means of the selection are used; reduce with `torch::where(mask, x, 0)` instead: same value, fixed shape [torch-sync-mask-index]
  auto sized = probs.index({probs > 0.9});
  // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: selecting with a boolean mask on a GPU tensor {{.*}}; true dependency: the selection's size shapes what follows;
  return confident.mean().item<double>() + confident.sum().item<double>() + static_cast<double>(sized.size(0));
}

// Issue 43: a selection of which only the size is read, summed into a host metric
// read after the loop, is a false dependency by the rule for `m += t.item()`; the
// mask counts it on the device. No fix: the metric's type and reads stay the user's.
int64_t counted_selections(const torch::Tensor &p, const torch::Tensor &t, int steps) {
  auto x = torch::randn({64}, torch::kCUDA);
  int64_t hits = 0, rows = 0, kept = 0;
  double scaled = 0;
  for (int i = 0; i < steps; ++i) {
    hits += x.masked_select(p.eq(t)).numel();
    // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: selecting with a boolean mask on a GPU tensor makes the result's size depend on GPU data, so the host waits to learn it; false dependency: only the selection's size is read (`numel()`), and the value is accumulated into a host metric (every iteration of the loop at line [[@LINE-2]]); count on the device with `p.eq(t).sum()` (the same number when the mask has `x`'s shape), add those counts into a tensor on the device and read the total once, after the loop [torch-sync-mask-index]
    rows += x.index({x > 0.5}).size(0);
    // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: selecting with a boolean mask {{.*}}; false dependency: only the selection's size is read (`size(0)`), and the value is accumulated into a host metric (every iteration of the loop at line {{[0-9]+}}); count on the device with `(x > 0.5).sum()`, add those counts into a tensor on the device and read the total once, after the loop [torch-sync-mask-index]
    scaled += 0.5 * x.index({x < 0}).numel();
    // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: selecting with a boolean mask {{.*}}; false dependency: only the selection's size is read (`numel()`), and the value is accumulated into a host metric (every iteration of the loop at line {{[0-9]+}}); count on the device with `(x < 0).sum()` (times the elements of each selected row when the mask has fewer dimensions than `x`), add those counts
    auto sel = x.masked_select(x < 0.1);
    // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: selecting with a boolean mask {{.*}}; false dependency: through `sel`, only the selection's size is read (`numel()`), and the value is accumulated into a host metric (every iteration of the loop at line {{[0-9]+}}); count on the device with `(x < 0.1).sum()`
    kept += sel.numel();
  }
  return hits + rows + kept + static_cast<int64_t>(scaled);
}
// The size used as a size, an index, a loop bound or a condition, returned to a
// caller this file cannot see, or read beside the selection's values: true.
int64_t sizes_the_host_needs(const torch::Tensor &p, const torch::Tensor &t, std::vector<float> &table) {
  auto x = torch::randn({64}, torch::kCUDA);
  int64_t n = 0;
  auto out = torch::zeros({x.masked_select(p.eq(t)).numel()});
  // CHECK-MESSAGES: :[[@LINE-1]]:30: warning: selecting with a boolean mask on a GPU tensor {{.*}}; true dependency: the selection's size shapes what follows;
  n += static_cast<int64_t>(table[x.index({x > 0}).size(0)]);
  // CHECK-MESSAGES: :[[@LINE-1]]:37: warning: selecting with a boolean mask on a GPU tensor {{.*}}; true dependency: the selection's size shapes what follows;
  for (int64_t j = 0; j < x.masked_select(x > 1).numel(); ++j)
  // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: selecting with a boolean mask on a GPU tensor {{.*}}; true dependency: the selection's size shapes what follows
    ++n;
  if (x.index({x > 2}).size(0) > 3)
  // CHECK-MESSAGES: :[[@LINE-1]]:9: warning: selecting with a boolean mask on a GPU tensor {{.*}}; true dependency: the selection's size shapes what follows;
    ++n;
  auto both = x.masked_select(x > 3);
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: selecting with a boolean mask on a GPU tensor {{.*}}; true dependency: the selection's size shapes what follows;
  n += both.numel() + both.max().item<int64_t>();
  return n + x.masked_select(p.eq(t)).numel();
  // CHECK-MESSAGES: :[[@LINE-1]]:16: warning: selecting with a boolean mask on a GPU tensor {{.*}}; true dependency: the selection's size shapes what follows;
}

// Only a full sum of elementwise functions of the selection, with host scalars
// (a metric over the hits: the blind sparse model's `(hit_ranks + 1)...sum()`):
// false, summed on the device with `where`. A tensor operand (another
// selection's alignment is unknown) or a mean of such a function keeps it true.
double hit_metric(const torch::Tensor &rank, double total) {
  auto hits = rank.index({rank.lt(10)});
  // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: selecting with a boolean mask on a tensor that may be on the GPU {{.*}}; false dependency: through `hits`, only full sums of elementwise functions of the selection are used; apply those functions to the whole tensor and sum `torch::where(mask, f(x), 0)` instead: same value, fixed shape [torch-sync-mask-index]
  total += (hits + 1).to(torch::kDouble).abs().sum().item<double>();
  return total;
}
double not_elementwise(const torch::Tensor &rank, const torch::Tensor &w) {
  auto hits = rank.index({rank.lt(10)});
  // CHECK-MESSAGES: :[[@LINE-1]]:20: warning: {{.*}}; true dependency: the selection's size shapes what follows;
  auto mean_hits = rank.index({rank.lt(5)});
  // CHECK-MESSAGES: :[[@LINE-1]]:25: warning: {{.*}}; true dependency: the selection's size shapes what follows;
  return (hits * w).sum().item<double>() + (mean_hits - 1).mean().item<double>();
}
