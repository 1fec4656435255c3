// Mock of <torch/library.h> for lit tests: the operator registration macros
// (expanded as LibTorch 2.x expands them: a TorchLibraryInit per block) and
// the dispatcher's typed operator handles. Declarations only.
#pragma once
#include <torch/torch.h>
#include <cstdint>
#include <optional>
#include <type_traits>

namespace c10 {
enum class DispatchKey : uint16_t { Undefined, CPU, CUDA, Autograd, CompositeImplicitAutograd, Meta };

template <class FuncType, FuncType *func_ptr> struct CompileTimeFunctionPointer {
  static constexpr FuncType *func_ptr_ = func_ptr;
};

template <class FuncType> class TypedOperatorHandle;
template <class Return, class... Args> class TypedOperatorHandle<Return(Args...)> {
public:
  Return call(Args... args) const;
};

class OperatorHandle {
public:
  template <class FuncType> TypedOperatorHandle<FuncType> typed() const;
};

class Dispatcher {
public:
  static Dispatcher &singleton();
  OperatorHandle findSchemaOrThrow(const char *name, const char *overload_name);
};
} // namespace c10

#define TORCH_FN_TYPE(func)                                                                                  \
  ::c10::CompileTimeFunctionPointer<std::remove_pointer_t<std::remove_reference_t<decltype(func)>>, func>
#define TORCH_FN(func) TORCH_FN_TYPE(func)()

namespace torch {
using c10::Dispatcher;

class CppFunction {
public:
  template <class Func> CppFunction(Func *f);
  template <class FuncType, FuncType *func_ptr> CppFunction(c10::CompileTimeFunctionPointer<FuncType, func_ptr>);
};
template <class Func> CppFunction dispatch(c10::DispatchKey k, Func &&raw_f);

class Library {
public:
  enum Kind { DEF, IMPL, FRAGMENT };
  Library(Kind kind, const char *ns, std::optional<c10::DispatchKey> k, const char *file, uint32_t line);
  Library &def(const char *schema) &;
  template <typename Func> Library &def(const char *name_or_schema, Func &&raw_f) &;
  template <typename Func> Library &impl(const char *name, Func &&raw_f) &;
};

namespace detail {
class TorchLibraryInit final {
public:
  using InitFn = void(Library &);
  TorchLibraryInit(Library::Kind kind, InitFn *fn, const char *ns, std::optional<c10::DispatchKey> k,
                   const char *file, uint32_t line);
};
} // namespace detail
} // namespace torch

#define TORCH_MOCK_CONCAT_(a, b) a##b
#define TORCH_MOCK_CONCAT(a, b) TORCH_MOCK_CONCAT_(a, b)

#define TORCH_LIBRARY(ns, m)                                                                                 \
  static void TORCH_LIBRARY_init_##ns(torch::Library &);                                                   \
  static const torch::detail::TorchLibraryInit TORCH_LIBRARY_static_init_##ns(                             \
      torch::Library::DEF, &TORCH_LIBRARY_init_##ns, #ns, std::nullopt, __FILE__, __LINE__);               \
  void TORCH_LIBRARY_init_##ns(torch::Library &m)

#define TORCH_LIBRARY_IMPL(ns, k, m) TORCH_MOCK_LIBRARY_IMPL(ns, k, m, __COUNTER__)
#define TORCH_MOCK_LIBRARY_IMPL(ns, k, m, uid)                                                              \
  static void TORCH_MOCK_CONCAT(TORCH_LIBRARY_IMPL_init_##ns##_##k##_, uid)(torch::Library &);            \
  static const torch::detail::TorchLibraryInit TORCH_MOCK_CONCAT(TORCH_LIBRARY_IMPL_static_init_##ns##_##k##_, \
                                                                 uid)(                                      \
      torch::Library::IMPL, &TORCH_MOCK_CONCAT(TORCH_LIBRARY_IMPL_init_##ns##_##k##_, uid), #ns,           \
      std::make_optional(c10::DispatchKey::k), __FILE__, __LINE__);                                         \
  void TORCH_MOCK_CONCAT(TORCH_LIBRARY_IMPL_init_##ns##_##k##_, uid)(torch::Library & m)
