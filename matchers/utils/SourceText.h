//===- utils/SourceText.h - Source text, macros and markers ------*- C++ -*-===//
//
// What the source says as written: macro invocations (assertion macros and
// their message arguments), spelled text, and the markers the tool's own fixes
// leave on the syncs they insert on purpose.
//
//===----------------------------------------------------------------------===//
#ifndef TORCH_SYNCFREE_UTILS_SOURCETEXT_H
#define TORCH_SYNCFREE_UTILS_SOURCETEXT_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace torch_syncfree {

/// The assertion or check macro Loc is spelled in an argument of (through any
/// macros between), or "": `assert`, or a name containing ASSERT or CHECK in
/// any case (`TORCH_CHECK`, `AT_ASSERT`, `TORCH_INTERNAL_ASSERT`, a project's
/// `CHECK`, `DCHECK_EQ`). Invocation: the outermost invocation as spelled.
llvm::StringRef validationMacro(clang::ASTContext &Ctx, clang::SourceLocation Loc,
                                clang::CharSourceRange *Invocation = nullptr);

/// Whether Loc is spelled in an argument of TORCH_CHECK (and its kin) that only
/// builds the failure's message: it runs when the check fails, never on the
/// hot path (`TORCH_CHECK(ok, "loss ", loss.item<float>())`).
bool isInValidationMessage(clang::ASTContext &Ctx, clang::SourceLocation Loc);

/// The absolute, dot-free path of the file Loc is in: what the front ends
/// name findings by (a compile command may name its file relative to its
/// directory), so records that name files compare with findings.
std::string absoluteFileName(const clang::SourceManager &SM, clang::SourceLocation Loc);

/// The comment a fix appends to a sync it inserts on purpose (the one read
/// after a loop, the one coalesced copy): clang-tidy's NOLINT keeps every check
/// off that line, in the plugin and the tool alike, and a reader sees why the
/// sync is there. Checks that gather several reads also leave such lines alone,
/// so a second --fix run finds nothing new (the fixed point).
std::string insertedSyncComment(llvm::StringRef Why);

/// An inline " /* torch-syncfree: <why> */" written right after a sync a fix
/// keeps on purpose inside an expression (the any() guard's one bool).
std::string insertedSyncMarker(llvm::StringRef Why);

/// The source text of \p S as written (empty when it is not in a file).
std::string spelledText(clang::ASTContext &Ctx, const clang::Stmt *S);

/// Whether E is immediately followed by insertedSyncMarker().
bool isMarkedInsertedSync(const clang::Expr *E, clang::ASTContext &Ctx);

/// Whether the line of Loc carries insertedSyncComment().
bool isOnInsertedSyncLine(clang::SourceLocation Loc, const clang::SourceManager &SM);

} // namespace torch_syncfree

#endif
