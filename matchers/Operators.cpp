// The project's own operators: what TORCH_LIBRARY blocks register and what
// dispatcher calls invoke (Operators.h). Read from the macros' expansion
// (TorchLibraryInit's constructor arguments), which 1.13 and 2.x share; the
// registered function is found inside the argument (`&f`, `TORCH_FN(f)`'s
// template argument, `torch::dispatch(key, f)`).
#include "Operators.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"

using namespace clang;

namespace torch_syncfree {

namespace {
/// The parts of an expression that name a registration: the first string
/// literal, the first function of the project it names (a reference or
/// TORCH_FN's template argument), the last `DispatchKey::K` it names.
struct RegistrationParts : RecursiveASTVisitor<RegistrationParts> {
  const StringLiteral *Literal = nullptr;
  const FunctionDecl *Function = nullptr;
  std::string Key;
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool VisitStringLiteral(StringLiteral *S) {
    if (!Literal && S->isOrdinary())
      Literal = S;
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr *Ref) {
    if (const auto *Enumerator = dyn_cast<EnumConstantDecl>(Ref->getDecl())) {
      if (const auto *Enum = dyn_cast<EnumDecl>(Enumerator->getDeclContext());
          Enum && Enum->getQualifiedNameAsString() == "c10::DispatchKey")
        Key = Enumerator->getName().str();
    } else if (const auto *FD = dyn_cast<FunctionDecl>(Ref->getDecl())) {
      noteFunction(FD);
    }
    return true;
  }
  // TORCH_FN(f): `CompileTimeFunctionPointer<F, &f>()`.
  bool VisitCXXTemporaryObjectExpr(CXXTemporaryObjectExpr *E) {
    if (const auto *Spec =
            dyn_cast_or_null<ClassTemplateSpecializationDecl>(E->getType()->getAsCXXRecordDecl()))
      for (const TemplateArgument &Arg : Spec->getTemplateArgs().asArray())
        if (Arg.getKind() == TemplateArgument::Declaration)
          if (const auto *FD = dyn_cast<FunctionDecl>(Arg.getAsDecl()))
            noteFunction(FD);
    return true;
  }
  void noteFunction(const FunctionDecl *FD) {
    if (!Function && !isInTorchNamespace(FD) && !FD->isInStdNamespace())
      Function = FD;
  }
};

RegistrationParts partsOf(const Expr *E) {
  RegistrationParts Parts;
  Parts.TraverseStmt(const_cast<Expr *>(E));
  return Parts;
}

bool isClassNamed(const CXXRecordDecl *Record, llvm::StringRef Qualified) {
  return Record && Record->getQualifiedNameAsString() == Qualified;
}

/// `name(Tensor a) -> Tensor`, `name.overload`, `ns::name`: "ns::name".
std::string operatorName(llvm::StringRef Literal, llvm::StringRef Namespace) {
  llvm::StringRef Name = Literal.split('(').first.trim();
  Name = Name.split('.').first;
  if (Name.contains("::"))
    return Name.str();
  return Namespace.str() + "::" + Name.str();
}
} // namespace

std::vector<OperatorRegistration> operatorRegistrations(ASTContext &Ctx) {
  std::vector<OperatorRegistration> Out;
  const SourceManager &SM = Ctx.getSourceManager();
  for (const Decl *D : Ctx.getTranslationUnitDecl()->decls()) {
    const auto *Init = dyn_cast<VarDecl>(D);
    if (!Init || !SM.isInMainFile(SM.getExpansionLoc(Init->getLocation())) ||
        !isClassNamed(Init->getType()->getAsCXXRecordDecl(), "torch::detail::TorchLibraryInit"))
      continue;
    const auto *Construct = dyn_cast_or_null<CXXConstructExpr>(ignoreWrappers(Init->getInit()));
    if (!Construct || Construct->getNumArgs() < 4)
      continue;
    // (kind, init function, "ns", key, file, line)
    RegistrationParts Function = partsOf(Construct->getArg(1));
    RegistrationParts Namespace = partsOf(Construct->getArg(2));
    RegistrationParts Key = partsOf(Construct->getArg(3));
    const FunctionDecl *Block = nullptr;
    if (Function.Function && Function.Function->hasBody(Block) && Block && Namespace.Literal) {
      // The block's def/impl calls, in source order.
      struct Calls : RecursiveASTVisitor<Calls> {
        std::vector<const CXXMemberCallExpr *> Found;
        bool VisitCXXMemberCallExpr(CXXMemberCallExpr *Call) {
          const CXXMethodDecl *Method = Call->getMethodDecl();
          if (Method && Method->getDeclName().isIdentifier() &&
              (Method->getName() == "def" || Method->getName() == "impl") &&
              isClassNamed(Method->getParent(), "torch::Library") && Call->getNumArgs() >= 2)
            Found.push_back(Call);
          return true;
        }
      } Visitor;
      Visitor.TraverseStmt(Block->getBody());
      for (const CXXMemberCallExpr *Call : Visitor.Found) {
        RegistrationParts Name = partsOf(Call->getArg(0));
        OperatorRegistration R;
        for (unsigned I = 1; I < Call->getNumArgs(); ++I) {
          RegistrationParts Rest = partsOf(Call->getArg(I));
          if (!R.Implementation)
            R.Implementation = Rest.Function;
          if (!Rest.Key.empty())
            R.Key = Rest.Key;
        }
        if (!Name.Literal || !R.Implementation)
          continue; // a schema alone (`m.def("op(Tensor a) -> Tensor")`)
        if (R.Key.empty())
          R.Key = Key.Key;
        R.Operator = operatorName(Name.Literal->getString(), Namespace.Literal->getString());
        if (const FunctionDecl *Definition = R.Implementation->getDefinition())
          R.Implementation = Definition;
        Out.push_back(std::move(R));
      }
    }
  }
  return Out;
}

std::optional<std::string> dispatchedOperator(const CallExpr *Call) {
  const auto *Member = dyn_cast_or_null<CXXMemberCallExpr>(Call);
  const CXXMethodDecl *Method = Member ? Member->getMethodDecl() : nullptr;
  if (!Method || !Method->getDeclName().isIdentifier() ||
      (Method->getName() != "call" && Method->getName() != "redispatch") ||
      Method->getParent()->getName() != "TypedOperatorHandle" || !isInTorchNamespace(Method->getParent()))
    return std::nullopt;
  // Down the chain: `findSchemaOrThrow("ns::op", "").typed<..>()`, or the
  // variable initialised with it.
  const Expr *E = Member->getImplicitObjectArgument();
  for (unsigned Depth = 0; E && Depth < 8; ++Depth) {
    E = ignoreWrappers(E);
    if (const auto *Ref = dyn_cast_or_null<DeclRefExpr>(E)) {
      const auto *Var = dyn_cast<VarDecl>(Ref->getDecl());
      E = Var && !Var->getType()->isReferenceType() ? Var->getInit() : nullptr;
      continue;
    }
    const auto *Chain = dyn_cast_or_null<CXXMemberCallExpr>(E);
    const CXXMethodDecl *Link = Chain ? Chain->getMethodDecl() : nullptr;
    if (!Link || !Link->getDeclName().isIdentifier())
      return std::nullopt;
    if (Link->getName() == "findSchemaOrThrow" && Chain->getNumArgs() >= 1) {
      const auto *Literal = dyn_cast_or_null<StringLiteral>(ignoreWrappers(Chain->getArg(0)));
      if (!Literal || !Literal->isOrdinary() || !Literal->getString().contains("::"))
        return std::nullopt;
      return operatorName(Literal->getString(), "");
    }
    if (Link->getName() != "typed")
      return std::nullopt;
    E = Chain->getImplicitObjectArgument();
  }
  return std::nullopt;
}

bool mayRunOnGpu(llvm::StringRef Key) {
  return !(Key == "CPU" || Key == "QuantizedCPU" || Key == "SparseCPU" || Key == "SparseCsrCPU" ||
           Key == "MkldnnCPU" || Key == "Meta");
}

} // namespace torch_syncfree
