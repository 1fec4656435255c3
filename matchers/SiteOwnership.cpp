//===- SiteOwnership.cpp - Which check reports a sync site ----------------===//
#include "SiteOwnership.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/ExprCXX.h"

using namespace clang;

namespace torch_syncfree {

std::optional<SyncSiteKind> syncSiteKindOf(const Expr *Site) {
  const auto *Call = dyn_cast_or_null<CallExpr>(Site);
  if (!Call || !isInTorchNamespace(Call->getDirectCallee()))
    return std::nullopt;
  if (const auto *Member = dyn_cast<CXXMemberCallExpr>(Call); Member && isTensorMethodCall(Member, "item"))
    return SyncSiteKind::ItemRead;
  if (calleeName(Call) == "clip_grad_norm_")
    return SyncSiteKind::GradNormCall;
  return std::nullopt;
}

llvm::ArrayRef<CheckId> sitePrecedence(SyncSiteKind Kind) {
  static const CheckId ItemRead[] = {
#define TORCH_SYNC_SITE_OWNER(Kind, Class) TORCH_SYNC_SITE_OWNER_##Kind(Class)
#define TORCH_SYNC_SITE_OWNER_ItemRead(Class) CheckId::Class,
#define TORCH_SYNC_SITE_OWNER_GradNormCall(Class)
#include "Checks.def"
#undef TORCH_SYNC_SITE_OWNER_ItemRead
#undef TORCH_SYNC_SITE_OWNER_GradNormCall
  };
  static const CheckId GradNormCall[] = {
#define TORCH_SYNC_SITE_OWNER(Kind, Class) TORCH_SYNC_SITE_OWNER_##Kind(Class)
#define TORCH_SYNC_SITE_OWNER_ItemRead(Class)
#define TORCH_SYNC_SITE_OWNER_GradNormCall(Class) CheckId::Class,
#include "Checks.def"
#undef TORCH_SYNC_SITE_OWNER_ItemRead
#undef TORCH_SYNC_SITE_OWNER_GradNormCall
  };
  switch (Kind) {
  case SyncSiteKind::ItemRead:
    return ItemRead;
  case SyncSiteKind::GradNormCall:
    return GradNormCall;
  }
  return {};
}

} // namespace torch_syncfree
