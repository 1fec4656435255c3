// RUN: %check_torch_sync %s torch-sync-item %t -- %mock_flags
// Device knowledge follows tensors through calls of functions defined in the
// TU, tuples and structured bindings, vectors and range-for, C arrays, fields
// of classes defined in the main file, and lambdas.
#include <torch/torch.h>
#include <iostream>
#include <tuple>
#include <utility>
#include <vector>

static torch::Tensor make_gpu() { return torch::rand({4}, torch::kCUDA); }
static torch::Tensor make_cpu(int n) { return torch::zeros({n}); }
static torch::Tensor to_host(const torch::Tensor &t) { return t.cpu(); }
static torch::Tensor scaled(const torch::Tensor &t) { return t * 2; } // where `t` lives
static torch::Tensor either(bool c) { return c ? make_gpu() : make_cpu(1); }
std::pair<torch::Tensor, torch::Tensor> gpu_pair() { return {make_gpu(), make_gpu()}; }

struct Metrics { // defined in this file: every store into its fields is visible
  torch::Tensor total = torch::zeros({}, torch::kCUDA);
  torch::Tensor host_count;
  Metrics() : host_count(torch::zeros({})) {}
};
struct Batch {
  torch::Tensor data;
  torch::Tensor target;
};
struct Net : torch::nn::Module { // module.to(device) moves its tensors: unknown
  torch::Tensor weight = torch::zeros({4});
};

void calls(torch::Tensor param) {
  std::cout << make_gpu().sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: `item()` on a GPU tensor
  std::cout << make_cpu(3).sum().item<float>();  // CPU: no finding
  std::cout << to_host(make_gpu()).sum().item<float>();  // CPU: no finding
  std::cout << scaled(make_cpu(2)).sum().item<float>();  // CPU: no finding
  std::cout << scaled(make_gpu()).sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:41: warning: `item()` on a GPU tensor
  std::cout << scaled(param).sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:36: warning: `item()` on a tensor that may be on the GPU
  std::cout << either(true).sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:35: warning: `item()` on a tensor that may be on the GPU
  auto to_gpu = [](const torch::Tensor &t) { return t.cuda(); };
  std::cout << to_gpu(make_cpu(1)).sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:42: warning: `item()` on a GPU tensor
}

void tuples() {
  auto x = torch::rand({4, 4}, torch::kCUDA);
  auto h = x.cpu();
  auto [values, indices] = x.max(1);
  std::cout << values.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `item()` on a GPU tensor
  auto [host_values, host_indices] = torch::max(h, 1);
  std::cout << host_indices.sum().item<int64_t>();  // CPU: no finding
  auto sorted = torch::sort(h);
  std::cout << std::get<0>(sorted).sum().item<float>();  // CPU: no finding
  auto mixed = std::make_tuple(h, x);
  std::cout << std::get<0>(mixed).sum().item<float>();  // CPU: no finding
  std::cout << std::get<1>(mixed).sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:41: warning: `item()` on a GPU tensor
  auto pair = gpu_pair();
  std::cout << pair.first.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: `item()` on a GPU tensor
  auto [first, second] = gpu_pair();
  std::cout << second.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `item()` on a GPU tensor
}

void vectors(std::vector<torch::Tensor> &from_caller) {
  auto x = torch::rand({4}, torch::kCUDA);
  auto h = torch::rand({4});
  std::vector<torch::Tensor> host_chunks = h.chunk(2);
  std::cout << host_chunks[0].sum().item<float>();  // CPU: no finding
  std::vector<torch::Tensor> gpu_chunks = x.chunk(2);
  std::cout << gpu_chunks.at(1).sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:39: warning: `item()` on a GPU tensor
  std::vector<torch::Tensor> host_list;
  host_list.push_back(h);
  host_list.emplace_back(h * 2);
  for (const auto &t : host_list)
    std::cout << t.sum().item<float>();  // CPU: no finding
  std::vector<torch::Tensor> gpu_list = {x, x * 2};
  for (auto t : gpu_list)
    std::cout << t.sum().item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:26: warning: `item()` on a GPU tensor
  for (auto &t : from_caller)
    std::cout << t.sum().item<float>();
    // CHECK-MESSAGES: :[[@LINE-1]]:26: warning: `item()` on a tensor that may be on the GPU
  torch::Tensor pair_of[2] = {h, h};
  std::cout << pair_of[1].sum().item<float>();  // CPU: no finding
  for (const auto &t : {h, h})
    std::cout << t.sum().item<float>();  // CPU: no finding
  std::vector<torch::Tensor> moved = {h};
  for (auto &t : moved)
    t = t.cuda();
  std::cout << moved[0].sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:31: warning: `item()` on a tensor that may be on the GPU
  std::vector<torch::Tensor> overwritten = {h};
  overwritten[0] = x;
  std::cout << overwritten.front().sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:42: warning: `item()` on a tensor that may be on the GPU
}

void members(Net &net) {
  Metrics m;
  std::cout << m.total.item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:24: warning: `item()` on a GPU tensor
  std::cout << m.host_count.item<float>();  // CPU: no finding
  auto h = torch::rand({4});
  Batch batch{h, h.cuda()};
  std::cout << batch.data.sum().item<float>();  // CPU: no finding
  std::cout << batch.target.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:35: warning: `item()` on a GPU tensor
  auto [data, target] = batch;
  std::cout << data.sum().item<float>();  // CPU: no finding
  std::cout << net.weight.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: `item()` on a tensor that may be on the GPU
}

void lambdas() {
  auto g = torch::rand({2}, torch::kCUDA);
  auto h = torch::rand({2});
  auto report_gpu = [&]() { std::cout << g.sum().item<float>(); };
  // CHECK-MESSAGES: :[[@LINE-1]]:50: warning: `item()` on a GPU tensor
  auto report_cpu = [=]() { std::cout << h.sum().item<float>(); };  // CPU: no finding
  report_gpu();
  report_cpu();
}

// A host value times a tensor is a product on the tensor's device, not a
// dereference of a container: `0.1 * cpu_tensor` stays on the CPU.
void scaled_by_host_values() {
  auto q = torch::randn({8});
  auto scaled = 0.1 * q;
  auto noisy = 2.0 * torch::randn({8}) + q;
  std::cout << scaled.sum().item<float>() << noisy.sum().item<float>(); // CPU: no finding
  auto g = torch::randn({8}, torch::kCUDA);
  auto on_gpu = 0.5 * g;
  std::cout << on_gpu.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:29: warning: `item()` on a GPU tensor
}

// Container fields of the program's own classes hold what its member functions put
// there (issue 13: a CPU feature store built from torch::tensor rows was reported);
// torch::stack of such a field computes where its elements are.
class HostRows {
public:
  void put(const std::vector<float> &row) { rows_.push_back(torch::tensor(row)); }
  torch::Tensor all() const { return torch::stack(rows_); }

private:
  std::vector<torch::Tensor> rows_;
};
class DeviceRows {
public:
  void put(const torch::Tensor &row) { rows_.push_back(row.cuda()); }
  torch::Tensor all() const { return torch::stack(rows_); }

private:
  std::vector<torch::Tensor> rows_;
};
void container_fields(HostRows &host, DeviceRows &gpu) {
  std::cout << host.all().sum().item<float>();  // CPU: no finding
  std::cout << gpu.all().sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: `item()` on a GPU tensor
  // A defaulted `const std::optional<Tensor> &weight = {}` is no operand.
  auto logits = torch::rand({4, 3});
  auto target = torch::zeros({4}, torch::kLong);
  std::cout << torch::cross_entropy_loss(logits, target).item<float>();  // CPU: no finding
  std::cout << torch::cross_entropy_loss(logits.cuda(), target.cuda()).item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:72: warning: `item()` on a GPU tensor
}

// Issue 21: `accessor<T, N>()` requires a CPU tensor: a variable the function
// reads through one (and never reassigns) is on the CPU. A reassigned one is not.
float read_with_accessor(torch::Tensor image) {
  auto pixels = image.accessor<float, 2>();
  (void)pixels;
  return image.sum().item<float>();
}
float accessor_then_reassigned(torch::Tensor image, torch::Device device) {
  auto pixels = image.accessor<float, 2>();
  (void)pixels;
  image = image.to(device);
  return image.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: `item()` on a tensor that may be on the GPU
}
float without_accessor(torch::Tensor image) {
  return image.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: `item()` on a tensor that may be on the GPU
}

// Issue 21: `std::tie(x, y) = f()` gives x and y f's elements (not "unknown,
// passed by reference"); a reassigned structured binding has the value that
// reaches the use.
static std::tuple<torch::Tensor, torch::Tensor> cpu_batch() { return {torch::rand({4}), torch::rand({4})}; }
static std::tuple<torch::Tensor, torch::Tensor> gpu_batch() {
  return {torch::rand({4}, torch::kCUDA), torch::rand({4}, torch::kCUDA)};
}
float tied_batches() {
  torch::Tensor x, y;
  std::tie(x, y) = cpu_batch();
  float sum = x.sum().item<float>() + y.sum().item<float>();  // CPU: no finding
  std::tie(x, std::ignore) = gpu_batch();
  sum += x.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `item()` on a GPU tensor
  sum += y.sum().item<float>();                               // still the CPU one: no finding
  return sum;
}
float tie_kept_for_later() {
  torch::Tensor x, y;
  auto both = std::tie(x, y);
  both = gpu_batch();
  return x.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:18: warning: `item()` on a tensor that may be on the GPU
}
float rebound_bindings(torch::Tensor input) {
  auto [a, b] = std::make_tuple(input, input + 1);
  b = b.cpu();
  float host = b.item<float>();                    // CPU after the reassignment: no finding
  auto [c, d] = cpu_batch();
  d = d.cuda();
  return host + c.sum().item<float>() + d.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:49: warning: `item()` on a GPU tensor
}

// A module built here from sizes holds CPU parameters until something moves it.
float fresh_module_parameters(torch::Tensor x) {
  torch::nn::Linear fresh(3, 4);
  float total = fresh->weight.sum().item<float>();   // CPU: no finding
  for (const auto &p : fresh->parameters())
    total += p.sum().item<float>();                   // CPU: no finding
  torch::nn::Linear moved(3, 4);
  moved->to(torch::kCUDA);
  total += moved->weight.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:32: warning: `item()` on a tensor that may be on the GPU
  torch::nn::Linear assigned(3, 4);
  assigned->bias = x;
  total += assigned->bias.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:33: warning: `item()` on a tensor that may be on the GPU
  return total;
}

// `new_zeros`/`*_like` of a CPU tensor, `from_blob` and `empty` are CPU tensors.
float made_like_cpu(float *data) {
  auto base = torch::rand({3});
  float sum = base.new_zeros({3}).sum().item<float>() + torch::rand_like(base).sum().item<float>() +
              torch::empty_like(base).sum().item<float>();                  // CPU: no finding
  sum += torch::from_blob(data, {3}).sum().item<float>() + torch::empty({3}).sum().item<float>();
  auto gpu = torch::rand({3}, torch::kCUDA);
  sum += torch::rand_like(gpu).sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:38: warning: `item()` on a GPU tensor
  sum += base.new_zeros({3}, torch::kCUDA).sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:50: warning: `item()` on a GPU tensor
  return sum;
}

// Issue 43: `new_*`, `*_like` and `to` make their result on the source tensor's device
// unless their options name one (LibTorch's rule). A dtype, `TensorOptions(kDouble)`,
// `dtype(..).requires_grad(..)`, an options variable without a device and `x.options()`
// (x's own device) name none; sizes and fill values that are parameters of the function
// say nothing of a device either.
double like_a_cpu_source(const std::vector<int64_t> &sizes, double fill, torch::Dtype dt, int64_t n) {
  auto x = torch::rand({3});
  auto opts = torch::TensorOptions(torch::kDouble);
  double s = x.new_zeros({n, 2}, torch::TensorOptions(torch::kDouble)).sum().item<double>();
  s += torch::rand_like(x, opts).sum().item<double>() + torch::zeros_like(x, opts).sum().item<double>();
  s += x.new_empty(sizes, opts).sum().item<double>() + x.new_full(sizes, fill).sum().item<double>();
  s += x.new_ones({n}, torch::dtype(torch::kFloat).requires_grad(true)).sum().item<double>();
  s += x.new_zeros(sizes, x.options()).sum().item<double>();
  s += torch::full_like(x, fill, x.options().dtype(torch::kLong)).sum().item<double>();
  s += x.to(torch::kDouble).sum().item<double>() + x.to(dt).sum().item<double>() + x.to(opts).sum().item<double>();
  s += x.new_zeros(sizes, dt, c10::nullopt, c10::nullopt, c10::nullopt).sum().item<double>();
  s += torch::zeros({n}, x.options()).sum().item<double>() + torch::ones_like(x, dt).sum().item<double>();
  auto host = torch::zeros({3});
  return s + x.to(host).sum().item<double>();  // CPU throughout: no finding
}
double like_a_gpu_source(const std::vector<int64_t> &sizes, double fill, torch::Dtype dt) {
  auto g = torch::rand({3}, torch::kCUDA);
  auto opts = torch::TensorOptions(torch::kDouble);
  double s = g.new_zeros({2}, torch::TensorOptions(torch::kDouble)).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:75: warning: `item()` on a GPU tensor
  s += torch::rand_like(g, opts).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:40: warning: `item()` on a GPU tensor
  s += g.new_full(sizes, fill).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:38: warning: `item()` on a GPU tensor
  s += g.to(dt).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:23: warning: `item()` on a GPU tensor
  s += g.new_empty(sizes, g.options().dtype(torch::kLong)).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:66: warning: `item()` on a GPU tensor
  return s + torch::zeros({2}, g.options()).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:51: warning: `item()` on a GPU tensor
}
// Options that name a device win over the source's, both ways.
double options_name_the_device(const std::vector<int64_t> &sizes, torch::Dtype dt) {
  auto x = torch::rand({3});
  auto g = torch::rand({3}, torch::kCUDA);
  double s = x.new_zeros({2}, torch::device(torch::kCUDA)).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:66: warning: `item()` on a GPU tensor
  s += torch::zeros_like(x, x.options().device(torch::kCUDA)).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:69: warning: `item()` on a GPU tensor
  s += x.new_zeros(sizes, dt, c10::nullopt, torch::Device(torch::kCUDA), c10::nullopt).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:94: warning: `item()` on a GPU tensor
  auto on_g = x.to(g);
  s += on_g.sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:19: warning: `item()` on a GPU tensor
  s += g.new_zeros({2}, torch::device(torch::kCPU)).sum().item<double>();            // CPU: no finding
  s += torch::zeros_like(g, g.options().device(torch::kCPU)).sum().item<double>();  // CPU: no finding
  s += torch::rand_like(g, torch::dtype(torch::kFloat).device(torch::kCPU)).sum().item<double>();  // CPU
  return s + g.to(x).sum().item<double>();  // to(other): x's device, the CPU: no finding
}
// Options the function cannot see into (a parameter) leave the device unknown.
double options_from_the_caller(torch::TensorOptions opts) {
  auto x = torch::rand({3});
  double s = torch::zeros_like(x, opts).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:47: warning: `item()` on a tensor that may be on the GPU
  return s + x.new_zeros({2}, opts).sum().item<double>();
  // CHECK-MESSAGES: :[[@LINE-1]]:43: warning: `item()` on a tensor that may be on the GPU
}
