// Where a tensor lives, from how it was made. Flow-sensitive within a function:
// a variable's device at a use is the join of the definitions that reach that use
// along the function's CFG (`t = t.cpu(); t.item()` is a CPU read); where the CFG
// cannot answer (captures in lambdas, globals), the join of every definition.
// Tensors are followed through containers (std::vector, std::tuple/std::get,
// structured bindings, range-for, C arrays), through fields of classes defined
// in the main file, and through calls of functions defined in the TU (their
// return statements evaluated with the call's argument placements bound to the
// parameters).
#ifndef TORCH_SYNCFREE_DEVICEINFERENCE_H
#define TORCH_SYNCFREE_DEVICEINFERENCE_H

#include "TranslationUnitAnalysis.h"
#include "analysis/DeviceGuards.h"
#include "analysis/ValueFlow.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/Analysis/CFG.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace torch_syncfree {

/// The lattice of placements: Cpu and Gpu are facts, Unknown means "may be
/// either" (parameters, members, results of unseen functions).
enum class Placement { Cpu, Gpu, Unknown };

Placement join(Placement A, Placement B);
/// Joins with "nothing known yet" (nullopt) as the bottom element.
std::optional<Placement> join(std::optional<Placement> A, std::optional<Placement> B);
const char *describe(Placement P); // "CPU", "GPU", "unknown"

/// Issue 43: a tensor whose origin only another unit of the project shows:
/// a tensor parameter of a function other units call ("param:<i>:<linkage
/// name>"), what a function another unit defines returns ("return:<linkage
/// name>"), a field of a project class other units store into
/// ("field:<Class>::<field>"). A unit alone calls such a tensor "may be on the
/// GPU"; the batch resolves the origins from every unit's record.
struct CpuCondition {
  /// Whether the tensors would be on the CPU were every origin below on the
  /// CPU; false: they may be on the GPU whatever other units do.
  bool OnCpu = false;
  std::vector<std::string> Origins; ///< sorted, unique
};

class DeviceOracle {
public:
  explicit DeviceOracle(TranslationUnitAnalysis &TU) : TU(TU), Ctx(TU.context()), Guards(Ctx) {}
  clang::ASTContext &context() const { return Ctx; }

  /// Where the tensor the expression evaluates to lives.
  Placement tensorPlacement(const clang::Expr *TensorExpr);

  /// Where the tensors a value holds live: a tensor, a container of tensors, a
  /// LibTorch module's parameters (`torch::save`'s argument).
  Placement heldTensorsPlacement(const clang::Expr *Value);

  /// The device an argument of `to(...)`, a factory's options or a Device
  /// variable names: nullopt when it names none (a dtype, default options).
  std::optional<Placement> devicePlacement(const clang::Expr *DeviceLike);

  /// The tensor whose device a device argument takes (`to(y)`, `to(y.device())`,
  /// `to(y.options())`, `to(y.options().dtype(..))`), or nullptr when the
  /// argument names its device otherwise.
  static const clang::Expr *deviceDonor(const clang::Expr *DeviceLike);

  /// Whether the expression is a DeviceType/Device/TensorOptions/tensor that
  /// names a device at all.
  bool namesDevice(const clang::Expr *DeviceLike) {
    return devicePlacement(DeviceLike).has_value();
  }

  /// Evaluates inside the callee of \p Call: until popCallBindings(), the callee's
  /// tensor parameters have the placements of the call's arguments (seen from
  /// the caller). Returns false (nothing pushed) for calls it cannot follow:
  /// no body in the TU, LibTorch, a virtual method, recursion, too deep.
  bool pushCallBindings(const clang::CallExpr *Call);
  void popCallBindings();
  /// The definition pushCallBindings() would enter, or nullptr.
  const clang::FunctionDecl *followableCallee(const clang::CallExpr *Call);

  /// Whether the tensor \p Tensor evaluates to was made on, or moved to, the
  /// device \p Device names, whichever device that is at run time (a device
  /// variable never reassigned, or a private field only constructors set:
  /// `m_x = zeros(..).to(*m_device); ... zeros_like(m_x).to(*m_device)`), so
  /// that moving it there again copies nothing.
  bool alreadyOnDevice(const clang::Expr *Tensor, const clang::Expr *Device);

  /// Issue 43, across units: where the tensors \p Value holds (a tensor, a
  /// container of tensors) would be were every tensor whose origin is in
  /// another unit on the CPU. Each question is answered by a fresh oracle that
  /// takes such origins to be on the CPU and lists them (this one's caches
  /// stay those of the unit alone).
  CpuCondition cpuCondition(const clang::Expr *Value);
  /// The same for what \p Definition returns (a tensor or a container).
  CpuCondition returnedCpuCondition(const clang::FunctionDecl *Definition);
  /// The same for every value this unit's code (the main file and the
  /// project's headers) stores into \p Field; nullopt when it stores none.
  std::optional<CpuCondition> fieldStoresCpuCondition(const clang::FieldDecl *Field);
  /// The origin key of a field of the project whose stores other units may
  /// hold ("field:<Class>::<field>"), or nullopt (a class of the main file, of
  /// LibTorch, one that moves its tensors, a template).
  static std::optional<std::string> projectFieldKey(const clang::FieldDecl *Field);

private:
  /// The variable or field a device expression reads when it denotes one
  /// device for the whole run (alreadyOnDevice()); nullptr otherwise.
  const clang::ValueDecl *stableDevice(const clang::Expr *Device);
  /// The stable device the options or device argument \p Options names
  /// (`TensorOptions().device(d)`, `d`); nullptr when it names another or none.
  const clang::ValueDecl *optionsDevice(const clang::Expr *Options);
  bool madeOnDevice(const clang::Expr *Tensor, const clang::ValueDecl *Device, unsigned Depth);
  /// The same for element \p Index of a tuple or pair value (`std::tie(a, b)
  /// = f()`), or for a tensor value when Index is nullopt.
  bool madeOnDeviceElement(const clang::Expr *Value, const clang::ValueDecl *Device,
                           std::optional<unsigned> Index, unsigned Depth);
  /// Whether every value a method of the device field's own object returns
  /// (its element \p Index) is made on that device.
  bool memberReturnsMadeOnDevice(const clang::CallExpr *Call, const clang::ValueDecl *Device,
                                 std::optional<unsigned> Index, unsigned Depth);
  /// An oracle of cpuCondition(): origins in other units are on the CPU and
  /// are added to \p Assumed.
  DeviceOracle(TranslationUnitAnalysis &TU, std::set<std::string> &Assumed)
      : TU(TU), Ctx(TU.context()), Guards(Ctx), Assumed(&Assumed) {}
  /// In an assuming oracle, a tensor parameter of a function other units
  /// call, the result of a function defined in another unit, a field other
  /// units store into: Cpu, its origin recorded. nullopt otherwise.
  std::optional<Placement> assumeParameter(const clang::ParmVarDecl *Param);
  std::optional<Placement> assumeReturned(const clang::FunctionDecl *Callee);
  std::optional<Placement> assumeField(const clang::FieldDecl *Field);
  /// The stores into \p Field of the main file's code, or (\p ProjectCode) of
  /// every declaration outside system headers.
  std::optional<Placement> fieldStoresPlacement(const clang::FieldDecl *Field, std::optional<unsigned> Index,
                                                bool Container, bool ProjectCode);
  /// A tensor variable never reassigned in its function whose elements it
  /// reads on the host (`accessor<T, N>()`, a dereferenced `data_ptr<T>()`),
  /// or a tensor parameter of a host kernel: on the CPU in any run that works.
  bool hasCpuAccessor(const clang::VarDecl *VD);
  llvm::DenseMap<const clang::FunctionDecl *, bool> HostKernels;
  llvm::DenseMap<const clang::VarDecl *, bool> HostReads;
  std::optional<Placement> tensorPlacementImpl(const clang::Expr *E);
  std::optional<Placement> variablePlacement(const clang::VarDecl *VD, bool AsDevice,
                                             const clang::DeclRefExpr *Use = nullptr);
  /// Flow-insensitive: the join of every definition of VD in its function.
  std::optional<Placement> variablePlacementAnywhere(const clang::VarDecl *VD, bool AsDevice);
public:
  /// A value given to a variable or structured binding: Value itself, or its
  /// element Element (`auto [a, b] = f();`, `std::tie(a, b) = f();`).
  struct Definition {
    const clang::Expr *Value = nullptr;
    std::optional<unsigned> Element;
  };

private:
  /// Flow-sensitive: the join over the definitions of D (a variable or a
  /// structured binding) that reach Use, from the value-flow core; Answered is
  /// false when the core cannot answer (lambdas, globals, no CFG).
  std::optional<Placement> reachingPlacement(const clang::ValueDecl *D, bool AsDevice,
                                             const clang::DeclRefExpr *Use, bool &Answered);
  std::optional<Placement> definitionPlacement(const Definition &Def, bool AsDevice);
  /// The device named by the arguments of a LibTorch call that makes or moves a
  /// tensor (a factory, `new_*`, `*_like`, `to`) bound to parameters that can name
  /// one: TensorOptions, Device, DeviceType, an optional Device and, with
  /// \p OtherTensor (`to(other)`), a tensor. nullopt when none names a device
  /// (sizes, fill values, dtypes, options without a device).
  std::optional<Placement> namedDevice(const clang::CallExpr *Call, bool OtherTensor);
  /// Where the tensors held by a container (vector, tuple, pair, C array, braced
  /// list) live: element \p Index when known, else every element.
  std::optional<Placement> elementPlacement(const clang::Expr *Container,
                                            std::optional<unsigned> Index);
  /// A container variable's elements as \p Read (a reference to it) sees them:
  /// for a local, only its initialiser and the stores that reach Read (the
  /// value-flow core: not those after it, nor those a `clear()` replaced).
  std::optional<Placement> containerVariablePlacement(const clang::VarDecl *VD, std::optional<unsigned> Index,
                                                      const clang::DeclRefExpr *Read);
  /// A tensor field of a class defined in the main file: the join of every value
  /// the TU stores into it (in-class initialiser, constructor initialisers, assignments).
  std::optional<Placement> fieldPlacement(const clang::FieldDecl *FD);
  /// An element of a const local container of devices given in a list.
  std::optional<Placement> listedDevicePlacement(const clang::Expr *E);
  /// A read of `this->f` in a method: the stores of the method that reach it
  /// (the value-flow core), else fieldPlacement (what every method stores).
  std::optional<Placement> fieldReadPlacement(const clang::FieldDecl *Field, const clang::MemberExpr *Read);
  std::optional<Placement> containerUsePlacement(const clang::Expr *Ref, std::optional<unsigned> Index);
  std::optional<Placement> containerFieldPlacement(const clang::FieldDecl *FD, std::optional<unsigned> Index);
  std::optional<Placement> fieldValuePlacement(const clang::FieldDecl *FD, std::optional<unsigned> Index,
                                               bool Container);
  /// The join of the callee's return values, with its parameters bound to the
  /// placements of the call's arguments; nullopt when the callee is not analysable.
  std::optional<Placement> returnPlacement(const clang::CallExpr *Call,
                                           std::optional<unsigned> Index);
  std::optional<Placement> bindingPlacement(const clang::BindingDecl *Binding);
  /// A parameter of a function whose callers are all in this TU: the join of
  /// the arguments they pass (nullopt when it is not such a function or is
  /// never called here).
  std::optional<Placement> callerArgumentPlacement(const clang::ParmVarDecl *Param, bool AsDevice);
  /// A LibTorch module (`lin`, `lin.operator->()`): CPU when it is a local
  /// built here from sizes and only used in ways that cannot move it.
  std::optional<Placement> modulePlacement(const clang::Expr *Module);
  /// Where a move of a module sends it (`m->to(d)`, `m->cuda()`, `m->cpu()`):
  /// nullopt when \p Call is no move or names no device (a dtype).
  std::optional<Placement> moduleMoveTarget(const clang::CXXMemberCallExpr *Call);
  /// The module variable \p VD as the last statement of \p Use's block that
  /// names it before \p Use leaves it, when that statement moves it
  /// (`model->to(torch::kCPU); torch::save(model, path);`); nullopt otherwise.
  std::optional<Placement> moduleMovedJustBefore(const clang::Expr *Use, const clang::VarDecl *VD);
  /// `obj.field`, `this->field`, `pair.first`.
  std::optional<Placement> memberPlacement(const clang::MemberExpr *Member);
  /// `v[i]`, `v.at(i)`, `v.front()`, `v.back()`, `opt.value()` on a non-tensor
  /// container; nullopt when \p E is none of these.
  std::optional<Placement> containerAccessPlacement(const clang::Expr *E);
  /// What a store into \p Target (a variable, field or element) gives it: the
  /// assigned value's placement, Unknown when it escapes by reference, else nullopt.
  std::optional<Placement> storedPlacement(const clang::Expr *Target);
  /// The range a range-for loop variable iterates over, when \p E is the loop's
  /// `*__begin` (the initialiser of the loop variable).
  const clang::Expr *rangeOfLoopElement(const clang::Expr *E);
  std::optional<Placement> operandsPlacement(const clang::CallExpr *Call);

  TranslationUnitAnalysis &TU;
  clang::ASTContext &Ctx;
  DeviceGuards Guards; ///< the device tests of the unit (memoised per block)
  llvm::DenseMap<const clang::Expr *, std::optional<Placement>> TensorCache;
  /// The work one tensorPlacement() question may do (expressions visited).
  static constexpr unsigned MaxStepsPerQuestion = 200000;
  unsigned StepsLeft = MaxStepsPerQuestion;
  unsigned QueryDepth = 0;
  bool BudgetExhausted = false;
  llvm::SmallPtrSet<const clang::ValueDecl *, 8> InProgress;
  llvm::SmallPtrSet<const clang::Decl *, 8> FieldsAndCalleesInProgress;
  llvm::DenseMap<const clang::FieldDecl *, std::optional<Placement>> FieldCache;
  /// Parameter placements of the callees being evaluated (innermost last).
  std::vector<llvm::DenseMap<const clang::ParmVarDecl *, Placement>> ParameterBindings;
  std::vector<const clang::FunctionDecl *> BoundCallees;
  /// Per definition: its tensor placement, and its device (Device and
  /// TensorOptions variables), solved to a fixpoint across loop-carried
  /// definitions (analysis/ValueFlow.h).
  DefinitionFixpoint<Placement> TensorDefinitions, DeviceDefinitions;
  /// Set in an oracle of cpuCondition() (see assumeParameter()).
  std::set<std::string> *Assumed = nullptr;
  /// Results depend on the state above only while something is in progress.
  bool cacheable() const {
    return InProgress.empty() && FieldsAndCalleesInProgress.empty() && ParameterBindings.empty() &&
           !TensorDefinitions.iterating() && !DeviceDefinitions.iterating();
  }
};

} // namespace torch_syncfree

#endif
