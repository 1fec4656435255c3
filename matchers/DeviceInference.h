// Where a tensor lives, from how it was made (first version: flow-insensitive
// within a function; a variable's device is the join of its initialiser and of
// every value assigned to it).
#ifndef TORCH_SYNCFREE_DEVICEINFERENCE_H
#define TORCH_SYNCFREE_DEVICEINFERENCE_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <optional>

namespace torch_syncfree {

/// The lattice of placements: Cpu and Gpu are facts, Unknown means "may be
/// either" (parameters, members, results of unseen functions).
enum class Placement { Cpu, Gpu, Unknown };

Placement join(Placement A, Placement B);
/// Joins with "nothing known yet" (nullopt) as the bottom element.
std::optional<Placement> join(std::optional<Placement> A, std::optional<Placement> B);
const char *describe(Placement P); // "CPU", "GPU", "unknown"

class DeviceOracle {
public:
  explicit DeviceOracle(clang::ASTContext &Ctx) : Ctx(Ctx) {}

  /// Where the tensor the expression evaluates to lives.
  Placement tensorPlacement(const clang::Expr *TensorExpr);

  /// The device an argument of `to(...)`, a factory's options or a Device
  /// variable names: nullopt when it names none (a dtype, default options).
  std::optional<Placement> devicePlacement(const clang::Expr *DeviceLike);

  /// Whether the expression is a DeviceType/Device/TensorOptions/tensor that
  /// names a device at all.
  bool namesDevice(const clang::Expr *DeviceLike) {
    return devicePlacement(DeviceLike).has_value();
  }

private:
  std::optional<Placement> tensorPlacementImpl(const clang::Expr *E);
  std::optional<Placement> variablePlacement(const clang::VarDecl *VD, bool AsDevice);
  std::optional<Placement> factoryPlacement(const clang::CallExpr *Call);
  std::optional<Placement> operandsPlacement(const clang::CallExpr *Call);

  clang::ASTContext &Ctx;
  llvm::DenseMap<const clang::Expr *, std::optional<Placement>> TensorCache;
  llvm::SmallPtrSet<const clang::VarDecl *, 8> InProgress;
};

} // namespace torch_syncfree

#endif
