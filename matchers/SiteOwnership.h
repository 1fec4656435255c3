//===- SiteOwnership.h - Which check reports a sync site -------*- C++ -*-===//
//
// One finding per sync site: where a specific check reports a site with a
// better remedy than the general one (a read only logged, a read summed into a
// host metric), the general check leaves it. The site predicates live here, in
// the engine, so that checks ask the engine and never each other's classes;
// the precedence is specificOwnerOfRead's.
//
//===----------------------------------------------------------------------===//
#ifndef TORCH_SYNCFREE_SITEOWNERSHIP_H
#define TORCH_SYNCFREE_SITEOWNERSHIP_H

#include "TranslationUnitAnalysis.h"
#include "UseClassifier.h"

#include "clang/AST/Expr.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace torch_syncfree {

/// torch-sync-deferred-log's site: \p Read (an item() call, its use
/// classified as \p Use) is read every iteration of a loop only to be logged,
/// outside any log interval.
bool isDeferredLogSite(TranslationUnitAnalysis &TU, const clang::Expr *Read, const UseVerdict &Use);

/// torch-sync-deferred-accumulate's site: \p Read (an item() or
/// clip_grad_norm_ call) is the summand of a discarded `local += ...` in a
/// loop, the local declared before the loop.
bool isDeferredAccumulateSite(TranslationUnitAnalysis &TU, const clang::Expr *Read);

/// The check, more specific than torch-sync-item, that reports the item()
/// read \p Read among those \p IsEnabled; nullopt when torch-sync-item does.
std::optional<llvm::StringRef> specificOwnerOfRead(TranslationUnitAnalysis &TU, const clang::CallExpr *Read,
                                                   const UseVerdict &Use,
                                                   llvm::function_ref<bool(llvm::StringRef)> IsEnabled);

} // namespace torch_syncfree

#endif
