// What torch-syncfree knows about LibTorch's C++ API: which types are tensors,
// devices and options, and which functions make tensors. Every check asks here
// instead of spelling names of its own.
#ifndef TORCH_SYNCFREE_TORCHAPI_H
#define TORCH_SYNCFREE_TORCHAPI_H

#include "LibTorchVersion.h"
#include "TranslationUnitAnalysis.h"
#include "utils/SourceText.h"
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
/// An optional device: `c10::optional<Device>` (1.13), `std::optional<Device>` (2.x),
/// the `device` parameter of the unpacked overloads (`new_zeros(size, dtype, layout, device, pin)`).
bool isOptionalDeviceType(clang::QualType T);
/// c10::ScalarType, caffe2::TypeMeta, c10::Layout, c10::MemoryFormat: say nothing of the device.
bool isNonDeviceOptionType(clang::QualType T);
/// c10::Scalar, the host value `item()` returns.
bool isScalarType(clang::QualType T);

/// The declaration is LibTorch's: in a LibTorch namespace (at, c10, torch and
/// nested ones) and not one the project adds there in its own files.
bool isInTorchNamespace(const clang::Decl *D);

/// A class whose tensors a generic mover may relocate: torch::nn modules and
/// classes with their own to()/cuda()/cpu().
bool mayMoveItsTensors(const clang::CXXRecordDecl *Record);
/// A field of the program's own class whose every store this TU shows: the
/// class is defined in the main file (no other TU sees it), has no generic
/// mover, and the field is not a reference.
bool isClosedProgramField(const clang::SourceManager &SM, const clang::FieldDecl *Field);

/// A function of the project (not LibTorch's, the standard library's, a
/// system header's, a builtin or a lambda's call operator): what the project
/// summaries name across units.
bool isProjectFunction(const clang::FunctionDecl *FD, const clang::SourceManager &SM);

/// The name a function has in every translation unit of the program (its
/// mangled name: overloads and namespaces apart; for an inline function or a
/// template's instance defined in a header, with that header's absolute path:
/// copies of a header in several programs of one database are apart).
std::string linkageName(const clang::FunctionDecl *FD);

/// True for a call of a method named `Name` of at::Tensor / at::TensorBase.
bool isTensorMethodCall(const clang::Expr *E, llvm::StringRef Name);

/// The elements of the `{...}` index list of `x.index({...})` / `index_put_({...}, v)`,
/// each seen through its implicit TensorIndex construction; nullopt when the first
/// argument is not a braced list.
std::optional<std::vector<const clang::Expr *>> indexListElements(const clang::CallExpr *Call);

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
/// A sync a fix of this tool kept on purpose (insertedSyncMarker() right after
/// it) is not the user's code either: no check reports it again.
AST_MATCHER_P(clang::Stmt, outsideAnalysedCode, AnalysisHub *, Hub) {
  const auto *E = llvm::dyn_cast<clang::Expr>(&Node);
  return Hub->analysis(Finder->getASTContext()).isOutsideAnalysedCode(&Node) ||
         (E && isMarkedInsertedSync(E, Finder->getASTContext())) ||
         isInValidationMessage(Finder->getASTContext(), llvm::isa<clang::Expr>(Node)
                                                            ? llvm::cast<clang::Expr>(Node).getExprLoc()
                                                            : Node.getBeginLoc());
}
/// Code the user wrote, analysed once (not a sync a fix kept on purpose): a template in its first
/// instantiation in the TU (calls on dependent types resolved), or in its definition when the TU never
/// instantiates it; not in other instantiations. Code in a branch that never runs (a constant condition) is
/// not analysed either.
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
