// What torch-syncfree knows about LibTorch's C++ API: which types are tensors,
// devices and options, and which functions make tensors. Every check asks here
// instead of spelling names of its own.
#ifndef TORCH_SYNCFREE_TORCHAPI_H
#define TORCH_SYNCFREE_TORCHAPI_H

#include "TranslationUnitAnalysis.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <vector>

namespace torch_syncfree {

/// at::Tensor or at::TensorBase (torch::Tensor is `using at::Tensor`).
bool isTensorType(clang::QualType T);
/// c10::Device, c10::DeviceType.
bool isDeviceType(clang::QualType T);
/// c10::TensorOptions.
bool isTensorOptionsType(clang::QualType T);
/// c10::ScalarType, caffe2::TypeMeta, c10::Layout, c10::MemoryFormat: say nothing of the device.
bool isNonDeviceOptionType(clang::QualType T);
/// c10::Scalar, the host value `item()` returns.
bool isScalarType(clang::QualType T);

/// The declaration lives in a LibTorch namespace (at, c10, torch and nested ones).
bool isInTorchNamespace(const clang::Decl *D);

/// Strips parentheses, implicit casts, temporaries and copy/move constructions.
const clang::Expr *ignoreWrappers(const clang::Expr *E);

/// The nearest ancestor of \p E that is not a paren, implicit cast, temporary or
/// member access: the expression or statement that consumes E's value.
const clang::Stmt *consumerOf(clang::ASTContext &Ctx, const clang::Expr *E);

/// The variable \p E initialises (`auto x = E;`, through implicit casts,
/// temporaries and a converting construction), or nullptr.
const clang::VarDecl *initialisedVariable(clang::ASTContext &Ctx, const clang::Expr *E);


/// The innermost ancestor of \p S (within its function or lambda, below \p StopAt)
/// for which \p Matches holds, or nullptr. Declarations on the way (a variable whose
/// initialiser holds S) are walked through.
const clang::Stmt *innermostAncestor(clang::ASTContext &Ctx, const clang::Stmt *S,
                                     llvm::function_ref<bool(const clang::Stmt *)> Matches,
                                     const clang::Stmt *StopAt = nullptr);

/// A condition that holds once every N iterations: it takes a remainder
/// (`step % N == 0`, `batch_idx++ % kLogInterval == 0`).
bool isIntervalCondition(const clang::Expr *Condition);
/// The innermost `if` with an interval condition around \p S, below \p Loop
/// (through a variable's initialiser too: `float v = t.item<float>();` inside
/// the `if`); S in the condition itself does not count.
const clang::IfStmt *logIntervalAround(clang::ASTContext &Ctx, const clang::Stmt *S,
                                       const clang::Stmt *Loop);

/// A class whose tensors a generic mover may relocate: torch::nn modules and
/// classes with their own to()/cuda()/cpu().
bool mayMoveItsTensors(const clang::CXXRecordDecl *Record);
/// A field of the program's own class whose every store this TU shows: the
/// class is defined in the main file (no other TU sees it), has no generic
/// mover, and the field is not a reference.
bool isClosedProgramField(const clang::SourceManager &SM, const clang::FieldDecl *Field);

/// The object a method is called on, for member calls (nullptr otherwise).
const clang::Expr *calleeObject(const clang::Expr *Call);
/// Name of the called method or function, empty when not a named call.
llvm::StringRef calleeName(const clang::Expr *Call);
/// True for a call of a method named `Name` of at::Tensor / at::TensorBase.
bool isTensorMethodCall(const clang::Expr *E, llvm::StringRef Name);

/// The elements of the `{...}` index list of `x.index({...})` / `index_put_({...}, v)`,
/// each seen through its implicit TensorIndex construction; nullopt when the first
/// argument is not a braced list.
std::optional<std::vector<const clang::Expr *>> indexListElements(const clang::CallExpr *Call);

/// Index of the parameter called `Name` in the call's callee, or -1.
int parameterIndex(const clang::CallExpr *Call, llvm::StringRef Name);
/// Number of arguments written in the source (defaulted ones are not).
unsigned explicitArgCount(const clang::CallExpr *Call);


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
/// Whether the value of \p E is discarded (a full-expression statement, the
/// body of a loop or branch written without braces, a for loop's increment).
bool isValueDiscarded(clang::ASTContext &Ctx, const clang::Expr *E);
/// Whether E is immediately followed by insertedSyncMarker().
bool isMarkedInsertedSync(const clang::Expr *E, clang::ASTContext &Ctx);
/// Whether the line of Loc carries insertedSyncComment().
bool isOnInsertedSyncLine(clang::SourceLocation Loc, const clang::SourceManager &SM);

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

namespace matchers {
using namespace clang::ast_matchers;
/// An expression whose type is a tensor (value, reference or const reference).
inline auto tensorExpr() {
  return expr(hasType(hasUnqualifiedDesugaredType(recordType(hasDeclaration(
      cxxRecordDecl(hasAnyName("::at::Tensor", "::at::TensorBase")))))));
}
inline auto tensorClass() {
  return cxxRecordDecl(hasAnyName("::at::Tensor", "::at::TensorBase"));
}
/// A statement inside a template instantiation or a dead branch. clang's
/// isInTemplateInstantiation() is hasAncestor(...): a walk to the root for every
/// candidate node, quadratic on long call chains (4,000 `.cuda().cpu()` took
/// 38 s). This one memoises the answer per statement, so a TU costs one walk.
AST_MATCHER_P(clang::Stmt, outsideAnalysedCode, AnalysisHub *, Hub) {
  return Hub->analysis(Finder->getASTContext()).isOutsideAnalysedCode(&Node) ||
         isInValidationMessage(Finder->getASTContext(), llvm::isa<clang::Expr>(Node)
                                                            ? llvm::cast<clang::Expr>(Node).getExprLoc()
                                                            : Node.getBeginLoc());
}
/// Code the user wrote, analysed once: a template in its first instantiation
/// in the TU (calls on dependent types resolved), or in its definition when
/// the TU never instantiates it; not in other instantiations.
/// Code in a branch that never runs (a constant condition) is not analysed either.
inline auto userCode(AnalysisHub *Hub) { return unless(outsideAnalysedCode(Hub)); }
/// A call of one of the named methods of at::Tensor, binding the object as "object".
template <typename... Names>
auto tensorMethodCall(AnalysisHub *Hub, Names... MethodNames) {
  return cxxMemberCallExpr(
      callee(cxxMethodDecl(hasAnyName(MethodNames...), ofClass(tensorClass()))),
      on(expr().bind("object")), userCode(Hub));
}
} // namespace matchers

} // namespace torch_syncfree

#endif
