// What else the checks need to know about a tensor besides its device: the kind of
// its elements (a boolean mask or an integer index) and whether it is 0-dim.
// A variable read is the join of the definitions reaching it (the value-flow
// core, analysis/ValueFlow.h).
#ifndef TORCH_SYNCFREE_TENSORFACTS_H
#define TORCH_SYNCFREE_TENSORFACTS_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"

namespace torch_syncfree {

class TranslationUnitAnalysis;

enum class ElementKind { Bool, Integer, Floating, Unknown };

/// The element kind of a tensor expression: comparisons, logical ops and
/// isnan-style predicates are Bool; argmax/nonzero/randint and kLong/kInt
/// dtypes are Integer; floating factories and kFloat/kDouble are Floating.
ElementKind elementKind(TranslationUnitAnalysis &TU, const clang::Expr *Tensor);

/// Known to be a 0-dim tensor: argmax()/argmin() without a dimension, full
/// reductions (sum(), mean(), max(), ...) without arguments, scalar_tensor.
bool isZeroDim(const clang::Expr *Tensor);

/// Known to have at least one dimension (not 0-dim): `torch::tensor({a, b})`,
/// a factory given a non-empty size list (`zeros({3})`), a copy or move of
/// one, a local variable every definition reaching the read of which is one.
/// Elementwise ops and `equal` accept a 0-dim CPU tensor beside a GPU one (as
/// a scalar), never one with dimensions.
bool hasDimensions(TranslationUnitAnalysis &TU, const clang::Expr *Tensor, unsigned Depth = 0);

/// No assignment, increment, in-place tensor method (`add_`) or call of a
/// function outside LibTorch: evaluating the expression twice, or in another
/// order, cannot change what the program does.
bool isSideEffectFree(const clang::Expr *E);

/// Whether LibTorch's headers in this TU declare `ns::name` (ns is "at" or
/// "torch") with \p Params parameters (-1: any number) and, optionally, a
/// parameter of type \p TypeName at position \p TypedParam. Fix-its use it to
/// spell only APIs the headers the TU was parsed with declare.
bool torchDeclares(clang::ASTContext &Ctx, llvm::StringRef Namespace, llvm::StringRef Name,
                   int Params = -1, int TypedParam = -1, llvm::StringRef TypeName = "");

} // namespace torch_syncfree

#endif
