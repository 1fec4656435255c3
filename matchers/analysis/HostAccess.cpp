//===- analysis/HostAccess.cpp - Tensors whose elements the host reads -----===//
#include "analysis/HostAccess.h"
#include "ApiFacts.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"

using namespace clang;

namespace torch_syncfree {

namespace {

/// How deep a pointer is followed through variables and calls.
constexpr unsigned MaxPointerSteps = 3;

StringRef nameOf(const NamedDecl *D) {
  return D && D->getDeclName().isIdentifier() ? D->getName() : StringRef();
}

/// The parent of E, looking through parentheses and casts.
DynTypedNode parentOf(ASTContext &Ctx, const Stmt *E, const Stmt *&Child) {
  Child = E;
  while (true) {
    DynTypedNodeList Parents = Ctx.getParents(*Child);
    if (Parents.size() != 1)
      return DynTypedNode();
    const auto *Parent = Parents[0].get<Expr>();
    if (Parent && (isa<ParenExpr>(Parent) || isa<CastExpr>(Parent) || isa<MaterializeTemporaryExpr>(Parent) ||
                   isa<CXXBindTemporaryExpr>(Parent))) {
      Child = Parent;
      continue;
    }
    return Parents[0];
  }
}

template <typename Fn> void forEachReference(const Stmt *S, const ValueDecl *D, Fn Visit) {
  if (!S)
    return;
  if (const auto *Ref = dyn_cast<DeclRefExpr>(S); Ref && Ref->getDecl() == D)
    Visit(Ref);
  for (const Stmt *Child : S->children())
    forEachReference(Child, D, Visit);
}

bool dereferencedOnHost(ASTContext &Ctx, const Expr *Pointer, unsigned Steps);

/// Whether a pointer variable of a function is dereferenced in its body.
bool pointerVariableDereferenced(ASTContext &Ctx, const VarDecl *Pointer, unsigned Steps) {
  if (!Pointer || Steps == 0 || !Pointer->getType()->isPointerType())
    return false;
  const auto *Function = dyn_cast_or_null<FunctionDecl>(
      isa<ParmVarDecl>(Pointer) ? Pointer->getDeclContext() : Pointer->getParentFunctionOrMethod());
  if (!Function || !Function->getBody() || Function->hasAttr<CUDAGlobalAttr>() ||
      Function->hasAttr<CUDADeviceAttr>())
    return false;
  bool Found = false;
  forEachReference(Function->getBody(), Pointer,
                   [&](const DeclRefExpr *Ref) { Found = Found || dereferencedOnHost(Ctx, Ref, Steps - 1); });
  return Found;
}

bool dereferencedOnHost(ASTContext &Ctx, const Expr *Pointer, unsigned Steps) {
  const Stmt *Child = nullptr;
  DynTypedNode Parent = parentOf(Ctx, Pointer, Child);
  if (const auto *Declared = Parent.get<VarDecl>())
    return Declared->getInit() && pointerVariableDereferenced(Ctx, Declared, Steps);
  const Stmt *P = Parent.get<Stmt>();
  if (!P)
    return false;
  if (const auto *Unary = dyn_cast<UnaryOperator>(P))
    return Unary->getOpcode() == UO_Deref;
  if (const auto *Subscript = dyn_cast<ArraySubscriptExpr>(P))
    return Subscript->getBase() == Child;
  if (const auto *Binary = dyn_cast<BinaryOperator>(P)) {
    if (Binary->isAdditiveOp())
      return Steps > 0 && dereferencedOnHost(Ctx, Binary, Steps - 1);
    if (Binary->getOpcode() == BO_Assign && Binary->getRHS() == Child)
      if (const auto *Target = dyn_cast<DeclRefExpr>(Binary->getLHS()->IgnoreParenImpCasts()))
        return pointerVariableDereferenced(Ctx, dyn_cast<VarDecl>(Target->getDecl()), Steps);
    return false;
  }
  // A standard container built from the range (`std::vector<float> v(p, p + n)`).
  if (const auto *Construct = dyn_cast<CXXConstructExpr>(P)) {
    const CXXRecordDecl *Record = Construct->getType()->getAsCXXRecordDecl();
    return Record && Record->isInStdNamespace();
  }
  if (const auto *Call = dyn_cast<CallExpr>(P); Call && !isa<CUDAKernelCallExpr>(Call)) {
    const FunctionDecl *Callee = Call->getDirectCallee();
    if (!Callee)
      return false;
    StringRef Name = nameOf(Callee);
    // The C library and <algorithm> read and write through the pointer.
    if ((Callee->isInStdNamespace() || Callee->getDeclContext()->isTranslationUnit() ||
         Callee->getDeclContext()->isExternCContext()) &&
        (Name == "memcpy" || Name == "memmove" || Name == "memset" || Name == "copy" || Name == "copy_n" ||
         Name == "fill" || Name == "fill_n" || Name == "accumulate" || Name == "sort"))
      return true;
    // A function of the unit that dereferences the matching parameter.
    const FunctionDecl *Definition = Callee->getDefinition();
    if (!Definition || Steps == 0)
      return false;
    for (unsigned I = 0; I < Call->getNumArgs() && I < Definition->getNumParams(); ++I)
      if (Call->getArg(I) == Child)
        return pointerVariableDereferenced(Ctx, Definition->getParamDecl(I), Steps - 1);
  }
  return false;
}

/// The raw data pointer of the tensor Ref names: `t.data_ptr<T>()`,
/// `t.data<T>()`, `t.contiguous().data_ptr<T>()`; nullptr otherwise.
const CXXMemberCallExpr *dataPointerCall(ASTContext &Ctx, const DeclRefExpr *Ref) {
  const Expr *Object = Ref;
  for (unsigned Hops = 0; Hops < 2; ++Hops) {
    const Stmt *Child = nullptr;
    const auto *Member = parentOf(Ctx, Object, Child).get<MemberExpr>();
    if (!Member)
      return nullptr;
    const Stmt *MemberChild = nullptr;
    const auto *Call = parentOf(Ctx, Member, MemberChild).get<CXXMemberCallExpr>();
    if (!Call || Call->getCallee()->IgnoreParens() != Member)
      return nullptr;
    StringRef Name = nameOf(Member->getMemberDecl());
    if (Name == "contiguous") {
      Object = Call;
      continue;
    }
    if ((Name == "data_ptr" || Name == "data" || Name == "mutable_data_ptr" || Name == "const_data_ptr") &&
        Call->getType()->isPointerType() && !Call->getType()->getPointeeType()->isVoidType())
      return Call;
    return nullptr;
  }
  return nullptr;
}

/// Whether S names the GPU: a CUDA device or device string, a kernel launch,
/// `.cuda()`, `is_cuda`, a move `.to(..)` to anything but a dtype, the CUDA
/// runtime or `at::cuda`.
bool namesGpu(const Stmt *S) {
  if (!S)
    return false;
  if (isa<CUDAKernelCallExpr>(S))
    return true;
  if (const auto *Ref = dyn_cast<DeclRefExpr>(S)) {
    StringRef Name = nameOf(Ref->getDecl());
    if ((isa<EnumConstantDecl>(Ref->getDecl()) || Name.starts_with("k")) &&
        deviceKindOfSpelling(Name) == DeviceKind::Cuda)
      return true;
  }
  // Any text that mentions cuda (`"cuda:" + std::to_string(rank)`, a device
  // flag's default): broader than a device string, as "names the GPU" may be.
  if (const auto *Text = dyn_cast<StringLiteral>(S);
      Text && Text->getCharByteWidth() == 1 && Text->getString().contains("cuda"))
    return true;
  if (const auto *Call = dyn_cast<CallExpr>(S)) {
    if (const FunctionDecl *Callee = Call->getDirectCallee()) {
      StringRef Name = nameOf(Callee);
      if (Name.starts_with("cuda") || Name == "is_cuda")
        return true;
      if (const auto *Member = dyn_cast<CXXMemberCallExpr>(Call); Member && Name == "to") {
        for (const Expr *Argument : Member->arguments()) {
          const auto *Enum = Argument->getType()->getAs<EnumType>();
          if (!(Enum && nameOf(Enum->getDecl()) == "ScalarType") && !Argument->getType()->isBooleanType() &&
              !isa<CXXDefaultArgExpr>(Argument))
            return true;
        }
      }
      for (const DeclContext *Context = Callee->getDeclContext(); Context; Context = Context->getParent())
        if (const auto *Namespace = dyn_cast<NamespaceDecl>(Context);
            Namespace && nameOf(Namespace) == "cuda")
          return true;
    }
  }
  for (const Stmt *Child : S->children())
    if (namesGpu(Child))
      return true;
  return false;
}

bool isTensorParameter(const ParmVarDecl *Param) {
  const CXXRecordDecl *Record = Param->getType().getNonReferenceType()->getAsCXXRecordDecl();
  return Record && nameOf(Record) == "Tensor";
}

} // namespace

bool readsElementsOnHost(ASTContext &Ctx, const Stmt &Body, const VarDecl *Tensor) {
  bool Found = false;
  forEachReference(&Body, Tensor, [&](const DeclRefExpr *Ref) {
    if (Found)
      return;
    const Stmt *Child = nullptr;
    if (const auto *Member = parentOf(Ctx, Ref, Child).get<MemberExpr>();
        Member && nameOf(Member->getMemberDecl()) == "accessor")
      Found = true; // accessor<T, N>() checks that the tensor is on the CPU
    else if (const CXXMemberCallExpr *Data = dataPointerCall(Ctx, Ref))
      Found = dereferencedOnHost(Ctx, Data, MaxPointerSteps);
  });
  return Found;
}

bool isHostKernel(ASTContext &Ctx, const FunctionDecl *Function) {
  if (!Function || !Function->getBody() || Function->hasAttr<CUDAGlobalAttr>() ||
      namesGpu(Function->getBody()))
    return false;
  return llvm::any_of(Function->parameters(), [&](const ParmVarDecl *Param) {
    return isTensorParameter(Param) && readsElementsOnHost(Ctx, *Function->getBody(), Param);
  });
}

} // namespace torch_syncfree
