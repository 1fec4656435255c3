// RUN: %check_torch_sync --compile-fixed %s torch-sync-item %t -- %mock_flags
// Issue 41, third restructuring: the same tensor read twice. An element read
// (`csum[-1].item<int64_t>()`) of a tensor the same block also copies whole to
// the host (`auto host = csum.cpu();`) takes its element from that copy; when
// the copy comes after the read, the copy moves before the read's statement.
// One wait fewer per call (per iteration for a read in a loop the copy is not in).
#include <torch/torch.h>
#include <vector>

void consume(const torch::Tensor &t);
#define LAST(t) t[-1].item<int64_t>()

// --- fixed --------------------------------------------------------------------
// The copy first, the read later.
int64_t copy_then_read(const torch::Tensor &lengths) {
  auto csum = lengths.cumsum(0);
  auto host = csum.cpu();
  int64_t total = csum[-1].item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: `item()` on a tensor that may be on the GPU copies the value to the host and waits for all queued GPU work; {{.*}}; `csum` is also copied to the host at line [[@LINE-2]] (`host`): read the element from that copy (one wait fewer per call) [torch-sync-item]
  return total + host.data_ptr<int64_t>()[0];
}
// CHECK-FIXES: int64_t total = host[-1].item<int64_t>();

// The read first, the copy later: the copy moves before the read's statement.
std::vector<int64_t> read_then_copy(const torch::Tensor &lengths) {
  auto csum = lengths.cumsum(0);
  int64_t total = csum[-1].item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: {{.*}}; `csum` is also copied to the host at line [[@LINE+3]] (`csum_host`): make that copy before this read and read the element from it (one wait fewer per call) [torch-sync-item]
  std::vector<int64_t> out(total);
  TORCH_CHECK(total >= 0, "negative");
  auto csum_host = csum.cpu();
  for (int64_t i = 0; i < csum_host.size(0); ++i)
    out.push_back(csum_host.data_ptr<int64_t>()[i]);
  return out;
}
// CHECK-FIXES: auto csum = lengths.cumsum(0);
// CHECK-FIXES-NEXT: auto csum_host = csum.cpu() /* torch-syncfree: one copy for both reads */;
// CHECK-FIXES-NEXT: int64_t total = csum_host[-1].item<int64_t>();
// CHECK-FIXES-NEXT: //
// CHECK-FIXES-NEXT: std::vector<int64_t> out(total);
// CHECK-FIXES-NEXT: TORCH_CHECK(total >= 0, "negative");
// CHECK-FIXES-NEXT: for (int64_t i = 0;

// A read in a loop after the copy: a wait fewer per iteration. A whole-tensor
// read (`n.item()`) counts too.
int64_t loop_reads(const torch::Tensor &offsets, const torch::Tensor &n) {
  auto offsets_cpu = offsets.to(torch::kCPU);
  auto n_cpu = n.cpu();
  int64_t sum = 0;
  for (int64_t i = 0; i < offsets_cpu.size(0) - 1; ++i)
    sum += offsets[i + 1].item<int64_t>() - offsets_cpu[i].item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:27: warning: {{.*}}; `offsets` is also copied to the host at line [[@LINE-5]] (`offsets_cpu`): read the element from that copy (one wait fewer per iteration) [torch-sync-item]
  return sum + n.item<int64_t>() + n_cpu.item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: {{.*}}; `n` is also copied to the host at line [[@LINE-6]] (`n_cpu`): read the element from that copy (one wait fewer per call) [torch-sync-item]
}
// CHECK-FIXES: sum += offsets_cpu[i + 1].item<int64_t>() - offsets_cpu[i].item<int64_t>();
// CHECK-FIXES: return sum + n_cpu.item<int64_t>() + n_cpu.item<int64_t>();

// A break inside a loop between the read and the copy leaves only that loop.
int64_t inner_break(const torch::Tensor &csum, int64_t limit) {
  int64_t total = csum[-1].item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: {{.*}}; `csum` is also copied to the host at line [[@LINE+7]] (`host`): make that copy before this read {{.*}} [torch-sync-item]
  int64_t steps = 0;
  for (int64_t i = 0; i < limit; ++i) {
    if (i * i > total)
      break;
    ++steps;
  }
  auto host = csum.cpu();
  return steps + host.data_ptr<int64_t>()[0];
}
// CHECK-FIXES: auto host = csum.cpu() /* torch-syncfree: one copy for both reads */;
// CHECK-FIXES-NEXT: int64_t total = host[-1].item<int64_t>();

// --- the rewrite in the message, no fix ---------------------------------------
// Written between the copy and the read.
int64_t written_between(torch::Tensor csum) {
  auto host = csum.cpu();
  csum.mul_(2);
  return csum[0].item<int64_t>() + host.data_ptr<int64_t>()[0];
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: {{.*}}; no fix: `csum` may change between the copy and the read: `mul_()` may write its memory (the rewrite: `host` for `csum` in the read) [torch-sync-item]
}

// Written through a reference between them.
int64_t aliased_between(torch::Tensor csum) {
  torch::Tensor &alias = csum;
  auto host = csum.cpu();
  alias.mul_(2);
  return csum[0].item<int64_t>() + host.data_ptr<int64_t>()[0];
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: {{.*}}; no fix: `csum` may {{.*}} [torch-sync-item]
}

// Given another tensor between them.
int64_t reassigned_between(torch::Tensor csum, const torch::Tensor &other) {
  auto host = csum.cpu();
  csum = other * 2;
  return csum[0].item<int64_t>() + host.data_ptr<int64_t>()[0];
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: {{.*}}; no fix: `csum` may be given another tensor between the copy and the read (the rewrite: `host` for `csum` in the read) [torch-sync-item]
}

// The host copy is written between them.
int64_t host_written(const torch::Tensor &csum) {
  auto host = csum.cpu();
  host.zero_();
  return csum[0].item<int64_t>() + host.data_ptr<int64_t>()[0];
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: {{.*}}; no fix: `host` is written between the copy and the read (`zero_`) (the rewrite: `host` for `csum` in the read) [torch-sync-item]
}

// The code between the read and the copy may return first.
int64_t early_return(const torch::Tensor &csum) {
  int64_t total = csum[-1].item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: {{.*}}; no fix: the code between the read and the copy may leave the block at line [[@LINE+2]] before the copy (the rewrite: `host` declared before this statement, `host` for `csum` in the read) [torch-sync-item]
  if (total == 0)
    return 0;
  auto host = csum.cpu();
  return host.data_ptr<int64_t>()[0];
}

// The copy's name means something else between them.
int64_t name_taken(const torch::Tensor &csum, int64_t host) {
  int64_t total = csum[-1].item<int64_t>() + host;
  // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: {{.*}}; no fix: `host_copy` names something else between the read and the copy {{.*}} [torch-sync-item]
  {
    int64_t host_copy = total;
    total += host_copy;
  }
  auto host_copy = csum.cpu();
  return host_copy.data_ptr<int64_t>()[0];
}

// A read in a macro whose argument names the tensor: the argument is rewritten.
int64_t macro_argument(const torch::Tensor &csum) {
  auto host = csum.cpu();
  return LAST(csum) + host.data_ptr<int64_t>()[0];
  // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: {{.*}}; `csum` is also copied to the host at line [[@LINE-2]] (`host`): read the element from that copy (one wait fewer per call) [torch-sync-item]
}
// CHECK-FIXES: return LAST(host) + host.data_ptr<int64_t>()[0];

// A read whose tensor is spelled in the macro's body: the message only.
#define FIRST_OF_CSUM csum[0].item<int64_t>()
int64_t macro_body(const torch::Tensor &csum) {
  auto host = csum.cpu();
  return FIRST_OF_CSUM + host.data_ptr<int64_t>()[0];
  // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: {{.*}}; `csum` is also copied to the host at line [[@LINE-2]] (`host`): {{.*}}; no fix: a read is written in a macro (the rewrite: `host` for `csum` in the read) [torch-sync-item]
}

// --- not this shape: the usual finding ----------------------------------------
// A copy to another GPU, and a copy that converts the element type.
int64_t not_host_copies(const torch::Tensor &csum) {
  auto other = csum.to(torch::kCUDA);
  auto as_float = csum.to(torch::kFloat);
  return csum[0].item<int64_t>() + other.size(0) + as_float.size(0);
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: {{.*}}; true dependency: {{.*}}; if the host must decide, decide on the device instead (`torch::where`, masks) or read the value less often [torch-sync-item]
}

// A copy in another block (a branch) serves no read outside it.
int64_t other_block(const torch::Tensor &csum, bool dump) {
  if (dump) {
    auto host = csum.cpu();
    consume(host);
  }
  return csum[0].item<int64_t>();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: {{.*}}; true dependency: {{.*}}; if the host must decide, decide on the device instead (`torch::where`, masks) or read the value less often [torch-sync-item]
}

// A tensor made on the CPU: its read waits for nothing, no finding.
int64_t cpu_tensor(const std::vector<int64_t> &lengths) {
  auto csum = torch::tensor(lengths).cumsum(0);
  auto host = csum.cpu();
  return csum[-1].item<int64_t>() + host.size(0);
}

// A function template: fixed in its source (the analysed instantiation).
template <typename T> int64_t in_template(const T &csum) {
  auto host = csum.cpu();
  return csum[0].template item<int64_t>() + host.size(0);
  // CHECK-MESSAGES: :[[@LINE-1]]:27: warning: {{.*}}; `csum` is also copied to the host at line [[@LINE-2]] (`host`): read the element from that copy (one wait fewer per call) [torch-sync-item]
}
int64_t use_template(const torch::Tensor &t) { return in_template(t); }
// CHECK-FIXES: return host[0].template item<int64_t>() + host.size(0);
