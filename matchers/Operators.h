// The project's own LibTorch operators (issue 42): functions registered with
// TORCH_LIBRARY / TORCH_LIBRARY_FRAGMENT / TORCH_LIBRARY_IMPL and called
// through the dispatcher (`Dispatcher::singleton().findSchemaOrThrow("ns::op",
// "").typed<..>().call(..)`). The call names an operator, not a function: the
// batch maps it to the implementation another unit registers.
#ifndef TORCH_SYNCFREE_OPERATORS_H
#define TORCH_SYNCFREE_OPERATORS_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include <optional>
#include <string>
#include <vector>

namespace torch_syncfree {

/// One kernel the project registers for an operator.
struct OperatorRegistration {
  std::string Operator; ///< "ns::name" (no overload, no schema)
  std::string Key;      ///< dispatch key ("CUDA", "CPU"); empty: every key (a def)
  const clang::FunctionDecl *Implementation = nullptr; ///< the registered function (its definition when seen)
};

/// The registrations of the TORCH_LIBRARY blocks this unit's main file holds,
/// in source order: `m.def("op(..) -> ..", f)`, `m.impl("op", f)`,
/// `m.impl("op", TORCH_FN(f))`, `m.impl("op", torch::dispatch(DispatchKey::CUDA, f))`.
/// The namespace and the key come from the block's TorchLibraryInit.
std::vector<OperatorRegistration> operatorRegistrations(clang::ASTContext &Ctx);

/// The operator a call invokes through the dispatcher ("ns::name"): `call` of a
/// typed operator handle found by name, directly or through the variable that
/// keeps it (`static auto op = ...; op.call(x)`); nullopt for any other call.
std::optional<std::string> dispatchedOperator(const clang::CallExpr *Call);

/// Whether a kernel registered for \p Key may run on GPU tensors: not a CPU
/// (or other host-only) key.
bool mayRunOnGpu(llvm::StringRef Key);

} // namespace torch_syncfree

#endif
