// Host data access: code that reads or writes a tensor's elements through the
// raw pointer `data_ptr<T>()` gives it on the host (`p[i]`, `*p`, `memcpy`,
// a std::vector built from the range, a function of the unit that
// dereferences the pointer) works only when the tensor is on the CPU: a CUDA
// pointer dereferenced on the host faults. So such a tensor is on the CPU in
// any run of the program that works, as one read through `accessor<T, N>()`
// (which checks it) is.
#ifndef TORCH_SYNCFREE_ANALYSIS_HOSTACCESS_H
#define TORCH_SYNCFREE_ANALYSIS_HOSTACCESS_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"

namespace torch_syncfree {

/// Whether \p Body reads or writes the elements of the tensor variable
/// \p Tensor on the host: through `accessor<T, N>()`, or through the pointer
/// `Tensor.data_ptr<T>()` (or `.data<T>()`, of `Tensor` or
/// `Tensor.contiguous()`) dereferenced here or in a function of the unit it
/// is passed to.
bool readsElementsOnHost(clang::ASTContext &Ctx, const clang::Stmt &Body, const clang::VarDecl *Tensor);

/// A host kernel: a function that reads the elements of one of its tensor
/// parameters on the host and never names the GPU (no CUDA device, `.cuda()`,
/// `.to(..)` with a device or tensor, `is_cuda`, kernel launch, CUDA runtime
/// or `at::cuda` call). Its tensor parameters are CPU tensors: callers pass
/// the tensors of one computation on one device, and it reads them there.
bool isHostKernel(clang::ASTContext &Ctx, const clang::FunctionDecl *Function);

} // namespace torch_syncfree

#endif
