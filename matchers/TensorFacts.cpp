#include "TensorFacts.h"
#include "ApiFacts.h"
#include "TensorStorage.h"
#include "TorchApi.h"
#include "TranslationUnitAnalysis.h"
#include "analysis/ValueFlow.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"

using namespace clang;

namespace torch_syncfree {

static ElementKind kindOfScalarTypeExpr(const Expr *E) {
  E = ignoreWrappers(E);
  if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(E)) {
    StringRef Name = DRE->getDecl()->getName();
    if (Name == "kBool" || Name == "Bool")
      return ElementKind::Bool;
    if (Name == "kLong" || Name == "kInt" || Name == "kShort" || Name == "kByte" ||
        Name == "kChar" || Name == "Long" || Name == "Int")
      return ElementKind::Integer;
    if (Name == "kFloat" || Name == "kDouble" || Name == "kHalf" || Name == "kBFloat16" ||
        Name == "Float" || Name == "Double")
      return ElementKind::Floating;
    if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
      if (VD->getType().isConstQualified() && VD->getInit())
        return kindOfScalarTypeExpr(VD->getInit());
  }
  if (const auto *CE = dyn_cast_or_null<CXXConstructExpr>(E))
    if (CE->getNumArgs() == 1)
      return kindOfScalarTypeExpr(CE->getArg(0));
  return ElementKind::Unknown;
}

/// One elementKind() question: the fixpoint over the definitions of the
/// variables it reads (analysis/ValueFlow.h).
struct KindQuery {
  TranslationUnitAnalysis &TU;
  DefinitionFixpoint<ElementKind> Definitions;
  /// Fields whose program-wide stores are being joined.
  llvm::SmallPtrSet<const FieldDecl *, 4> FieldsInProgress;
  /// Containers whose stores are being joined (`v.push_back(v.back())`).
  llvm::SmallPtrSet<const ValueDecl *, 4> ContainersInProgress;
};

static ElementKind kindOf(KindQuery &Q, const Expr *E);

static ElementKind joinKinds(ElementKind A, ElementKind B) { return A == B ? A : ElementKind::Unknown; }

/// A variable's kind at a read: the join over the definitions reaching it
/// (flow-sensitive: `idx = idx.to(torch::kLong)` changes it); a constant
/// global, or a read the core cannot place (a lambda), its initialiser.
static ElementKind variableKind(KindQuery &Q, const DeclRefExpr *Read) {
  const auto *VD = dyn_cast<VarDecl>(Read->getDecl());
  if (!VD || isa<ParmVarDecl>(VD))
    return ElementKind::Unknown;
  const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  const FunctionValueFlow *Flow = FD && VD->hasLocalStorage() ? Q.TU.valueFlow(FD) : nullptr;
  std::optional<ReachingDefinitions> Reaching = Flow ? Flow->reachingAt(VD, Read) : std::nullopt;
  if (!Reaching)
    return VD->getInit() ? kindOf(Q, VD->getInit()) : ElementKind::Unknown;
  if (Reaching->FromEntry)
    return ElementKind::Unknown;
  std::optional<ElementKind> Result;
  for (unsigned Index : Reaching->Definitions) {
    const ValueDefinition &Definition = Flow->definitions()[Index];
    const auto *Construct = dyn_cast_or_null<CXXConstructExpr>(ignoreWrappers(Definition.Value));
    if (Definition.How == ValueDefinition::Kind::Assigned && Definition.Value && !Definition.Element &&
        Construct && Construct->getNumArgs() == 0)
      continue; // `Tensor t;`: undefined until assigned
    if (Definition.isOpaque() || !Definition.Value || Definition.Element)
      return ElementKind::Unknown;
    std::optional<ElementKind> Kind = Q.Definitions.factOf(
        Definition, [&](const ValueDefinition &Def) { return std::optional(kindOf(Q, Def.Value)); },
        joinKinds, ElementKind::Unknown, /*MaySettle=*/true);
    if (Kind)
      Result = Result ? joinKinds(*Result, *Kind) : *Kind;
  }
  return Result.value_or(ElementKind::Unknown);
}

/// A tensor field's kind at a read: the join over the values it may see there
/// (the method's stores that reach it, else every store of the program).
static ElementKind fieldKind(KindQuery &Q, const MemberExpr *Read) {
  const auto *Field = dyn_cast<FieldDecl>(Read->getMemberDecl());
  if (!Field || !isTensorType(Field->getType()) || !storageOf(Q.TU.context(), Read))
    return ElementKind::Unknown;
  std::optional<StoredValues> Values = fieldValuesAt(Q.TU, Field, Read);
  if (!Values)
    return ElementKind::Unknown;
  return joinFieldValues<ElementKind>(
      Field, *Values, Q.Definitions, Q.FieldsInProgress, [&](const Expr *Value) { return kindOf(Q, Value); },
      joinKinds, ElementKind::Unknown);
}

/// A dtype named anywhere in an options/dtype argument: `torch::kLong`,
/// `torch::dtype(torch::kBool)`, `opts.dtype(torch::kLong).device(...)`.
static ElementKind kindFromOptions(KindQuery &Q, const Expr *E) {
  E = ignoreWrappers(E);
  if (!E)
    return ElementKind::Unknown;
  ElementKind Direct = kindOfScalarTypeExpr(E);
  if (Direct != ElementKind::Unknown)
    return Direct;
  if (const auto *Call = dyn_cast<CallExpr>(E)) {
    StringRef Name = calleeName(Call);
    if (Name == "dtype" && Call->getNumArgs() >= 1)
      return kindOfScalarTypeExpr(Call->getArg(0));
    if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Call)) {
      // `t.options()`: the dtype of t.
      if (Name == "options" && isTensorType(MC->getImplicitObjectArgument()->getType()))
        return kindOf(Q, MC->getImplicitObjectArgument());
      return kindFromOptions(Q, MC->getImplicitObjectArgument());
    }
  }
  return ElementKind::Unknown;
}

static ElementKind kindOf(KindQuery &Q, const Expr *E) {
  E = ignoreWrappers(E);
  if (!E)
    return ElementKind::Unknown;
  // `std::get<1>(x.topk(k))`: the indices of the (values, indices) pairs.
  if (const auto *Call = dyn_cast<CallExpr>(E); Call && Call->getNumArgs() == 1 && calleeName(Call) == "get") {
    const FunctionDecl *Get = Call->getDirectCallee();
    const TemplateArgumentList *Args = Get ? Get->getTemplateSpecializationArgs() : nullptr;
    const auto *Pair = dyn_cast<CallExpr>(ignoreWrappers(Call->getArg(0)));
    if (Get && Get->isInStdNamespace() && Args && Args->size() >= 1 &&
        Args->get(0).getKind() == TemplateArgument::Integral && Pair && isInTorchNamespace(Pair->getDirectCallee()) &&
        hasApiTrait(calleeName(Pair), ValuesAndIndices))
      return Args->get(0).getAsIntegral() == 1 ? ElementKind::Integer : kindOf(Q, calleeObject(Pair));
  }
  // An element of a local container: the join of the kinds of the stores
  // that reach this read (the value-flow core), as its pinning and device are.
  const Expr *ContainerRead = nullptr;
  if (const ValueDecl *Container = containerOfElement(Q.TU.context(), E, &ContainerRead)) {
    std::optional<std::vector<TensorStore>> Stores = containerStoresReaching(Q.TU, Container, ContainerRead);
    if (!Stores || Stores->empty() || !Q.ContainersInProgress.insert(Container).second)
      return ElementKind::Unknown;
    std::optional<ElementKind> Result;
    for (const TensorStore &Store : *Stores) {
      ElementKind Kind = kindOf(Q, Store.Value);
      Result = Result ? joinKinds(*Result, Kind) : Kind;
    }
    Q.ContainersInProgress.erase(Container);
    return Result.value_or(ElementKind::Unknown);
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
    return variableKind(Q, DRE);
  if (const auto *Member = dyn_cast<MemberExpr>(E))
    return fieldKind(Q, Member);
  if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(E)) {
    switch (Op->getOperator()) {
    case OO_Greater: case OO_Less: case OO_GreaterEqual: case OO_LessEqual:
    case OO_EqualEqual: case OO_ExclaimEqual: case OO_Exclaim:
      return ElementKind::Bool;
    case OO_Amp: case OO_Pipe: case OO_Caret: case OO_Tilde:
      return Op->getNumArgs() >= 1 ? kindOf(Q, Op->getArg(0)) : ElementKind::Unknown;
    case OO_Subscript: // `idx[0]` selects elements: their kind is the tensor's
      return isTensorType(Op->getArg(0)->getType()) ? kindOf(Q, Op->getArg(0)) : ElementKind::Unknown;
    case OO_Slash: // true division
      return ElementKind::Floating;
    case OO_Plus: case OO_Minus: case OO_Star: {
      // Arithmetic with a floating tensor or a floating host value is floating.
      bool AnyFloating = false;
      for (const Expr *Arg : Op->arguments()) {
        const Expr *Bare = Arg->IgnoreParenImpCasts();
        AnyFloating |= Bare->getType()->isRealFloatingType() ||
                       (isTensorType(Bare->getType()) && kindOf(Q, Bare) == ElementKind::Floating);
      }
      return AnyFloating ? ElementKind::Floating : ElementKind::Unknown;
    }
    default:
      return ElementKind::Unknown;
    }
  }
  if (const auto *Call = dyn_cast<CallExpr>(E)) {
    StringRef Name = calleeName(Call);
    if (!isInTorchNamespace(Call->getDirectCallee()))
      return ElementKind::Unknown;
    if (hasApiTrait(Name, BoolResult))
      return ElementKind::Bool;
    if (hasApiTrait(Name, IntegerResult) || Name == "randint")
      return ElementKind::Integer;
    if (Name == "to") { // to(kBool), to(device, kLong)
      for (const Expr *Arg : Call->arguments())
        if (!isa<CXXDefaultArgExpr>(Arg)) {
          ElementKind K = kindFromOptions(Q, Arg);
          if (K != ElementKind::Unknown)
            return K;
        }
      if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Call))
        return kindOf(Q, MC->getImplicitObjectArgument());
    }
    if (Name == "zeros" || Name == "ones" || Name == "empty" || Name == "full" ||
        Name == "tensor" || Name == "arange" || Name == "scalar_tensor") {
      for (const Expr *Arg : Call->arguments())
        if (!isa<CXXDefaultArgExpr>(Arg) && isTensorOptionsType(Arg->getType())) {
          ElementKind K = kindFromOptions(Q, Arg);
          if (K != ElementKind::Unknown)
            return K;
        }
      if (Name != "arange")
        return ElementKind::Floating;
      // arange with integer bounds (and no dtype) is int64, with a floating one float.
      bool AnyFloating = false, AnyOther = false;
      for (const Expr *Arg : Call->arguments()) {
        if (isa<CXXDefaultArgExpr>(Arg) || isTensorOptionsType(Arg->getType()))
          continue;
        const Expr *Inner = ignoreWrappers(Arg);
        QualType T = Inner ? Inner->IgnoreImpCasts()->getType() : Arg->getType();
        AnyFloating |= T->isFloatingType();
        AnyOther |= !T->isIntegerType() && !T->isFloatingType();
      }
      return AnyOther ? ElementKind::Unknown : AnyFloating ? ElementKind::Floating : ElementKind::Integer;
    }
    if (Name == "rand" || Name == "randn")
      return ElementKind::Floating;
    // Shape and order ops keep the element kind of their object.
    if (hasApiTrait(Name, KindPreserving)) {
      if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Call))
        return kindOf(Q, MC->getImplicitObjectArgument());
      if (Call->getNumArgs() >= 1 && isTensorType(Call->getArg(0)->getType()))
        return kindOf(Q, Call->getArg(0)); // torch::abs(x), torch::max(x)
    }
    // Sums and products: integers and bools sum to int64, floats stay floating.
    if (Name == "sum" || Name == "prod" || Name == "cumsum" || Name == "nansum") {
      const Expr *Object = nullptr;
      if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Call))
        Object = MC->getImplicitObjectArgument();
      else if (Call->getNumArgs() >= 1 && isTensorType(Call->getArg(0)->getType()))
        Object = Call->getArg(0);
      ElementKind K = Object ? kindOf(Q, Object) : ElementKind::Unknown;
      return K == ElementKind::Bool ? ElementKind::Integer : K;
    }
    // Results that are floating whatever the input: means and norms, losses,
    // transcendental functions, layers and matrix products.
    if (hasApiTrait(Name, FloatingResult))
      return ElementKind::Floating;
  }
  return ElementKind::Unknown;
}

ElementKind elementKind(TranslationUnitAnalysis &TU, const Expr *Tensor) {
  KindQuery Q{TU, {}, {}, {}};
  return kindOf(Q, Tensor);
}

bool isZeroDim(const Expr *E) {
  E = ignoreWrappers(E);
  if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(E)) {
    if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
      if (!isa<ParmVarDecl>(VD) && VD->getInit())
        return isZeroDim(VD->getInit());
    return false;
  }
  const auto *Call = dyn_cast_or_null<CallExpr>(E);
  if (!Call || !isInTorchNamespace(Call->getDirectCallee()))
    return false;
  StringRef Name = calleeName(Call);
  if (Name == "scalar_tensor")
    return true;
  const auto *MC = dyn_cast<CXXMemberCallExpr>(Call);
  bool NoArgs = explicitArgCount(Call) == 0;
  if (MC && NoArgs && hasApiTrait(Name, FullReduction))
    return true;
  // A loss with its default reduction (mean): `cross_entropy(logits, target)`.
  if (!MC && hasApiTrait(Name, Loss) && explicitArgCount(Call) == 2)
    return true;
  if (!MC && hasApiTrait(Name, FullReduction) && explicitArgCount(Call) == 1)
    return true; // torch::argmax(x)
  if (MC && (Name == "to" || Name == "cuda" || Name == "detach" || Name == "clone"))
    return isZeroDim(MC->getImplicitObjectArgument());
  return false;
}

/// A braced list with at least one element, through the constructors that
/// carry it (`TensorDataContainer`, `IntArrayRef`, `std::initializer_list`).
static bool nonEmptyBracedList(const Expr *E) {
  for (unsigned Steps = 0; E && Steps < 8; ++Steps) {
    E = ignoreWrappers(E);
    if (const auto *List = dyn_cast_or_null<InitListExpr>(E))
      return List->getNumInits() > 0;
    if (const auto *StdList = dyn_cast_or_null<CXXStdInitializerListExpr>(E)) {
      E = StdList->getSubExpr();
      continue;
    }
    const auto *Construct = dyn_cast_or_null<CXXConstructExpr>(E);
    if (!Construct || Construct->getNumArgs() == 0)
      return false;
    E = Construct->getArg(0);
  }
  return false;
}

bool hasDimensions(TranslationUnitAnalysis &TU, const Expr *E, unsigned Depth) {
  E = ignoreWrappers(E);
  if (!E || Depth > 4)
    return false;
  if (const auto *Read = dyn_cast<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(Read->getDecl());
    const auto *FD = VD ? dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod()) : nullptr;
    const FunctionValueFlow *Flow = FD && VD->hasLocalStorage() ? TU.valueFlow(FD) : nullptr;
    auto Assignments = Flow ? Flow->assignmentsReaching(VD, Read) : std::nullopt;
    if (!Assignments || Assignments->empty())
      return false;
    for (const ValueDefinition *Definition : *Assignments)
      if (Definition->Element || !hasDimensions(TU, Definition->Value, Depth + 1))
        return false;
    return true;
  }
  const auto *Call = dyn_cast<CallExpr>(E);
  if (!Call || !isInTorchNamespace(Call->getDirectCallee()))
    return false;
  StringRef Name = calleeName(Call);
  if (const auto *MC = dyn_cast<CXXMemberCallExpr>(Call))
    return (Name == "to" || Name == "cuda" || Name == "cpu" || Name == "clone" || Name == "contiguous") &&
           hasDimensions(TU, MC->getImplicitObjectArgument(), Depth + 1);
  if (explicitArgCount(Call) == 0)
    return false;
  if (Name == "tensor" || (hasApiTrait(Name, Factory) && Name != "scalar_tensor" && !Name.ends_with("_like")))
    return nonEmptyBracedList(Call->getArg(0));
  return false;
}

bool isSideEffectFree(const Expr *E) {
  if (!E)
    return true;
  bool Pure = true;
  std::function<void(const Stmt *)> Visit = [&](const Stmt *S) {
    if (!S || !Pure)
      return;
    if (const auto *BO = dyn_cast<BinaryOperator>(S))
      if (BO->isAssignmentOp())
        Pure = false;
    if (const auto *UO = dyn_cast<UnaryOperator>(S))
      if (UO->isIncrementDecrementOp())
        Pure = false;
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(S))
      if (Op->isAssignmentOp() || Op->getOperator() == OO_PlusPlus ||
          Op->getOperator() == OO_MinusMinus)
        Pure = false;
    if (const auto *Call = dyn_cast<CallExpr>(S)) {
      const FunctionDecl *FD = Call->getDirectCallee();
      const auto *Method = dyn_cast_or_null<CXXMethodDecl>(FD);
      bool InStd = FD && (FD->isInStdNamespace() || (Method && Method->getParent()->isInStdNamespace()));
      // Standard-library members that only read: const members and element access.
      bool StdReader = InStd && (!Method || Method->isConst() ||
                                 Method->getOverloadedOperator() == OO_Subscript ||
                                 calleeName(Call) == "at");
      if (!FD || (!isInTorchNamespace(FD) && !StdReader))
        Pure = false;
      else if (calleeName(Call).ends_with("_"))
        Pure = false;
    }
    if (isa<LambdaExpr>(S))
      return;
    for (const Stmt *Child : S->children())
      Visit(Child);
  };
  Visit(E);
  return Pure;
}

bool torchDeclares(ASTContext &Ctx, StringRef Namespace, StringRef Name, int Params,
                   int TypedParam, StringRef TypeName) {
  TranslationUnitDecl *TU = Ctx.getTranslationUnitDecl();
  for (const Decl *D : TU->decls()) {
    const auto *NS = dyn_cast<NamespaceDecl>(D);
    if (!NS || NS->getName() != Namespace)
      continue;
    const DeclContext *Primary = NS->getPrimaryContext();
    for (const NamedDecl *Found : Primary->lookup(&Ctx.Idents.get(Name))) {
      const FunctionDecl *FD = Found->getAsFunction();
      if (!FD || (Params >= 0 && FD->getNumParams() != static_cast<unsigned>(Params)))
        continue;
      if (TypedParam < 0)
        return true;
      QualType T = FD->getParamDecl(TypedParam)->getType().getNonReferenceType();
      if (const auto *TD = T.getCanonicalType()->getAsTagDecl())
        if (TD->getQualifiedNameAsString() == TypeName)
          return true;
    }
    return false;
  }
  return false;
}

} // namespace torch_syncfree
