#include "DeviceInference.h"
#include "TorchApi.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/Analysis/CFG.h"
#include <deque>
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "llvm/ADT/StringSwitch.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace torch_syncfree {

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
  const DeclContext *DC = VD->getParentFunctionOrMethod();
  if (const auto *FD = dyn_cast_or_null<FunctionDecl>(DC))
    return FD->getBody();
  return nullptr;
}

static bool isNonConstRefParam(const FunctionDecl *FD, unsigned ArgIndex) {
  if (!FD || ArgIndex >= FD->getNumParams())
    return false;
  QualType T = FD->getParamDecl(ArgIndex)->getType();
  return T->isReferenceType() && !T.getNonReferenceType().isConstQualified();
}

DeviceOracle::FunctionCFG *DeviceOracle::cfgFor(const FunctionDecl *FD) {
  auto &Slot = CFGs[FD];
  if (!Slot) {
    Slot = std::make_unique<FunctionCFG>();
    CFG::BuildOptions Options;
    Options.setAllAlwaysAdd();
    Slot->Graph = CFG::buildCFG(FD, FD->getBody(), &Ctx, Options);
    if (Slot->Graph)
      for (const CFGBlock *Block : *Slot->Graph)
        for (unsigned I = 0; I < Block->size(); ++I)
          if (std::optional<CFGStmt> Element = (*Block)[I].getAs<CFGStmt>())
            Slot->Position.try_emplace(Element->getStmt(), Block, I);
  }
  return Slot->Graph ? Slot.get() : nullptr;
}

/// The value a CFG element gives VD, when the element defines it: its
/// declaration's initialiser, or the right side of an assignment to it.
/// Sets Escapes for a call that may change VD through a non-const reference.
static const Expr *definitionValue(const Stmt *S, const VarDecl *VD, bool &IsDefinition,
                                   bool &Escapes) {
  IsDefinition = false;
  if (const auto *DS = dyn_cast<DeclStmt>(S)) {
    for (const Decl *D : DS->decls())
      if (D == VD) {
        IsDefinition = true;
        return VD->getInit();
      }
    return nullptr;
  }
  auto IsVar = [&](const Expr *E) {
    const auto *Ref = dyn_cast_or_null<DeclRefExpr>(E ? E->IgnoreParenImpCasts() : nullptr);
    return Ref && Ref->getDecl() == VD;
  };
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S)) {
    if (Op->getOperator() == OO_Equal && Op->getNumArgs() == 2 && IsVar(Op->getArg(0))) {
      IsDefinition = true;
      return Op->getArg(1);
    }
    return nullptr;
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(S)) {
    if (BO->getOpcode() == BO_Assign && IsVar(BO->getLHS())) {
      IsDefinition = true;
      return BO->getRHS();
    }
    return nullptr;
  }
  if (const auto *Call = dyn_cast<CallExpr>(S)) {
    if (isa<CXXMemberCallExpr>(Call))
      return nullptr;
    const FunctionDecl *FD = Call->getDirectCallee();
    if (FD && isInTorchNamespace(FD))
      return nullptr;
    for (unsigned I = 0; I < Call->getNumArgs(); ++I)
      if (IsVar(Call->getArg(I)) &&
          (!FD || (I < FD->getNumParams() &&
                   FD->getParamDecl(I)->getType()->isReferenceType() &&
                   !FD->getParamDecl(I)->getType().getNonReferenceType().isConstQualified()))) {
        IsDefinition = true;
        Escapes = true;
      }
  }
  return nullptr;
}

std::optional<std::vector<const Expr *>>
DeviceOracle::reachingValues(const VarDecl *VD, const DeclRefExpr *Use, bool &Escapes) {
  const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  if (!FD || !FD->getBody() || !Use)
    return std::nullopt;
  FunctionCFG *Graph = cfgFor(FD);
  if (!Graph)
    return std::nullopt;
  // The CFG element evaluating the use (or the nearest enclosing one).
  const Stmt *Current = Use;
  auto Found = Graph->Position.find(Current);
  while (Found == Graph->Position.end()) {
    DynTypedNodeList Parents = Ctx.getParents(*Current);
    if (Parents.empty() || !Parents[0].get<Stmt>())
      return std::nullopt;
    Current = Parents[0].get<Stmt>();
    if (isa<LambdaExpr>(Current))
      return std::nullopt; // a capture: when the lambda runs is not known here
    Found = Graph->Position.find(Current);
  }
  std::vector<const Expr *> Values;
  // Scans Block's elements [0, End) backwards for the last definition of VD.
  auto LastDefinition = [&](const CFGBlock *Block, unsigned End) {
    for (unsigned I = End; I-- > 0;) {
      std::optional<CFGStmt> Element = (*Block)[I].getAs<CFGStmt>();
      if (!Element)
        continue;
      bool IsDefinition = false;
      const Expr *Value = definitionValue(Element->getStmt(), VD, IsDefinition, Escapes);
      if (IsDefinition) {
        if (Value)
          Values.push_back(Value);
        return true;
      }
    }
    return false;
  };
  auto [UseBlock, UseIndex] = Found->second;
  if (LastDefinition(UseBlock, UseIndex))
    return Values;
  llvm::SmallPtrSet<const CFGBlock *, 16> Visited;
  std::deque<const CFGBlock *> Work(UseBlock->pred_begin(), UseBlock->pred_end());
  while (!Work.empty()) {
    const CFGBlock *Block = Work.front();
    Work.pop_front();
    if (!Block || !Visited.insert(Block).second)
      continue;
    if (LastDefinition(Block, Block->size()))
      continue;
    if (Block == &Graph->Graph->getEntry())
      Escapes = true; // reached the start with no definition (a parameter, a global)
    Work.insert(Work.end(), Block->pred_begin(), Block->pred_end());
  }
  return Values;
}

std::optional<Placement> DeviceOracle::variablePlacement(const VarDecl *VD, bool AsDevice,
                                                         const DeclRefExpr *Use) {
  // Flow-sensitive first: the definitions that reach this use.
  if (Use && VD->hasLocalStorage() && !isa<ParmVarDecl>(VD) &&
      !VD->getType()->isReferenceType() && InProgress.insert(VD).second) {
    bool Escapes = false;
    std::optional<std::vector<const Expr *>> Values = reachingValues(VD, Use, Escapes);
    std::optional<Placement> Result;
    if (Values) {
      for (const Expr *Value : *Values) {
        const auto *Construct = dyn_cast<CXXConstructExpr>(ignoreWrappers(Value));
        if (Construct && Construct->getNumArgs() == 0)
          continue; // `Tensor t;`: undefined until assigned
        Result = join(Result, AsDevice ? devicePlacement(Value) : tensorPlacementImpl(Value));
      }
      if (Escapes)
        Result = join(Result, std::optional<Placement>(Placement::Unknown));
    }
    InProgress.erase(VD);
    if (Values) {
      if (!Result && !AsDevice)
        return Placement::Unknown;
      return Result;
    }
  }
  return variablePlacementAnywhere(VD, AsDevice);
}

std::optional<Placement> DeviceOracle::variablePlacementAnywhere(const VarDecl *VD, bool AsDevice) {
  if (isa<ParmVarDecl>(VD))
    return Placement::Unknown;
  // Constants such as c10::kCUDA: their initialiser says it all.
  if (!VD->hasLocalStorage() && !VD->isStaticLocal()) {
    if (VD->getType().isConstQualified() && VD->getInit())
      return AsDevice ? devicePlacement(VD->getInit()) : tensorPlacementImpl(VD->getInit());
    return Placement::Unknown;
  }
  const Stmt *Body = owningBody(VD);
  if (!Body || !InProgress.insert(VD).second)
    return std::nullopt; // a cycle (x = x.cuda()): the other definitions decide
  auto Evaluate = [&](const Expr *Value) -> std::optional<Placement> {
    return AsDevice ? devicePlacement(Value) : tensorPlacementImpl(Value);
  };
  std::optional<Placement> Result;
  if (const Expr *Init = VD->getInit()) {
    // `Tensor t;` is an undefined tensor: it takes a device only when assigned.
    const auto *Construct = dyn_cast<CXXConstructExpr>(ignoreWrappers(Init));
    if (!(Construct && Construct->getNumArgs() == 0))
      Result = Evaluate(Init);
  }
  auto Refs = match(findAll(declRefExpr(to(varDecl(equalsNode(VD)))).bind("ref")),
                    *Body, Ctx);
  for (const auto &Node : Refs) {
    const auto *Ref = Node.getNodeAs<DeclRefExpr>("ref");
    DynTypedNodeList Parents = Ctx.getParents(*Ref);
    if (Parents.empty())
      continue;
    const Expr *Parent = Parents[0].get<Expr>();
    if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(Parent)) {
      if (Op->getOperator() == OO_Equal && Op->getNumArgs() == 2 &&
          ignoreWrappers(Op->getArg(0)) == Ref) {
        Result = join(Result, Evaluate(Op->getArg(1)));
        continue;
      }
    }
    if (const auto *BO = dyn_cast_or_null<BinaryOperator>(Parent)) {
      if (BO->isAssignmentOp() && ignoreWrappers(BO->getLHS()) == Ref)
        Result = join(Result, Evaluate(BO->getRHS()));
      continue;
    }
    // Passed by non-const reference to a function we cannot see: anything goes.
    if (const auto *Call = dyn_cast_or_null<CallExpr>(Parent)) {
      if (isa<CXXOperatorCallExpr>(Call) || isa<CXXMemberCallExpr>(Call))
        continue;
      const FunctionDecl *FD = Call->getDirectCallee();
      for (unsigned I = 0; I < Call->getNumArgs(); ++I)
        if (ignoreWrappers(Call->getArg(I)) == Ref &&
            (!FD || isNonConstRefParam(FD, I)) && !isInTorchNamespace(FD))
          Result = join(Result, std::optional<Placement>(Placement::Unknown));
    }
  }
  InProgress.erase(VD);
  if (!Result && !AsDevice)
    return Placement::Unknown; // never given a value we can see
  return Result;
}

std::optional<Placement> DeviceOracle::devicePlacement(const Expr *E) {
  E = ignoreWrappers(E);
  if (!E)
    return std::nullopt;
  QualType T = E->getType();
  if (isTensorType(T))
    return tensorPlacement(E); // to(other_tensor)
  if (isNonDeviceOptionType(T) || T->isBooleanType())
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
      return devicePlacement(Object);          // opts.dtype(...) keeps opts' device
    }
    if (Object && isDeviceType(Object->getType()))
      return devicePlacement(Object);
    return isDeviceType(T) || isTensorOptionsType(T) ? std::optional(Placement::Unknown)
                                                     : std::nullopt;
  }
  if (const auto *Call = dyn_cast<CallExpr>(E)) {
    StringRef Name = calleeName(Call);
    const FunctionDecl *FD = Call->getDirectCallee();
    if (FD && isInTorchNamespace(FD)) {
      if (Name == "device" && Call->getNumArgs() == 1)
        return devicePlacement(Call->getArg(0)); // torch::device(kCUDA)
      if (isTensorOptionsType(T))
        return std::nullopt; // torch::dtype(...), torch::requires_grad(...)
    }
  }
  if (isDeviceType(T) || isTensorOptionsType(T))
    return Placement::Unknown;
  return std::nullopt;
}

std::optional<Placement> DeviceOracle::factoryPlacement(const CallExpr *Call) {
  // The device is in the TensorOptions argument, if any was written.
  const FunctionDecl *FD = Call->getDirectCallee();
  std::optional<Placement> Device;
  for (unsigned I = 0; I < Call->getNumArgs() && I < FD->getNumParams(); ++I) {
    const Expr *Arg = Call->getArg(I);
    if (isa<CXXDefaultArgExpr>(Arg))
      continue;
    QualType ParamType = FD->getParamDecl(I)->getType();
    if (isTensorOptionsType(ParamType) || isDeviceType(ParamType))
      Device = join(Device, devicePlacement(Arg));
  }
  return Device;
}

std::optional<Placement> DeviceOracle::operandsPlacement(const CallExpr *Call) {
  std::optional<Placement> Result;
  bool SawTensor = false;
  auto Visit = [&](const Expr *Arg) {
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
    if (const auto *Init = dyn_cast<InitListExpr>(Arg))
      for (const Expr *Element : Init->inits())
        if (isTensorType(Element->getType())) {
          SawTensor = true;
          Result = join(Result, tensorPlacementImpl(Element));
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
  return tensorPlacementImpl(E).value_or(Placement::Unknown);
}

std::optional<Placement> DeviceOracle::tensorPlacementImpl(const Expr *E) {
  E = ignoreWrappers(E);
  if (!E)
    return Placement::Unknown;
  auto Cached = TensorCache.find(E);
  if (Cached != TensorCache.end())
    return Cached->second;

  std::optional<Placement> Result = Placement::Unknown;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
      Result = variablePlacement(VD, /*AsDevice=*/false, DRE);
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
      else if (Name == "to" || Name.starts_with("new_")) {
        std::optional<Placement> Target;
        for (const Expr *Arg : MC->arguments())
          if (!isa<CXXDefaultArgExpr>(Arg))
            if ((Target = devicePlacement(Arg)))
              break;
        Result = Target ? Target : tensorPlacementImpl(Object);
      } else {
        // Tensor methods compute on the device of their operands.
        Result = operandsPlacement(MC);
      }
    } else {
      Result = Placement::Unknown; // a member call on a module, a loader, ...
    }
  } else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E)) {
    if (Op->getOperator() == OO_Equal && Op->getNumArgs() == 2)
      Result = tensorPlacementImpl(Op->getArg(1));
    else
      Result = operandsPlacement(Op);
  } else if (const auto *Call = dyn_cast<CallExpr>(E)) {
    const FunctionDecl *FD = Call->getDirectCallee();
    StringRef Name = calleeName(Call);
    if (FD && isInTorchNamespace(FD)) {
      if (isTensorFactoryName(Name)) {
        Result = factoryPlacement(Call);
        if (!Result)
          Result = Placement::Cpu; // factories default to the CPU
      } else if (Name.ends_with("_like")) {
        Result = factoryPlacement(Call);
        if (!Result)
          Result = operandsPlacement(Call);
      } else {
        Result = operandsPlacement(Call);
      }
    }
    // Functions outside LibTorch are unseen here: Unknown.
  }
  // Results computed inside a cycle are partial: cache only complete ones.
  if (InProgress.empty())
    TensorCache[E] = Result;
  return Result;
}

} // namespace torch_syncfree
