#include "DeviceInference.h"
#include "ApiFacts.h"
#include "TorchApi.h"
#include "analysis/Containers.h"
#include "analysis/ValueFlow.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"
#include <cstdlib>

#include "clang/AST/ParentMapContext.h"
#include "clang/Analysis/CFG.h"
#include <deque>
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/StmtCXX.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

static std::optional<unsigned> stdGetIndex(const CallExpr *Call);
static bool isStdMove(const CallExpr *Call);
static const Expr *assignedValue(ASTContext &Ctx, const Expr *Target);

Placement join(Placement A, Placement B) { return A == B ? A : Placement::Unknown; }

std::optional<Placement> join(std::optional<Placement> A, std::optional<Placement> B) {
  if (!A)
    return B;
  if (!B)
    return A;
  return join(*A, *B);
}

const char *describe(Placement P) {
  switch (P) {
  case Placement::Cpu:
    return "CPU";
  case Placement::Gpu:
    return "GPU";
  case Placement::Unknown:
    return "unknown";
  }
  return "unknown";
}

static Placement placementOfDeviceName(StringRef Name) {
  // c10::DeviceType enumerators and device strings ("cuda:0", "cpu").
  Name = Name.take_until([](char C) { return C == ':'; });
  std::string Lower = Name.lower();
  if (Lower == "cpu" || Lower == "meta")
    return Placement::Cpu;
  return Placement::Gpu;
}

/// The function body a variable's definitions and uses are searched in.
static const Stmt *owningBody(const VarDecl *VD) {
  const DeclContext *DC = isa<ParmVarDecl>(VD) ? VD->getDeclContext()
                                               : VD->getParentFunctionOrMethod();
  if (const auto *FD = dyn_cast_or_null<FunctionDecl>(DC))
    return FD->getBody();
  return nullptr;
}

bool DeviceOracle::hasCpuAccessor(const VarDecl *VD) {
  // `t.accessor<T, N>()` checks that t is a CPU tensor (it throws otherwise;
  // `packed_accessor` is the GPU one): a tensor variable the function never
  // reassigns and reads through an accessor is on the CPU everywhere in it.
  const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  if (!FD || !FD->getBody() || !isTensorType(VD->getType()))
    return false;
  bool Accessor = false;
  for (const DeclRefExpr *Ref : TU.referencesTo(*FD->getBody(), VD)) {
    const Stmt *Parent = ancestorSkipping<ImplicitCastExpr, ParenExpr>(Ctx, Ref).get<Stmt>();
    if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(Parent);
        Op && Op->isAssignmentOp() && Op->getNumArgs() > 0 && Op->getArg(0)->IgnoreImpCasts() == Ref)
      return false; // reassigned: the accessor says where it was at that point only
    if (const auto *Member = dyn_cast_or_null<MemberExpr>(Parent))
      if (Member->getMemberDecl()->getName() == "accessor")
        Accessor = true;
  }
  return Accessor;
}

std::optional<Placement> DeviceOracle::definitionPlacement(const Definition &Def, bool AsDevice) {
  if (Def.Element)
    return AsDevice ? std::optional(Placement::Unknown) : elementPlacement(Def.Value, Def.Element);
  return AsDevice ? devicePlacement(Def.Value) : tensorPlacementImpl(Def.Value);
}

std::optional<Placement> DeviceOracle::reachingPlacement(const ValueDecl *D, bool AsDevice,
                                                         const DeclRefExpr *Use, bool &Answered) {
  Answered = false;
  const auto *FD = dyn_cast_or_null<FunctionDecl>(D->getParentFunctionOrMethod());
  const FunctionValueFlow *Flow = Use && FD && FD->getBody() ? TU.valueFlow(FD) : nullptr;
  std::optional<ReachingDefinitions> Reaching = Flow ? Flow->reachingAt(D, Use) : std::nullopt;
  if (!Reaching)
    return std::nullopt;
  Answered = true;
  std::optional<Placement> Result;
  bool Escapes = Reaching->FromEntry; // a parameter, a global: not this function's to say
  DefinitionFixpoint<Placement> &Facts = AsDevice ? DeviceDefinitions : TensorDefinitions;
  for (unsigned Index : Reaching->Definitions) {
    const ValueDefinition &Definition = Flow->definitions()[Index];
    if (Definition.isOpaque()) {
      Escapes = true;
      continue;
    }
    const auto *Construct = dyn_cast_or_null<CXXConstructExpr>(ignoreWrappers(Definition.Value));
    if (!Definition.Value || (!Definition.Element && Construct && Construct->getNumArgs() == 0))
      continue; // `Tensor t;`: undefined until assigned
    Result = join(Result,
                  Facts.factOf(
                      Definition,
                      [&](const ValueDefinition &Def) {
                        return definitionPlacement({Def.Value, Def.Element}, AsDevice);
                      },
                      [](Placement A, Placement B) { return join(A, B); }, Placement::Unknown, cacheable()));
  }
  if (Escapes)
    Result = join(Result, std::optional<Placement>(Placement::Unknown));
  if (!Result && !AsDevice)
    return Placement::Unknown;
  return Result;
}

std::optional<Placement> DeviceOracle::variablePlacement(const VarDecl *VD, bool AsDevice,
                                                         const DeclRefExpr *Use) {
  // Flow-sensitive first: the definitions that reach this use.
  if (Use && VD->hasLocalStorage() && !isa<ParmVarDecl>(VD) && !VD->getType()->isReferenceType()) {
    bool Answered = false;
    std::optional<Placement> Result = reachingPlacement(VD, AsDevice, Use, Answered);
    if (Answered)
      return Result;
  }
  return variablePlacementAnywhere(VD, AsDevice);
}

std::optional<Placement> DeviceOracle::variablePlacementAnywhere(const VarDecl *VD, bool AsDevice) {
  std::optional<Placement> Result;
  if (const auto *Param = dyn_cast<ParmVarDecl>(VD)) {
    // Inside a callee evaluated for a call site, a tensor parameter starts with the
    // argument's placement; assignments in the body are joined below.
    if (!ParameterBindings.empty()) {
      auto Bound = ParameterBindings.back().find(Param);
      if (Bound == ParameterBindings.back().end())
        return Placement::Unknown;
      Result = Bound->second;
    } else if (std::optional<Placement> FromCallers = callerArgumentPlacement(Param, AsDevice)) {
      Result = FromCallers; // a program's own function: the join of what its callers pass
    } else {
      return Placement::Unknown;
    }
  }
  // Constants such as c10::kCUDA: their initialiser says it all.
  if (!VD->hasLocalStorage() && !VD->isStaticLocal()) {
    if (VD->getType().isConstQualified() && VD->getInit())
      return AsDevice ? devicePlacement(VD->getInit()) : tensorPlacementImpl(VD->getInit());
    return Placement::Unknown;
  }
  const Stmt *Body = owningBody(VD);
  if (!Body || !InProgress.insert(VD).second)
    return std::nullopt; // a cycle (x = x.cuda()): the other definitions decide
  // Every definition the value-flow core sees in the function, wherever it is:
  // the declaration, assignments, `std::tie(..) = rhs` elements, and the opaque
  // ones (passed to code that may assign it, aliased).
  const auto *FD = dyn_cast_or_null<FunctionDecl>(isa<ParmVarDecl>(VD) ? VD->getDeclContext()
                                                                       : VD->getParentFunctionOrMethod());
  if (const FunctionValueFlow *Flow = FD ? TU.valueFlow(FD) : nullptr) {
    for (const ValueDefinition &Definition : Flow->definitions()) {
      if (Definition.Variable != VD)
        continue;
      if (Definition.isOpaque()) {
        Result = join(Result, std::optional<Placement>(Placement::Unknown));
        continue;
      }
      const auto *Construct = dyn_cast_or_null<CXXConstructExpr>(ignoreWrappers(Definition.Value));
      if (!Definition.Value || (!Definition.Element && Construct && Construct->getNumArgs() == 0))
        continue; // `Tensor t;` is undefined: it takes a device only when assigned
      Result = join(Result, definitionPlacement({Definition.Value, Definition.Element}, AsDevice));
    }
  } else {
    Result = join(Result, std::optional<Placement>(Placement::Unknown)); // no CFG: nothing is known
  }
  InProgress.erase(VD);
  if (!Result && !AsDevice)
    return Placement::Unknown; // never given a value we can see
  return Result;
}

std::optional<Placement> DeviceOracle::callerArgumentPlacement(const ParmVarDecl *Param, bool AsDevice) {
  const auto *FD = dyn_cast<FunctionDecl>(Param->getDeclContext());
  if (!FD || !TU.callersAllVisible(FD) || FD->isVariadic() ||
      !FieldsAndCalleesInProgress.insert(Param).second)
    return std::nullopt;
  std::optional<Placement> Result;
  unsigned Index = Param->getFunctionScopeIndex();
  llvm::ArrayRef<const CallExpr *> Calls = TU.callsOf(FD);
  for (const CallExpr *Call : Calls) {
    if (Index >= Call->getNumArgs() || isa<CXXDefaultArgExpr>(Call->getArg(Index))) {
      Result = Placement::Unknown; // the default argument: not followed
      break;
    }
    Result = join(Result, AsDevice ? devicePlacement(Call->getArg(Index)) : tensorPlacementImpl(Call->getArg(Index)));
    if (Result == Placement::Unknown)
      break;
  }
  FieldsAndCalleesInProgress.erase(Param);
  if (Calls.empty())
    return std::nullopt; // never called here (a callback, an exported entry point)
  return Result;
}

/// Whether a value of type \p T can say where a tensor goes: a Device, DeviceType,
/// TensorOptions, optional Device, tensor (`to(other)`) or device string. A size, a
/// fill value, a dtype or a flag cannot, whatever it is (a parameter, a global).
static bool mayNameDevice(QualType T) {
  if (T.isNull() || T->isDependentType() || T->isUndeducedType())
    return true;
  T = T.getNonReferenceType().getCanonicalType();
  if (isDeviceType(T) || isTensorOptionsType(T) || isOptionalDeviceType(T) || isTensorType(T))
    return true;
  if (T->isPointerType() || T->isArrayType()) {
    QualType Element =
        T->isPointerType() ? T->getPointeeType() : QualType(T->getArrayElementTypeNoTypeQual(), 0);
    return Element->isAnyCharacterType();
  }
  if (const CXXRecordDecl *Record = T->getAsCXXRecordDecl())
    return Record->getName() == "basic_string" || Record->getName() == "basic_string_view";
  return false;
}

std::optional<Placement> DeviceOracle::devicePlacement(const Expr *E) {
  E = ignoreWrappers(E);
  if (!E)
    return std::nullopt;
  QualType T = E->getType();
  if (isTensorType(T))
    return tensorPlacement(E); // to(other_tensor)
  if (!mayNameDevice(T))
    return std::nullopt;

  if (const auto *SL = dyn_cast<StringLiteral>(E))
    return placementOfDeviceName(SL->getString());
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    if (const auto *EC = dyn_cast<EnumConstantDecl>(DRE->getDecl())) {
      if (isDeviceType(EC->getType()))
        return placementOfDeviceName(EC->getName());
      return std::nullopt;
    }
    if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
      return variablePlacement(VD, /*AsDevice=*/true, DRE);
    return Placement::Unknown;
  }
  if (const auto *CO = dyn_cast<AbstractConditionalOperator>(E))
    return join(devicePlacement(CO->getTrueExpr()), devicePlacement(CO->getFalseExpr()));
  if (std::optional<Placement> Listed = listedDevicePlacement(E))
    return Listed;
  if (const auto *CE = dyn_cast<CXXConstructExpr>(E)) {
    // TensorOptions(Device), Device(DeviceType, index), Device("cuda:0").
    if (CE->getNumArgs() == 0)
      return std::nullopt;
    const Expr *First = CE->getArg(0);
    if (isa<CXXDefaultArgExpr>(First))
      return std::nullopt;
    return devicePlacement(First);
  }
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(E)) {
    const Expr *Object = MC->getImplicitObjectArgument();
    StringRef Name = calleeName(MC);
    if (Object && isTensorType(Object->getType()) &&
        (Name == "device" || Name == "options"))
      return tensorPlacement(Object);
    if (Object && isTensorOptionsType(Object->getType())) {
      if (Name == "device" && MC->getNumArgs() >= 1 && !isa<CXXDefaultArgExpr>(MC->getArg(0)))
        return devicePlacement(MC->getArg(0)); // opts.device(kCUDA)
      if (Name == "device_index")
        return Placement::Gpu;                 // opts.device_index(i): CUDA device i
      return devicePlacement(Object);          // opts.dtype(...) keeps opts' device
    }
    if (Object && isDeviceType(Object->getType()))
      return devicePlacement(Object);
    return isDeviceType(T) || isTensorOptionsType(T) || isOptionalDeviceType(T)
               ? std::optional(Placement::Unknown)
               : std::nullopt;
  }
  if (const auto *Call = dyn_cast<CallExpr>(E)) {
    StringRef Name = calleeName(Call);
    const FunctionDecl *FD = Call->getDirectCallee();
    if (FD && isInTorchNamespace(FD)) {
      if (Name == "device" && Call->getNumArgs() == 1)
        return devicePlacement(Call->getArg(0)); // torch::device(kCUDA)
      if (Name == "device_index" && isTensorOptionsType(T))
        return Placement::Gpu; // c10::device_index(i): CUDA device i
      if (isTensorOptionsType(T))
        return std::nullopt; // torch::dtype(...), torch::requires_grad(...)
    }
  }
  if (isDeviceType(T) || isTensorOptionsType(T) || isOptionalDeviceType(T))
    return Placement::Unknown;
  return std::nullopt;
}

std::optional<Placement> DeviceOracle::listedDevicePlacement(const Expr *E) {
  // `devices[i]`, `devices.at(i)` of a const local container of devices given
  // its elements in a list (`const std::vector<torch::Device> devices = {...}`):
  // the join of the listed devices. Found by the blind programs of issue 43
  // (data parallel over two GPUs: the GPU-to-GPU copies were "may copy a host
  // tensor").
  const Expr *Container = nullptr;
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E); Op && Op->getOperator() == OO_Subscript)
    Container = Op->getArg(0);
  else if (const auto *MC = dyn_cast<CXXMemberCallExpr>(E); MC && calleeName(MC) == "at")
    Container = MC->getImplicitObjectArgument();
  const auto *Ref = dyn_cast_or_null<DeclRefExpr>(Container ? ignoreWrappers(Container) : nullptr);
  const auto *VD = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  if (!VD || !VD->hasLocalStorage() || !VD->getType().isConstQualified() || !VD->getInit())
    return std::nullopt;
  const Expr *Init = ignoreWrappers(VD->getInit());
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(Init); Construct && Construct->getNumArgs() >= 1)
    Init = ignoreWrappers(Construct->getArg(0));
  if (const auto *List = dyn_cast<CXXStdInitializerListExpr>(Init))
    Init = ignoreWrappers(List->getSubExpr());
  if (const auto *Temporary = dyn_cast<MaterializeTemporaryExpr>(Init))
    Init = ignoreWrappers(Temporary->getSubExpr());
  const auto *Elements = dyn_cast<InitListExpr>(Init);
  if (!Elements || Elements->getNumInits() == 0)
    return std::nullopt;
  std::optional<Placement> Result;
  for (const Expr *Element : Elements->inits()) {
    std::optional<Placement> One = devicePlacement(Element);
    if (!One)
      return std::nullopt;
    Result = join(Result, One);
  }
  return Result;
}

std::optional<Placement> DeviceOracle::namedDevice(const CallExpr *Call, bool OtherTensor) {
  // The device is in the argument bound to a TensorOptions, Device or optional
  // Device parameter, if one was written: `new_zeros({n}, TensorOptions(kDouble))`
  // names none, and neither do its sizes or a fill value (`new_full(sizes, fill)`
  // with parameters of the function: they say nothing of a device).
  const FunctionDecl *FD = Call->getDirectCallee();
  if (!FD)
    return Placement::Unknown;
  unsigned Offset = isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(FD) ? 1 : 0;
  std::optional<Placement> Device;
  for (unsigned I = Offset; I < Call->getNumArgs() && I - Offset < FD->getNumParams(); ++I) {
    const Expr *Arg = Call->getArg(I);
    if (isa<CXXDefaultArgExpr>(Arg))
      continue;
    QualType ParamType = FD->getParamDecl(I - Offset)->getType();
    if (isTensorOptionsType(ParamType) || isDeviceType(ParamType) || isOptionalDeviceType(ParamType))
      Device = join(Device, devicePlacement(Arg));
    else if (OtherTensor && isTensorType(ParamType))
      Device = join(Device, tensorPlacementImpl(Arg)); // `to(other)`: other's device
    else if (ParamType->isDependentType())
      return Placement::Unknown;
  }
  return Device;
}

/// A class template instance whose first template argument is a tensor:
/// std::vector<Tensor>, c10::ArrayRef<Tensor> (TensorList), std::array<Tensor, N>
/// (not an optional: its placement is its tensor's, or nothing).
static bool holdsTensors(QualType Type) {
  const auto *Spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(
      Type.getNonReferenceType()->getAsCXXRecordDecl());
  if (!Spec || Spec->getTemplateArgs().size() < 1 || Spec->getName() == "optional")
    return false;
  const TemplateArgument &First = Spec->getTemplateArgs()[0];
  return First.getKind() == TemplateArgument::Type && isTensorType(First.getAsType());
}

std::optional<Placement> DeviceOracle::operandsPlacement(const CallExpr *Call) {
  std::optional<Placement> Result;
  bool SawTensor = false;
  auto Visit = [&](const Expr *Arg) {
    if (isa_and_nonnull<CXXDefaultArgExpr>(Arg))
      return; // `const std::optional<Tensor> &weight = {}`: no operand
    Arg = ignoreWrappers(Arg);
    if (!Arg)
      return;
    if (isTensorType(Arg->getType())) {
      SawTensor = true;
      Result = join(Result, tensorPlacementImpl(Arg));
      return;
    }
    // TensorList from a braced list: {a, b}.
    if (const auto *IL = dyn_cast<CXXStdInitializerListExpr>(Arg))
      Arg = ignoreWrappers(IL->getSubExpr());
    if (const auto *Init = dyn_cast<InitListExpr>(Arg)) {
      for (const Expr *Element : Init->inits())
        if (isTensorType(Element->getType())) {
          SawTensor = true;
          Result = join(Result, tensorPlacementImpl(Element));
        }
      return;
    }
    // TensorList from a container of tensors: `torch::stack(rows)`.
    if (holdsTensors(Arg->getType())) {
      SawTensor = true;
      Result = join(Result, elementPlacement(Arg, std::nullopt));
    }
  };
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Call))
    Visit(MC->getImplicitObjectArgument());
  for (const Expr *Arg : Call->arguments())
    Visit(Arg);
  // No tensor operand: nothing is known. Tensor operands still being defined
  // (a cycle such as `x = x * 0`): leave it to the variable's other definitions.
  if (!Result && !SawTensor)
    return Placement::Unknown;
  return Result;
}

Placement DeviceOracle::tensorPlacement(const Expr *E) {
  // Work per question is bounded: a pathological function degrades to
  // Unknown (reported as may-be-GPU, never hidden) instead of running long.
  static const unsigned Budget = [] {
    unsigned Value = MaxStepsPerQuestion; // tests shrink it to see the degradation
    if (const char *Text = getenv("TORCH_SYNCFREE_TESTING_STEP_BUDGET"))
      llvm::StringRef(Text).getAsInteger(10, Value);
    return Value;
  }();
  if (QueryDepth++ == 0) {
    StepsLeft = Budget;
    BudgetExhausted = false;
  }
  Placement Result = tensorPlacementImpl(E).value_or(Placement::Unknown);
  --QueryDepth;
  return Result;
}

Placement DeviceOracle::heldTensorsPlacement(const Expr *Value) {
  if (!Value || isTensorType(Value->getType()))
    return tensorPlacement(Value);
  if (QueryDepth++ == 0) {
    StepsLeft = MaxStepsPerQuestion;
    BudgetExhausted = false;
  }
  // A LibTorch module (`torch::nn::Linear`), a standard container of tensors;
  // anything else (the program's own module, a shared_ptr to one) is unknown.
  const CXXRecordDecl *Record = Value->getType()->getAsCXXRecordDecl();
  std::optional<Placement> Result;
  if (Record && isInTorchNamespace(Record)) {
    const auto *Ref = dyn_cast_or_null<DeclRefExpr>(ignoreWrappers(Value));
    const auto *VD = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
    Result = VD ? moduleMovedJustBefore(Value, VD) : std::nullopt;
    if (!Result)
      Result = modulePlacement(Value);
  } else if (Record && Record->isInStdNamespace() && Record->getDeclName().isIdentifier() &&
             hasHostApiTrait(Record->getName(), HostContainer))
    Result = elementPlacement(Value, std::nullopt);
  --QueryDepth;
  return Result.value_or(Placement::Unknown);
}

std::optional<Placement> DeviceOracle::tensorPlacementImpl(const Expr *E) {
  E = ignoreWrappers(E);
  if (!E)
    return Placement::Unknown;
  if (StepsLeft == 0) {
    BudgetExhausted = true;
    return Placement::Unknown;
  }
  --StepsLeft;
  // Inside a callee evaluated for one call site, parameters have that site's
  // placements: results there are neither read from nor written to the cache.
  if (ParameterBindings.empty()) {
    auto Cached = TensorCache.find(E);
    if (Cached != TensorCache.end())
      return Cached->second;
  }

  std::optional<Placement> Result = Placement::Unknown;
  if (const Expr *Range = rangeOfLoopElement(E)) {
    Result = elementPlacement(Range, std::nullopt); // `*__begin` of a range-for
  } else if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl())) {
      Result = variablePlacement(VD, /*AsDevice=*/false, DRE);
      if (Result == Placement::Unknown && hasCpuAccessor(VD))
        Result = Placement::Cpu;
    }
    else if (const auto *Binding = dyn_cast<BindingDecl>(DRE->getDecl())) {
      // `auto [a, b] = f(); b = b.cpu();`: the definitions reaching this use.
      bool Answered = false;
      Result = reachingPlacement(Binding, /*AsDevice=*/false, DRE, Answered);
      if (!Answered)
        Result = bindingPlacement(Binding);
    }
  } else if (const auto *Member = dyn_cast<MemberExpr>(E)) {
    Result = memberPlacement(Member);
  } else if (const auto *Subscript = dyn_cast<ArraySubscriptExpr>(E)) {
    Result = elementPlacement(Subscript->getBase(), std::nullopt);
  } else if (const auto *Deref = dyn_cast<UnaryOperator>(E)) {
    Result = Deref->getOpcode() == UO_Deref ? std::optional(Placement::Unknown) : Result;
  } else if (std::optional<Placement> Element = containerAccessPlacement(E)) {
    Result = Element;
  } else if (const auto *CO = dyn_cast<AbstractConditionalOperator>(E)) {
    Result = join(tensorPlacementImpl(CO->getTrueExpr()),
                  tensorPlacementImpl(CO->getFalseExpr()));
  } else if (const auto *MC = dyn_cast<CXXMemberCallExpr>(E)) {
    const Expr *Object = MC->getImplicitObjectArgument();
    StringRef Name = calleeName(MC);
    if (Object && isTensorType(Object->getType())) {
      if (Name == "cpu" || Name == "pin_memory")
        Result = Placement::Cpu;
      else if (Name == "cuda")
        Result = Placement::Gpu;
      else if (Name == "to" || hasApiTrait(Name, SourceDevice)) {
        // LibTorch's rule: `to(dtype)`, `new_zeros(sizes, TensorOptions(kDouble))` stay
        // where the object is; `to(other)` goes to other's device, options that name a
        // device to that device.
        std::optional<Placement> Target = namedDevice(MC, /*OtherTensor=*/Name == "to");
        Result = Target ? Target : tensorPlacementImpl(Object);
      } else {
        // Tensor methods compute on the device of their operands.
        Result = operandsPlacement(MC);
      }
    } else if (Name == "forward" && isInTorchNamespace(MC->getMethodDecl())) {
      // A LibTorch module computes on its input's device (or throws).
      Result = operandsPlacement(MC);
    } else if (std::optional<Placement> Returned = returnPlacement(MC, std::nullopt)) {
      Result = Returned; // a method defined in this TU
    } else {
      Result = Placement::Unknown; // a member call on a module, a loader, ...
    }
  } else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E)) {
    if (Op->getOperator() == OO_Equal && Op->getNumArgs() == 2)
      Result = tensorPlacementImpl(Op->getArg(1));
    else if (Op->getOperator() == OO_Call && isInTorchNamespace(Op->getDirectCallee()))
      Result = operandsPlacement(Op); // a module holder's operator(): its forward
    else if (Op->getOperator() == OO_Call)
      Result = returnPlacement(Op, std::nullopt).value_or(Placement::Unknown); // a lambda
    else
      Result = operandsPlacement(Op);
  } else if (const auto *Call = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *FD = Call->getDirectCallee();
    StringRef Name = calleeName(Call);
    if (FD && isInTorchNamespace(FD)) {
      if (hasApiTrait(Name, Factory)) {
        Result = namedDevice(Call, /*OtherTensor=*/false);
        if (!Result)
          Result = Placement::Cpu; // factories default to the CPU
      } else if (hasApiTrait(Name, SourceDevice)) {
        Result = namedDevice(Call, /*OtherTensor=*/false); // `zeros_like(x, opts)`: x's device
        if (!Result)
          Result = operandsPlacement(Call);
      } else {
        Result = operandsPlacement(Call);
      }
    } else if (std::optional<unsigned> Index = stdGetIndex(Call)) {
      Result = elementPlacement(Call->getArg(0), *Index < ~0u ? Index : std::nullopt);
    } else if (isStdMove(Call)) {
      Result = tensorPlacementImpl(Call->getArg(0));
    } else if (std::optional<Placement> Returned = returnPlacement(Call, std::nullopt)) {
      Result = Returned; // a function defined in this TU
    }
    // Other functions are unseen here: Unknown.
  }
  // Results computed inside a cycle are partial: cache only complete ones.
  if (cacheable())
    if (!BudgetExhausted) // an answer cut short is not remembered
      TensorCache[E] = Result;
  return Result;
}

} // namespace torch_syncfree

// ---- Containers, fields and calls -----------------------------------------
namespace torch_syncfree {

/// `std::get<I>(x)`: I, or ~0u for `std::get<T>(x)`; nullopt for other calls.
static std::optional<unsigned> stdGetIndex(const CallExpr *Call) {
  const FunctionDecl *FD = Call->getDirectCallee();
  if (!FD || !FD->isInStdNamespace() || FD->getName() != "get" || Call->getNumArgs() != 1)
    return std::nullopt;
  if (const TemplateArgumentList *Args = FD->getTemplateSpecializationArgs())
    if (Args->size() >= 1 && Args->get(0).getKind() == TemplateArgument::Integral)
      return static_cast<unsigned>(Args->get(0).getAsIntegral().getZExtValue());
  return ~0u;
}

static bool isStdMove(const CallExpr *Call) {
  const FunctionDecl *FD = Call->getDirectCallee();
  return FD && FD->isInStdNamespace() && Call->getNumArgs() == 1 &&
         (FD->getName() == "move" || FD->getName() == "forward");
}

/// Whether \p S is (or is inside) the left side of an assignment: the value
/// written there is then the assignment's right side, returned here.
static const Expr *assignedValue(ASTContext &Ctx, const Expr *Target) {
  DynTypedNode Parent = ancestorSkipping<ImplicitCastExpr, ParenExpr, MaterializeTemporaryExpr>(Ctx, Target);
  if (const auto *Op = Parent.get<CXXOperatorCallExpr>())
    if (Op->getOperator() == OO_Equal && Op->getNumArgs() == 2 &&
        ignoreWrappers(Op->getArg(0)) == ignoreWrappers(Target))
      return Op->getArg(1);
  if (const auto *BO = Parent.get<BinaryOperator>())
    if (BO->getOpcode() == BO_Assign && ignoreWrappers(BO->getLHS()) == ignoreWrappers(Target))
      return BO->getRHS();
  return nullptr;
}

/// Whether \p Target may be changed behind the analysis's back: its address is
/// taken, or it is passed by non-const reference to a function outside LibTorch.
static bool escapes(ASTContext &Ctx, const Expr *Target) {
  DynTypedNode Parent = ancestorSkipping<ImplicitCastExpr, ParenExpr>(Ctx, Target);
  if (const auto *UO = Parent.get<UnaryOperator>())
    return UO->getOpcode() == UO_AddrOf;
  const auto *Call = Parent.get<CallExpr>();
  if (!Call || isa<CXXOperatorCallExpr>(Call))
    return false;
  const FunctionDecl *FD = Call->getDirectCallee();
  // LibTorch does not move tensors behind a reference; std::get/begin/end only
  // give access (their results are followed where they are used).
  if (FD && (isInTorchNamespace(FD) || isStdMove(Call) || onlyGivesAccess(Call)))
    return false;
  for (unsigned I = 0; I < Call->getNumArgs(); ++I)
    if (ignoreWrappers(Call->getArg(I)) == ignoreWrappers(Target) && argumentMayBeModified(FD, I))
      return true;
  return false;
}

std::optional<Placement> DeviceOracle::storedPlacement(const Expr *Target) {
  if (const Expr *Value = assignedValue(Ctx, Target))
    return tensorPlacementImpl(Value);
  if (escapes(Ctx, Target))
    return Placement::Unknown;
  return std::nullopt;
}

const Expr *DeviceOracle::rangeOfLoopElement(const Expr *E) {
  // `*__begin` (an overloaded or a built-in dereference) initialises the loop
  // variable of a range-for: its parents are the variable, its DeclStmt, the loop.
  const auto *Op = dyn_cast<CXXOperatorCallExpr>(E);
  const auto *UO = dyn_cast<UnaryOperator>(E);
  if (!(Op && Op->getOperator() == OO_Star) && !(UO && UO->getOpcode() == UO_Deref))
    return nullptr;
  DynTypedNode Node = DynTypedNode::create(*E);
  for (int Step = 0; Step < 8; ++Step) {
    DynTypedNodeList Parents = Ctx.getParents(Node);
    if (Parents.empty())
      return nullptr;
    Node = Parents[0];
    if (const auto *Loop = Node.get<CXXForRangeStmt>()) {
      const VarDecl *LoopVar = Loop->getLoopVariable();
      if (LoopVar && LoopVar->getInit() && ignoreWrappers(LoopVar->getInit()) == E)
        return Loop->getRangeInit();
      return nullptr;
    }
    if (Node.get<CompoundStmt>())
      return nullptr;
  }
  return nullptr;
}

std::optional<Placement> DeviceOracle::bindingPlacement(const BindingDecl *Binding) {
  const auto *Decomposed = dyn_cast_or_null<DecompositionDecl>(Binding->getDecomposedDecl());
  if (!Decomposed || !Decomposed->getInit())
    return Placement::Unknown;
  std::optional<Placement> Result = elementPlacement(Decomposed->getInit(), bindingIndex(Binding));
  // Where the CFG cannot answer (a capture in a lambda): every value assigned
  // to the binding anywhere in its function joins the initial one.
  const auto *FD = dyn_cast_or_null<FunctionDecl>(Decomposed->getParentFunctionOrMethod());
  if (!FD || !FD->getBody() || !InProgress.insert(Binding).second)
    return Result;
  for (const DeclRefExpr *Ref : TU.referencesTo(*FD->getBody(), Binding))
    if (const Expr *Assigned = assignedValue(Ctx, Ref))
      Result = join(Result, tensorPlacementImpl(Assigned));
  InProgress.erase(Binding);
  return Result;
}

/// The Index-th non-static data member of a class.
static const FieldDecl *nthField(const RecordDecl *RD, unsigned Index) {
  for (const FieldDecl *Field : RD->fields())
    if (Index-- == 0)
      return Field;
  return nullptr;
}

std::optional<Placement> DeviceOracle::memberPlacement(const MemberExpr *Member) {
  const auto *Field = dyn_cast<FieldDecl>(Member->getMemberDecl());
  if (!Field)
    return Placement::Unknown;
  const RecordDecl *Record = Field->getParent();
  // torch::data::Example's data/target: what LibTorch's datasets and loaders
  // yield, made on the CPU (a dataset that moves them would return other types).
  if (Record->getName() == "Example" && isInTorchNamespace(Record))
    return Placement::Cpu;
  // std::pair's first/second: the element of the pair expression.
  if (Record->isInStdNamespace() && Record->getName() == "pair")
    return elementPlacement(Member->getBase(), Field->getFieldIndex());
  // A parameter of a LibTorch module (`linear->weight`).
  if (isInTorchNamespace(Record))
    return modulePlacement(Member->getBase());
  if (isa<CXXThisExpr>(Member->getBase()->IgnoreParenImpCasts()) && isTensorType(Field->getType()))
    return fieldReadPlacement(Field, Member);
  return fieldPlacement(Field);
}

std::optional<Placement> DeviceOracle::fieldReadPlacement(const FieldDecl *Field, const MemberExpr *Read) {
  const FunctionDecl *FD = enclosingFunction(Ctx, Read);
  const FunctionValueFlow *Flow = FD && FD->getBody() ? TU.valueFlow(FD) : nullptr;
  auto Assignments = Flow ? Flow->assignmentsReaching(Field, Read) : std::nullopt;
  // From the method's entry, or through a call that may store: whatever any
  // method stores (the order in which methods run is not known here).
  if (!Assignments)
    return fieldPlacement(Field);
  std::optional<Placement> Result;
  for (const ValueDefinition *Definition : *Assignments)
    Result = join(Result,
                  TensorDefinitions.factOf(
                      *Definition,
                      [&](const ValueDefinition &Def) {
                        return definitionPlacement({Def.Value, Def.Element}, /*AsDevice=*/false);
                      },
                      [](Placement A, Placement B) { return join(A, B); }, Placement::Unknown, cacheable()));
  return Result ? Result : fieldPlacement(Field);
}

std::optional<Placement> DeviceOracle::moduleMoveTarget(const CXXMemberCallExpr *Call) {
  if (!Call || !Call->getMethodDecl() || !Call->getMethodDecl()->getDeclName().isIdentifier())
    return std::nullopt;
  StringRef Name = Call->getMethodDecl()->getName();
  if (!hasApiTrait(Name, DeviceMove))
    return std::nullopt;
  if (!hasApiTrait(Name, CopyToDevice))
    return Placement::Cpu; // cpu()
  if (Call->getNumArgs() == 0)
    return Placement::Gpu; // cuda()
  return devicePlacement(Call->getArg(0));
}

std::optional<Placement> DeviceOracle::moduleMovedJustBefore(const Expr *Use, const VarDecl *VD) {
  const Stmt *Statement = nullptr;
  const CompoundStmt *Block = enclosingBlock(Ctx, Use, &Statement);
  if (!Block || !Statement)
    return std::nullopt;
  const Stmt *Previous = nullptr;
  for (const Stmt *S : Block->body()) {
    if (S == Statement)
      break;
    if (!TU.referencesTo(*S, VD).empty())
      Previous = S;
  }
  const auto *Expression = dyn_cast_or_null<Expr>(Previous);
  const auto *Move = Expression ? dyn_cast<CXXMemberCallExpr>(ignoreWrappers(Expression)) : nullptr;
  if (!Move)
    return std::nullopt;
  // `model->to(d)` (through the holder's operator->) or `model.to(d)`.
  const Expr *Object = ignoreWrappers(Move->getImplicitObjectArgument());
  if (const auto *Arrow = dyn_cast_or_null<CXXOperatorCallExpr>(Object);
      Arrow && Arrow->getOperator() == OO_Arrow && Arrow->getNumArgs() == 1)
    Object = ignoreWrappers(Arrow->getArg(0));
  const auto *Ref = dyn_cast_or_null<DeclRefExpr>(Object);
  if (!Ref || Ref->getDecl() != VD)
    return std::nullopt;
  return moduleMoveTarget(Move);
}

std::optional<Placement> DeviceOracle::modulePlacement(const Expr *Module) {
  // `lin->weight` reads through the holder's operator->.
  const Expr *E = ignoreWrappers(Module);
  if (const auto *Arrow = dyn_cast_or_null<CXXOperatorCallExpr>(E);
      Arrow && Arrow->getOperator() == OO_Arrow && Arrow->getNumArgs() == 1)
    E = ignoreWrappers(Arrow->getArg(0));
  const auto *Ref = dyn_cast_or_null<DeclRefExpr>(E);
  const auto *VD = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  const CXXRecordDecl *Record = VD ? VD->getType()->getAsCXXRecordDecl() : nullptr;
  if (!VD || !Record || !isInTorchNamespace(Record) || !VD->hasLocalStorage() ||
      isa<ParmVarDecl>(VD) || VD->getType()->isReferenceType())
    return Placement::Unknown;
  // Built here from sizes (`Linear lin(3, 4)`), not copied from another module.
  const auto *Construct = dyn_cast_or_null<CXXConstructExpr>(ignoreWrappers(VD->getInit()));
  if (!Construct || Construct->getNumArgs() == 0 || Construct->getConstructor()->isCopyOrMoveConstructor())
    return Placement::Unknown;
  // A module starts on the CPU and stays there unless moved (`to`, `cuda`),
  // loaded into, or handed to code that may do either.
  const Stmt *Body = owningBody(VD);
  if (!Body)
    return Placement::Unknown;
  // The expression \p E is an operand of, past implicit casts (`fresh->parameters()`
  // converts the LinearImpl * to the Module * that declares parameters()).
  auto User = [&](const Expr *E) -> const Expr * {
    return ancestorSkipping<ImplicitCastExpr, ParenExpr>(Ctx, E).get<Expr>();
  };
  for (const DeclRefExpr *Use : TU.referencesTo(*Body, VD)) {
    const Expr *Accessed = User(Use);
    if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(Accessed)) {
      if (Op->getOperator() == OO_Call)
        continue; // lin(x): its forward
      if (Op->getOperator() != OO_Arrow)
        return Placement::Unknown;
      Accessed = User(Op);
    }
    // `torch::save(lin, path)` writes the parameters out: it cannot move them.
    if (const auto *Save = dyn_cast_or_null<CallExpr>(Accessed);
        Save && hasApiTrait(calleeName(Save), SerializesToHost) &&
        isInTorchNamespace(Save->getDirectCallee()))
      continue;
    const auto *Member = dyn_cast_or_null<MemberExpr>(Accessed);
    if (!Member)
      return Placement::Unknown; // passed on, captured, returned
    if (isa<FieldDecl>(Member->getMemberDecl()) && isTensorType(Member->getType())) {
      if (assignedValue(Ctx, Member) || escapes(Ctx, Member))
        return Placement::Unknown; // `lin->weight = w`: w decides
      continue;
    }
    // A move to the CPU (`model->to(device)` with a CPU device) keeps it there.
    if (const auto *Move = dyn_cast_or_null<CXXMemberCallExpr>(User(Member));
        Move && Move->getCallee()->IgnoreParenImpCasts() == Member &&
        moduleMoveTarget(Move) == Placement::Cpu)
      continue;
    if (!isa<CXXMethodDecl>(Member->getMemberDecl()) ||
        !Member->getMemberDecl()->getDeclName().isIdentifier() ||
        !hasApiTrait(Member->getMemberDecl()->getName(), ModuleKeepsDevice))
      return Placement::Unknown;
  }
  return Placement::Cpu;
}

std::optional<Placement> DeviceOracle::containerAccessPlacement(const Expr *E) {
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E)) {
    // `v[i]` and a dereference `*it` (one argument: `0.1 * t` is a product).
    bool Access = Op->getOperator() == OO_Subscript ||
                  (Op->getOperator() == OO_Star && Op->getNumArgs() == 1);
    if (Access && Op->getNumArgs() >= 1 && !isTensorType(Op->getArg(0)->getType()))
      return elementPlacement(Op->getArg(0), std::nullopt);
    return std::nullopt;
  }
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(E)) {
    const Expr *Object = MC->getImplicitObjectArgument();
    const CXXMethodDecl *Method = MC->getMethodDecl();
    if (Object && Method && !isTensorType(Object->getType()) && Method->getParent()->isInStdNamespace() &&
        containerOp(calleeName(MC)) == ContainerOp::ElementAccess)
      return elementPlacement(Object, std::nullopt);
  }
  return std::nullopt;
}

std::optional<Placement> DeviceOracle::elementPlacement(const Expr *Container,
                                                        std::optional<unsigned> Index) {
  const Expr *C = ignoreWrappers(Container);
  if (!C)
    return Placement::Unknown;
  if (isTensorType(C->getType()))
    return tensorPlacementImpl(C);
  if (const auto *IL = dyn_cast<CXXStdInitializerListExpr>(C))
    return elementPlacement(IL->getSubExpr(), Index);
  // An aggregate of the user's own class: `auto [x, y] = batch;`.
  if (const auto *Record = C->getType()->getAsCXXRecordDecl())
    if (Index && !Record->isInStdNamespace() && !isInTorchNamespace(Record)) {
      const FieldDecl *Field = nthField(Record, *Index);
      return Field && isTensorType(Field->getType()) ? fieldPlacement(Field)
                                                     : std::optional(Placement::Unknown);
    }
  auto JoinAll = [&](llvm::ArrayRef<const Expr *> Elements) {
    std::optional<Placement> Result;
    for (const Expr *Element : Elements)
      Result = join(Result, elementPlacement(Element, std::nullopt));
    return Result;
  };
  auto Pick = [&](llvm::ArrayRef<const Expr *> Elements) -> std::optional<Placement> {
    if (Index && *Index < Elements.size())
      return elementPlacement(Elements[*Index], std::nullopt);
    return JoinAll(Elements);
  };
  if (const auto *Init = dyn_cast<InitListExpr>(C)) {
    std::vector<const Expr *> Elements(Init->inits().begin(), Init->inits().end());
    return Pick(Elements);
  }
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(C)) {
    std::vector<const Expr *> Elements;
    for (const Expr *Arg : Construct->arguments()) {
      const Expr *Inner = ignoreWrappers(Arg);
      if (isa<CXXDefaultArgExpr>(Arg) || !Inner)
        continue;
      // vector(n, value): only the tensor-holding arguments describe elements.
      if (Inner->getType()->isIntegralOrEnumerationType() || Inner->getType()->isPointerType())
        continue;
      Elements.push_back(Arg);
    }
    if (Elements.size() == 1 && !isTensorType(ignoreWrappers(Elements[0])->getType()))
      return elementPlacement(Elements[0], Index); // vector{a, b}: the initializer list
    return Pick(Elements);
  }
  if (const auto *CO = dyn_cast<AbstractConditionalOperator>(C))
    return join(elementPlacement(CO->getTrueExpr(), Index),
                elementPlacement(CO->getFalseExpr(), Index));
  if (const auto *DRE = dyn_cast<DeclRefExpr>(C)) {
    if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
      return containerVariablePlacement(VD, Index, DRE);
    return Placement::Unknown;
  }
  // A container field of the program's own class (`std::vector<Tensor> rows_`).
  if (const auto *Member = dyn_cast<MemberExpr>(C))
    if (const auto *Field = dyn_cast<FieldDecl>(Member->getMemberDecl());
        Field && !Field->getParent()->isInStdNamespace() && !isInTorchNamespace(Field->getParent()))
      return containerFieldPlacement(Field, Index);
  if (const auto *Call = dyn_cast<CallExpr>(C)) {
    const FunctionDecl *FD = Call->getDirectCallee();
    if (isStdMove(Call))
      return elementPlacement(Call->getArg(0), Index);
    if (FD && FD->isInStdNamespace() && FD->getDeclName().isIdentifier() &&
        hasHostApiTrait(FD->getName(), TupleMaker)) {
      std::vector<const Expr *> Args(Call->arg_begin(), Call->arg_end());
      return Pick(Args);
    }
    // A module's parameters()/buffers(): where the module is.
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Call);
        MC && FD && isInTorchNamespace(FD) && !isTensorType(MC->getImplicitObjectArgument()->getType()) &&
        FD->getDeclName().isIdentifier() && hasApiTrait(FD->getName(), ModuleTensors))
      return modulePlacement(MC->getImplicitObjectArgument());
    // chunk/split/unbind/max(dim)/sort/topk/*_ex: on the device of their operands.
    if (FD && isInTorchNamespace(FD))
      return operandsPlacement(Call);
    if (std::optional<Placement> Returned = returnPlacement(Call, Index))
      return Returned;
    return Placement::Unknown;
  }
  return Placement::Unknown;
}

std::optional<Placement> DeviceOracle::containerVariablePlacement(const VarDecl *VD,
                                                                  std::optional<unsigned> Index,
                                                                  const DeclRefExpr *Read) {
  if (isa<ParmVarDecl>(VD))
    return Placement::Unknown;
  if (!VD->hasLocalStorage() && !VD->isStaticLocal()) {
    if (VD->getType().isConstQualified() && VD->getInit())
      return elementPlacement(VD->getInit(), Index);
    return Placement::Unknown;
  }
  const Stmt *Body = owningBody(VD);
  if (!Body || !InProgress.insert(VD).second)
    return std::nullopt;
  // A local's elements are states of its function's flow; a static local's
  // stores of earlier calls reach every read.
  const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  const FunctionValueFlow *Flow = Read && VD->hasLocalStorage() && FD ? TU.valueFlow(FD) : nullptr;
  auto Unseen = [&](std::optional<bool> Reaches) { return Reaches && !*Reaches; };
  std::optional<Placement> Result;
  if (const Expr *Init = VD->getInit(); Init && !(Flow && Unseen(Flow->declarationReaches(VD, Read))))
    Result = elementPlacement(Init, Index);
  for (const DeclRefExpr *Ref : TU.referencesTo(*Body, VD))
    if (!(Flow && Unseen(Flow->storeReaches(Ref, Read))))
      Result = join(Result, containerUsePlacement(Ref, Index));
  InProgress.erase(VD);
  return Result;
}

/// What one use of a container (a variable or a field) puts into it: the tensors
/// it adds or assigns, Unknown when it escapes or is changed in ways not followed,
/// nullopt when it only reads.
std::optional<Placement> DeviceOracle::containerUsePlacement(const Expr *Ref,
                                                             std::optional<unsigned> Index) {
  if (escapes(Ctx, Ref))
    return Placement::Unknown;
  if (const Expr *Assigned = assignedValue(Ctx, Ref))
    return elementPlacement(Assigned, Index);
  DynTypedNodeList Parents = Ctx.getParents(*Ref);
  while (!Parents.empty() && Parents[0].get<ImplicitCastExpr>())
    Parents = Ctx.getParents(Parents[0]);
  if (Parents.empty())
    return std::nullopt;
  // The element an access yields may be assigned to or passed on by reference.
  const Expr *Access = nullptr;
  std::optional<Placement> Result;
  if (const auto *Member = Parents[0].get<MemberExpr>();
      Member && isa<FieldDecl>(Member->getMemberDecl())) {
    Access = Member; // pair.first
  } else if (const auto *Member = Parents[0].get<MemberExpr>()) {
    DynTypedNodeList Calls = Ctx.getParents(*Member);
    const auto *MC = Calls.empty() ? nullptr : Calls[0].get<CXXMemberCallExpr>();
    StringRef Name = MC ? calleeName(MC) : StringRef();
    ContainerOp Op = MC ? containerOp(Name) : ContainerOp::Unknown;
    if (Op == ContainerOp::Add) {
      // Tensors join; an iterator range or another container is not followed.
      for (const Expr *Arg : MC->arguments()) {
        const Expr *Inner = ignoreWrappers(Arg);
        if (!Inner || isa<CXXDefaultArgExpr>(Arg) || Inner->getType()->isIntegralOrEnumerationType())
          continue;
        Result = join(Result, isTensorType(Inner->getType()) ? tensorPlacementImpl(Inner)
                                                             : std::optional(Placement::Unknown));
      }
      return Result;
    }
    if (Op == ContainerOp::Unknown)
      return Placement::Unknown; // data(), swap(), ...
    Access = MC;
  } else if (const auto *Op = Parents[0].get<CXXOperatorCallExpr>()) {
    if (Op->getOperator() == OO_Subscript)
      Access = Op;
  } else if (const auto *Subscript = Parents[0].get<ArraySubscriptExpr>()) {
    Access = Subscript;
  } else if (const auto *Range = Parents[0].get<VarDecl>()) {
    // `for (auto &t : v) t = ...;` writes the elements through the loop variable.
    if (const CXXForRangeStmt *Loop = rangeForDeclaring(Ctx, Range)) {
      const VarDecl *LoopVar = Loop->getLoopVariable();
      if (isMutableReference(LoopVar->getType()))
        for (const DeclRefExpr *Write : TU.referencesTo(*Loop->getBody(), LoopVar))
          Result = join(Result, storedPlacement(Write));
    }
  }
  if (Access)
    Result = join(Result, storedPlacement(Access));
  return Result;
}

std::optional<Placement> DeviceOracle::fieldPlacement(const FieldDecl *Field) {
  if (!isTensorType(Field->getType()))
    return Placement::Unknown;
  return fieldValuePlacement(Field, std::nullopt, /*Container=*/false);
}

std::optional<Placement> DeviceOracle::containerFieldPlacement(const FieldDecl *Field,
                                                               std::optional<unsigned> Index) {
  return fieldValuePlacement(Field, Index, /*Container=*/true);
}

/// A tensor field's placement, or (Container) the placement of the tensors a
/// container field holds: the join of every value the main file stores into it.
std::optional<Placement> DeviceOracle::fieldValuePlacement(const FieldDecl *Field,
                                                           std::optional<unsigned> Index,
                                                           bool Container) {
  bool Cacheable = !Index;
  if (Cacheable) {
    auto Cached = FieldCache.find(Field);
    if (Cached != FieldCache.end())
      return Cached->second;
  }
  const SourceManager &SM = Ctx.getSourceManager();
  const auto *Record = dyn_cast<CXXRecordDecl>(Field->getParent());
  if (!isClosedProgramField(SM, Field))
    return Placement::Unknown;
  if (!FieldsAndCalleesInProgress.insert(Field).second)
    return std::nullopt;
  auto valueOf = [&](const Expr *Value) {
    return Container ? elementPlacement(Value, Index) : tensorPlacementImpl(Value);
  };
  std::optional<Placement> Result;
  if (const Expr *Init = Field->getInClassInitializer())
    Result = join(Result, valueOf(Init));
  for (const CXXConstructorDecl *Ctor : Record->ctors())
    for (const CXXCtorInitializer *Init : Ctor->inits())
      if (Init->getMember() == Field && Init->isWritten())
        Result = join(Result, valueOf(Init->getInit()));
  // Stores anywhere in the main file (the class is invisible elsewhere):
  // assignments, escapes, additions to a container, aggregate initialisation `Batch{a, b}`.
  for (const Decl *D : Ctx.getTranslationUnitDecl()->decls()) {
    if (!SM.isInMainFile(SM.getExpansionLoc(D->getLocation())))
      continue;
    auto Aggregates = match(decl(forEachDescendant(initListExpr().bind("init"))), *D, Ctx);
    for (const auto &Node : Aggregates) {
      const auto *Init = Node.getNodeAs<InitListExpr>("init");
      const CXXRecordDecl *Initialised = Init->getType()->getAsCXXRecordDecl();
      if (!Initialised || Initialised->getCanonicalDecl() != Record->getCanonicalDecl())
        continue;
      const InitListExpr *Semantic = Init->isSemanticForm() ? Init : Init->getSemanticForm();
      if (Semantic && Field->getFieldIndex() < Semantic->getNumInits())
        Result = join(Result, valueOf(Semantic->getInit(Field->getFieldIndex())));
    }
    auto Uses = match(decl(forEachDescendant(memberExpr(member(equalsNode(Field))).bind("use"))), *D, Ctx);
    for (const auto &Node : Uses) {
      const auto *Use = Node.getNodeAs<MemberExpr>("use");
      Result = join(Result, Container ? containerUsePlacement(Use, Index) : storedPlacement(Use));
    }
  }
  FieldsAndCalleesInProgress.erase(Field);
  if (!Result)
    Result = Placement::Unknown; // never given a value we can see
  if (Cacheable && cacheable())
    FieldCache[Field] = Result;
  return Result;
}

const FunctionDecl *DeviceOracle::followableCallee(const CallExpr *Call) {
  const FunctionDecl *Callee = Call->getDirectCallee();
  const FunctionDecl *Definition = nullptr;
  if (!Callee || !Callee->hasBody(Definition) || !Definition || isInTorchNamespace(Definition) ||
      Ctx.getSourceManager().isInSystemHeader(Definition->getLocation()))
    return nullptr;
  const auto *Method = dyn_cast<CXXMethodDecl>(Definition);
  if (Method && Method->isVirtual() && !Method->hasAttr<FinalAttr>() &&
      !Method->getParent()->hasAttr<FinalAttr>())
    return nullptr; // an override elsewhere may run instead
  return Definition;
}

bool DeviceOracle::pushCallBindings(const CallExpr *Call) {
  const FunctionDecl *Definition = followableCallee(Call);
  // Bounded depth; recursion gives nothing new.
  if (!Definition || ParameterBindings.size() >= 4 ||
      !FieldsAndCalleesInProgress.insert(Definition).second)
    return false;
  // Operator calls of methods (a lambda's operator()) pass the object first.
  unsigned ArgOffset = isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(Definition) ? 1 : 0;
  llvm::DenseMap<const ParmVarDecl *, Placement> Bindings;
  for (unsigned I = 0; I < Definition->getNumParams() && I + ArgOffset < Call->getNumArgs(); ++I)
    if (isTensorType(Definition->getParamDecl(I)->getType()))
      Bindings[Definition->getParamDecl(I)] = tensorPlacement(Call->getArg(I + ArgOffset));
  ParameterBindings.push_back(std::move(Bindings));
  BoundCallees.push_back(Definition);
  return true;
}

void DeviceOracle::popCallBindings() {
  ParameterBindings.pop_back();
  FieldsAndCalleesInProgress.erase(BoundCallees.back());
  BoundCallees.pop_back();
}

std::optional<Placement> DeviceOracle::returnPlacement(const CallExpr *Call,
                                                       std::optional<unsigned> Index) {
  if (!pushCallBindings(Call))
    return std::nullopt;
  const FunctionDecl *Definition = BoundCallees.back();
  std::optional<Placement> Result;
  bool ReturnsTensor = isTensorType(Definition->getReturnType());
  auto Returns = match(findAll(returnStmt(forFunction(equalsNode(Definition))).bind("return")),
                       *Definition->getBody(), Ctx);
  for (const auto &Node : Returns) {
    const Expr *Value = Node.getNodeAs<ReturnStmt>("return")->getRetValue();
    if (!Value)
      continue;
    Result = join(Result, ReturnsTensor ? tensorPlacementImpl(Value) : elementPlacement(Value, Index));
  }
  popCallBindings();
  return Result;
}

} // namespace torch_syncfree
