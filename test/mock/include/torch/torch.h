// Mock LibTorch for fast lit tests. It mirrors the shape of the real
// declarations the matchers look at (namespaces c10/at/torch, at::TensorBase
// and at::Tensor, `using namespace at` in torch, TensorOptions' implicit
// constructors, defaulted non_blocking parameters) so that a matcher cannot
// tell it from LibTorch. Only declarations: nothing here is ever linked.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <torch/version.h>

namespace c10 {
template <typename T> using optional = std::optional<T>;
using std::nullopt;

// c10/core/List.h: what index_put_'s accumulating overload takes.
template <typename T> class List {
public:
  List();
  List(std::initializer_list<T> values);
};

template <typename T> class ArrayRef {
public:
  ArrayRef() = default;
  ArrayRef(const T &one);
  ArrayRef(std::initializer_list<T> list);
  ArrayRef(const std::vector<T> &vec);
  ArrayRef(const T *data, size_t length);
  const T *begin() const;
  const T *end() const;
  size_t size() const;
};
using IntArrayRef = ArrayRef<int64_t>;

enum class DeviceType : int8_t { CPU = 0, CUDA = 1, MKLDNN = 2, HIP = 6, MPS = 13, Meta = 14, XPU = 12 };
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
constexpr DeviceType kHIP = DeviceType::HIP;
constexpr DeviceType kMPS = DeviceType::MPS;
constexpr DeviceType kMeta = DeviceType::Meta;
using DeviceIndex = int8_t;

struct Device {
  /* implicit */ Device(DeviceType type, DeviceIndex index = -1);
  /* implicit */ Device(const std::string &device_string);
  DeviceType type() const noexcept;
  DeviceIndex index() const noexcept;
  bool is_cuda() const noexcept;
  bool is_cpu() const noexcept;
  std::string str() const;
  bool operator==(const Device &other) const noexcept;
  bool operator!=(const Device &other) const noexcept;
};

enum class ScalarType : int8_t { Byte, Char, Short, Int, Long, Half, Float, Double, Bool = 11, BFloat16 = 15 };
constexpr auto kByte = ScalarType::Byte;
constexpr auto kInt = ScalarType::Int;
constexpr auto kLong = ScalarType::Long;
constexpr auto kHalf = ScalarType::Half;
constexpr auto kFloat = ScalarType::Float;
constexpr auto kDouble = ScalarType::Double;
constexpr auto kBool = ScalarType::Bool;
constexpr auto kBFloat16 = ScalarType::BFloat16;
enum class Layout : int8_t { Strided, Sparse };
enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast };

struct TensorOptions {
  TensorOptions() noexcept;
  /* implicit */ TensorOptions(Layout layout);
  template <typename... Args,
            typename = std::enable_if_t<std::is_constructible_v<Device, Args &&...>>>
  /* implicit */ TensorOptions(Args &&...args) : TensorOptions(Device(std::forward<Args>(args)...)) {}
  /* implicit */ TensorOptions(ScalarType dtype);
  /* implicit */ TensorOptions(MemoryFormat memory_format);
  [[nodiscard]] TensorOptions device(optional<Device> device) const noexcept;
  template <typename... Args>
  [[nodiscard]] TensorOptions device(Args &&...args) const noexcept;
  [[nodiscard]] TensorOptions device_index(DeviceIndex device_index) const noexcept;
  [[nodiscard]] TensorOptions dtype(optional<ScalarType> dtype) const noexcept;
  [[nodiscard]] TensorOptions layout(optional<Layout> layout) const noexcept;
  [[nodiscard]] TensorOptions requires_grad(optional<bool> requires_grad) const noexcept;
  [[nodiscard]] TensorOptions pinned_memory(optional<bool> pinned_memory) const noexcept;
  Device device() const noexcept;
  bool requires_grad() const noexcept;
};
inline TensorOptions dtype(ScalarType dtype) { return TensorOptions().dtype(dtype); }
inline TensorOptions device(Device device) { return TensorOptions().device(device); }
inline TensorOptions requires_grad(bool requires_grad = true) { return TensorOptions().requires_grad(requires_grad); }

class Scalar {
public:
  Scalar(double v);
  Scalar(float v);
  Scalar(int v);
  Scalar(int64_t v);
  Scalar(bool v);
  template <typename T> T to() const;
  double toDouble() const;
  float toFloat() const;
  int64_t toLong() const;
  int toInt() const;
  bool toBool() const;
};
} // namespace c10

namespace at {
using namespace c10;
class Tensor;
namespace indexing {
struct Slice {
  Slice(optional<int64_t> start = nullopt, optional<int64_t> stop = nullopt, optional<int64_t> step = nullopt);
};
struct TensorIndex {
  TensorIndex(int64_t integer);
  TensorIndex(int integer);
  TensorIndex(Slice slice);
  TensorIndex(const Tensor &tensor);
  TensorIndex(std::nullopt_t);
};
} // namespace indexing

template <typename T, size_t N> class TensorAccessor {
public:
  T &operator[](int64_t i);
};

class TensorBase {
public:
  TensorBase() = default;
  TensorBase(const TensorBase &) = default;
  TensorBase(TensorBase &&) noexcept = default;
  TensorBase &operator=(const TensorBase &) &;
  Device device() const;
  TensorOptions options() const;
  ScalarType scalar_type() const;
  bool is_cuda() const;
  bool is_cpu() const;
  int64_t get_device() const;
  bool defined() const;
  IntArrayRef sizes() const;
  int64_t size(int64_t dim) const;
  int64_t dim() const;
  int64_t numel() const;
  template <typename T> T *data_ptr() const;
  template <typename T> const T *const_data_ptr() const;
  void *data_ptr() const;
  template <typename T, size_t N> TensorAccessor<T, N> accessor() const &;
  std::string toString() const;
  void print() const;
};

class Tensor : public TensorBase {
public:
  Tensor() = default;
  Tensor(const Tensor &) = default;
  Tensor(Tensor &&) = default;
  Tensor &operator=(const Tensor &) &;
  Tensor &operator=(Tensor &&) &;
  Tensor &operator=(const Scalar &v) &&;
  Tensor &operator=(const Tensor &) &&;

  template <typename T> T item() const;
  Scalar item() const;
  Tensor cpu() const { return to(options().device(DeviceType::CPU), /*non_blocking*/ false, /*copy*/ false); }
  Tensor cuda() const { return to(options().device(DeviceType::CUDA), /*non_blocking*/ false, /*copy*/ false); }
  Tensor to(TensorOptions options = {}, bool non_blocking = false, bool copy = false,
            optional<MemoryFormat> memory_format = nullopt) const;
  Tensor to(optional<ScalarType> dtype, optional<Layout> layout, optional<Device> device,
            optional<bool> pin_memory, bool non_blocking, bool copy,
            optional<MemoryFormat> memory_format) const;
  Tensor to(Device device, ScalarType dtype, bool non_blocking = false, bool copy = false,
            optional<MemoryFormat> memory_format = nullopt) const;
  Tensor to(ScalarType dtype, bool non_blocking = false, bool copy = false,
            optional<MemoryFormat> memory_format = nullopt) const;
  Tensor to(const Tensor &other, bool non_blocking = false, bool copy = false,
            optional<MemoryFormat> memory_format = nullopt) const;
  Tensor &copy_(const Tensor &src, bool non_blocking = false) const;
  Tensor pin_memory(optional<Device> device = nullopt) const;
  Tensor detach() const;
  Tensor clone() const;
  Tensor contiguous() const;
  Tensor sum() const;
  Tensor cumsum(int64_t dim) const;
  // TensorBody.h (1.13 and 2.11): each `new_*` with options and unpacked.
  Tensor new_empty(IntArrayRef size, TensorOptions options = {}) const;
  Tensor new_empty(IntArrayRef size, optional<ScalarType> dtype, optional<Layout> layout, optional<Device> device,
                   optional<bool> pin_memory) const;
  Tensor new_full(IntArrayRef size, const Scalar &fill_value, TensorOptions options = {}) const;
  Tensor new_full(IntArrayRef size, const Scalar &fill_value, optional<ScalarType> dtype, optional<Layout> layout,
                  optional<Device> device, optional<bool> pin_memory) const;
  Tensor new_zeros(IntArrayRef size, TensorOptions options = {}) const;
  Tensor new_zeros(IntArrayRef size, optional<ScalarType> dtype, optional<Layout> layout, optional<Device> device,
                   optional<bool> pin_memory) const;
  Tensor new_ones(IntArrayRef size, TensorOptions options = {}) const;
  Tensor new_ones(IntArrayRef size, optional<ScalarType> dtype, optional<Layout> layout, optional<Device> device,
                  optional<bool> pin_memory) const;
  Tensor sum(IntArrayRef dim, bool keepdim = false) const;
  Tensor mean() const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor min() const;
  Tensor abs() const;
  Tensor sqrt() const;
  Tensor norm() const;
  Tensor argmax(optional<int64_t> dim = nullopt, bool keepdim = false) const;
  Tensor eq(const Tensor &other) const;
  Tensor eq(const Scalar &other) const;
  Tensor gt(const Scalar &other) const;
  Tensor lt(const Scalar &other) const;
  Tensor any() const;
  Tensor all() const;
  Tensor add(const Tensor &other, const Scalar &alpha = 1) const;
  Tensor mul(const Tensor &other) const;
  Tensor mul(const Scalar &other) const;
  Tensor view(IntArrayRef size) const;
  Tensor view(ScalarType dtype) const;
  Tensor reshape(IntArrayRef size) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze(int64_t dim) const;
  Tensor relu() const;
  Tensor index(ArrayRef<indexing::TensorIndex> indices) const;
  Tensor &index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor &rhs);
  Tensor &index_put_(ArrayRef<indexing::TensorIndex> indices, const Scalar &v);
  Tensor &index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor &rhs);
  Tensor &index_put_(std::initializer_list<indexing::TensorIndex> indices, const Scalar &v);
  // The generated ATen overloads (TensorBody.h): `accumulate` adds into x.
  Tensor &index_put_(const List<optional<Tensor>> &indices, const Tensor &values, bool accumulate = false) const;
  Tensor index_put(const List<optional<Tensor>> &indices, const Tensor &values, bool accumulate = false) const;
  Tensor &index_add_(int64_t dim, const Tensor &index, const Tensor &source) const;
  Tensor multinomial(int64_t num_samples, bool replacement = false) const;
  Tensor exponential_(double lambd = 1) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  Tensor masked_select(const Tensor &mask) const;
  Tensor &masked_fill_(const Tensor &mask, const Scalar &value) const;
  Tensor &masked_fill_(const Tensor &mask, const Tensor &value) const;
  Tensor &masked_scatter_(const Tensor &mask, const Tensor &source) const;
  Tensor index_select(int64_t dim, const Tensor &index) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim = 0, optional<int64_t> start = nullopt, optional<int64_t> end = nullopt, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  bool is_pinned(optional<Device> device = nullopt) const;
  Tensor nonzero() const;
  Tensor bincount(const optional<Tensor> &weights = {}, int64_t minlength = 0) const;
  Tensor histc(int64_t bins = 100, const Scalar &min = 0, const Scalar &max = 0) const;
  Tensor repeat_interleave(const Tensor &repeats, optional<int64_t> dim = nullopt,
                           optional<int64_t> output_size = nullopt) const;
  bool is_nonzero() const;
  bool equal(const Tensor &other) const;
  bool allclose(const Tensor &other, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false) const;
  Tensor norm(const Scalar &p) const;
  Tensor clamp_max(const Scalar &max) const;
  Tensor pow(const Scalar &exponent) const;
  Tensor amax(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor inverse() const;
  Tensor cholesky(bool upper = false) const;
  Tensor isnan() const;
  Tensor logical_not() const;
  Tensor argmin(optional<int64_t> dim = nullopt, bool keepdim = false) const;
  Tensor isfinite() const;
  Tensor logical_and(const Tensor &other) const;
  Tensor ge(const Scalar &other) const;
  Tensor &add_(const Tensor &other, const Scalar &alpha = 1) const;
  Tensor &mul_(const Scalar &other) const;
  Tensor &mul_(const Tensor &other) const;
  Tensor &zero_() const;
  Tensor &fill_(const Scalar &value) const;
  Tensor operator[](int64_t index) const;
  Tensor &operator+=(const Tensor &other) const;
  Tensor &operator+=(const Scalar &other) const;
  void backward() const;
  const Tensor &grad() const;
  bool requires_grad() const;
};

Tensor operator+(const Tensor &a, const Tensor &b);
Tensor operator+(const Tensor &a, const Scalar &b);
Tensor operator-(const Tensor &a, const Tensor &b);
Tensor operator-(const Tensor &a, const Scalar &b);
Tensor operator*(const Tensor &a, const Tensor &b);
Tensor operator*(const Tensor &a, const Scalar &b);
Tensor operator*(const Scalar &a, const Tensor &b);
Tensor operator/(const Tensor &a, const Tensor &b);
Tensor operator/(const Tensor &a, const Scalar &b);
Tensor operator/(const Scalar &a, const Tensor &b);
Tensor operator>(const Tensor &a, const Scalar &b);
Tensor operator<(const Tensor &a, const Scalar &b);
Tensor operator==(const Tensor &a, const Tensor &b);
std::ostream &operator<<(std::ostream &out, const Tensor &t);
using TensorList = ArrayRef<Tensor>;

Tensor zeros(IntArrayRef size, TensorOptions options = {});
Tensor ones(IntArrayRef size, TensorOptions options = {});
Tensor empty(IntArrayRef size, TensorOptions options = {}, optional<MemoryFormat> memory_format = nullopt);
Tensor full(IntArrayRef size, const Scalar &fill_value, TensorOptions options = {});
Tensor rand(IntArrayRef size, TensorOptions options = {});
Tensor randn(IntArrayRef size, TensorOptions options = {});
Tensor arange(const Scalar &end, TensorOptions options = {});
Tensor zeros_like(const Tensor &self, TensorOptions options = {}, optional<MemoryFormat> memory_format = nullopt);
Tensor rand_like(const Tensor &self, TensorOptions options = {}, optional<MemoryFormat> memory_format = nullopt);
Tensor empty_like(const Tensor &self, TensorOptions options = {}, optional<MemoryFormat> memory_format = nullopt);
Tensor zeros_like(const Tensor &self, optional<ScalarType> dtype, optional<Layout> layout, optional<Device> device,
                  optional<bool> pin_memory, optional<MemoryFormat> memory_format);
Tensor ones_like(const Tensor &self, TensorOptions options = {}, optional<MemoryFormat> memory_format = nullopt);
Tensor full_like(const Tensor &self, const Scalar &fill_value, TensorOptions options = {},
                 optional<MemoryFormat> memory_format = nullopt);
Tensor randn_like(const Tensor &self, TensorOptions options = {}, optional<MemoryFormat> memory_format = nullopt);
Tensor from_blob(void *data, IntArrayRef sizes, const TensorOptions &options = TensorOptions());
Scalar _local_scalar_dense(const Tensor &self);
Tensor matmul(const Tensor &self, const Tensor &other);
std::tuple<Tensor, Tensor> max(const Tensor &self, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> sort(const Tensor &self, int64_t dim = -1, bool descending = false);
Tensor cat(TensorList tensors, int64_t dim = 0);
Tensor stack(TensorList tensors, int64_t dim = 0);
std::vector<Tensor> _foreach_norm(TensorList tensors, const Scalar &ord = 2);
Tensor where(const Tensor &condition, const Tensor &self, const Tensor &other);
Tensor where(const Tensor &condition, const Tensor &self, const Scalar &other);
std::vector<Tensor> where(const Tensor &condition);
Tensor masked_select(const Tensor &self, const Tensor &mask);
Tensor nonzero(const Tensor &self);
Tensor nonzero_static(const Tensor &self, int64_t size, int64_t fill_value = -1);
Tensor argwhere(const Tensor &self);
std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor &self, bool sorted = true, bool return_inverse = false, bool return_counts = false);
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor &self, bool return_inverse = false, bool return_counts = false, optional<int64_t> dim = nullopt);
Tensor repeat_interleave(const Tensor &repeats, optional<int64_t> output_size = nullopt);
bool equal(const Tensor &self, const Tensor &other);
bool allclose(const Tensor &self, const Tensor &other, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false);
Tensor linalg_inv(const Tensor &A);
Tensor linalg_solve(const Tensor &A, const Tensor &B, bool left = true);
std::tuple<Tensor, Tensor> linalg_solve_ex(const Tensor &A, const Tensor &B, bool left = true, bool check_errors = false);
std::tuple<Tensor, Tensor> linalg_inv_ex(const Tensor &A, bool check_errors = false);
Tensor linalg_cholesky(const Tensor &self, bool upper = false);
std::tuple<Tensor, Tensor> linalg_cholesky_ex(const Tensor &self, bool upper = false, bool check_errors = false);
std::tuple<Tensor, Tensor> linalg_lu_factor(const Tensor &A, bool pivot = true);
void _assert_async(const Tensor &self);
void _assert_async(const Tensor &self, const char *assert_msg);
Tensor sigmoid(const Tensor &self);
Tensor tanh(const Tensor &self);
Tensor sin(const Tensor &self);
Tensor clamp(const Tensor &self, const optional<Scalar> &min, const optional<Scalar> &max = nullopt);
Tensor relu(const Tensor &self);
Tensor softmax(const Tensor &self, int64_t dim, optional<ScalarType> dtype = nullopt);
Tensor log_softmax(const Tensor &self, int64_t dim, optional<ScalarType> dtype = nullopt);
Tensor cross_entropy_loss(const Tensor &self, const Tensor &target, const optional<Tensor> &weight = {},
                          int64_t reduction = 1, int64_t ignore_index = -100, double label_smoothing = 0.0);
Tensor mse_loss(const Tensor &self, const Tensor &target);
Tensor multinomial(const Tensor &self, int64_t num_samples, bool replacement = false);
} // namespace at

namespace torch {
using namespace at;
using at::Tensor;
using Dtype = at::ScalarType;
using Device = c10::Device;
// The autograd-aware factories of torch/csrc/autograd/generated/variable_factories.h.
inline at::Tensor zeros(at::IntArrayRef size, at::TensorOptions options = {});
inline at::Tensor ones(at::IntArrayRef size, at::TensorOptions options = {});
inline at::Tensor empty(at::IntArrayRef size, at::TensorOptions options = {}, c10::optional<at::MemoryFormat> memory_format = c10::nullopt);
inline at::Tensor full(at::IntArrayRef size, const at::Scalar &fill_value, at::TensorOptions options = {});
inline at::Tensor rand(at::IntArrayRef size, at::TensorOptions options = {});
inline at::Tensor randn(at::IntArrayRef size, at::TensorOptions options = {});
inline at::Tensor randint(int64_t high, at::IntArrayRef size, at::TensorOptions options = at::kLong);
inline at::Tensor arange(const at::Scalar &end, at::TensorOptions options = {});
inline at::Tensor linspace(const at::Scalar &start, const at::Scalar &end, int64_t steps, at::TensorOptions options = {});
inline at::Tensor eye(int64_t n, at::TensorOptions options = {});
inline at::Tensor zeros_like(const at::Tensor &self, at::TensorOptions options = {}, c10::optional<at::MemoryFormat> memory_format = c10::nullopt);
inline at::Tensor rand_like(const at::Tensor &self, at::TensorOptions options = {}, c10::optional<at::MemoryFormat> memory_format = c10::nullopt);
inline at::Tensor empty_like(const at::Tensor &self, at::TensorOptions options = {}, c10::optional<at::MemoryFormat> memory_format = c10::nullopt);
inline at::Tensor ones_like(const at::Tensor &self, at::TensorOptions options = {}, c10::optional<at::MemoryFormat> memory_format = c10::nullopt);
inline at::Tensor full_like(const at::Tensor &self, const at::Scalar &fill_value, at::TensorOptions options = {}, c10::optional<at::MemoryFormat> memory_format = c10::nullopt);
inline at::Tensor randn_like(const at::Tensor &self, at::TensorOptions options = {}, c10::optional<at::MemoryFormat> memory_format = c10::nullopt);
inline at::Tensor scalar_tensor(const at::Scalar &s, at::TensorOptions options = {});
inline at::Tensor randint(int64_t low, int64_t high, at::IntArrayRef size, at::TensorOptions options = at::kLong);
inline at::Tensor from_blob(void *data, at::IntArrayRef sizes, const at::TensorOptions &options = at::TensorOptions());
namespace detail {
// As in torch/csrc/api/include/torch/detail/TensorDataContainer.h.
class TensorDataContainer {
public:
  TensorDataContainer();
  TensorDataContainer(double value);
  TensorDataContainer(float value);
  TensorDataContainer(int64_t value);
  TensorDataContainer(int value);
  TensorDataContainer(bool value);
  TensorDataContainer(std::initializer_list<TensorDataContainer> init_list);
  template <typename T> TensorDataContainer(at::ArrayRef<T> values);
  template <typename T> TensorDataContainer(const std::vector<T> &values);
};
} // namespace detail
inline at::Tensor tensor(detail::TensorDataContainer tensor_data_container, const at::TensorOptions &options = {});

void manual_seed(uint64_t seed);
namespace cuda {
bool is_available();
int64_t device_count();
void synchronize(int64_t device_index = -1);
} // namespace cuda

namespace nn {
class Module {
public:
  virtual ~Module() = default;
  virtual void to(torch::Device device, torch::Dtype dtype, bool non_blocking = false);
  virtual void to(torch::Dtype dtype, bool non_blocking = false);
  virtual void to(torch::Device device, bool non_blocking = false);
  std::vector<at::Tensor> parameters(bool recurse = true) const;
  void train(bool on = true);
  void eval();
};
struct LinearImpl : Module {
  LinearImpl(int64_t in, int64_t out);
  at::Tensor forward(const at::Tensor &input);
  at::Tensor weight;
  at::Tensor bias;
};
struct Linear {
  Linear(int64_t in, int64_t out);
  LinearImpl *operator->();
};
namespace functional {
at::Tensor cross_entropy(const at::Tensor &input, const at::Tensor &target);
at::Tensor relu(const at::Tensor &input);
} // namespace functional
namespace utils {
double clip_grad_norm_(const std::vector<at::Tensor> &parameters, double max_norm, double norm_type = 2.0, bool error_if_nonfinite = false);
void clip_grad_value_(const std::vector<at::Tensor> &parameters, double clip_value);
} // namespace utils
} // namespace nn

namespace jit {
// torch::jit::Module (torch/csrc/jit/api/module.h): a TorchScript module.
struct Module {
  void to(torch::Device device, torch::Dtype dtype, bool non_blocking = false);
  void to(torch::Dtype dtype, bool non_blocking = false);
  void to(torch::Device device, bool non_blocking = false);
  void eval();
};
Module load(const std::string &filename);
} // namespace jit

// torch/serialize.h: writes tensors or a module to a file or stream.
template <typename Value, typename... SaveToArgs> void save(const Value &value, SaveToArgs &&...args);
template <typename... SaveToArgs> void save(const std::vector<at::Tensor> &tensor_vec, SaveToArgs &&...args);

namespace optim {
struct SGDOptions {
  SGDOptions(double lr);
  SGDOptions &momentum(double value);
  SGDOptions &weight_decay(double value);
};
struct AdamOptions {
  AdamOptions(double lr = 1e-3);
};
class Optimizer {
public:
  void zero_grad(bool set_to_none = true);
  at::Tensor step();
};
class SGD : public Optimizer {
public:
  SGD(const std::vector<at::Tensor> &params, SGDOptions options);
};
class Adam : public Optimizer {
public:
  Adam(const std::vector<at::Tensor> &params, AdamOptions options = {});
};
} // namespace optim

namespace data {
template <typename Data = at::Tensor, typename Target = at::Tensor> struct Example {
  Data data;
  Target target;
};
} // namespace data
struct NoGradGuard { NoGradGuard(); ~NoGradGuard(); };
} // namespace torch
// c10/util/Exception.h: TORCH_CHECK evaluates its condition on the host.
// c10/util/Exception.h: the assertion calls a noreturn function when the
// condition fails (as TORCH_CHECK does in the real headers).
namespace c10::detail {
[[noreturn]] void torchInternalAssertFail(const char *func, const char *file, unsigned line, const char *msg);
}
#define TORCH_INTERNAL_ASSERT(cond, ...)                                                           \
  if (__builtin_expect(static_cast<bool>(!(cond)), 0)) {                                          \
    ::c10::detail::torchInternalAssertFail(__func__, __FILE__, __LINE__, #cond);                   \
  }
#define TORCH_CHECK(cond, ...)                                                                     \
  if (!(cond)) {                                                                                   \
    throw 0;                                                                                       \
  }
