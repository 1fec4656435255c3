//===- ClipGradNorm.h - clip_grad_norm_ on the device ----------*- C++ -*-===//
//
// Shared fix builders for torch::nn::utils::clip_grad_norm_ (see the .cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TORCH_SYNCFREE_FIXES_CLIPGRADNORM_H
#define TORCH_SYNCFREE_FIXES_CLIPGRADNORM_H

#include "TranslationUnitAnalysis.h"

#include "clang/AST/Expr.h"
#include "clang/Tooling/Transformer/RewriteRule.h"

#include <optional>
#include <string>
#include <vector>

namespace torch_syncfree {

/// The device-side replacement of \p Call (a clip_grad_norm_ call): a call of
/// the helper returning the 0-dim total norm; nullopt for options the helper
/// does not mirror (a norm type other than 2, error_if_nonfinite). \p FusedNorm:
/// the norms by `at::_foreach_norm` where the headers declare it.
std::optional<std::string> deviceClipGradNorm(clang::ASTContext &Ctx, const clang::CallExpr *Call,
                                              bool FusedNorm);

/// The helper's definition, inserted after the file's includes, for the fix
/// of \p Call: added by the first fix of the TU that asks (one definition per
/// file, whichever fixes clang-tidy applies), or by every fix when
/// \p EveryFix (the language server applies one quick fix at a time; the
/// copies are guarded). None when the TU already defines it (a file fixed
/// before). false when the fix must not be offered: no place for the helper,
/// or the carrier's line looks suppressed (NOLINT), so its fix may not apply.
bool addClipGradNormHelper(TranslationUnitAnalysis &TU, const clang::CallExpr *Call, bool FusedNorm,
                           bool EveryFix, std::vector<clang::transformer::ASTEdit> &Edits);

} // namespace torch_syncfree

#endif
