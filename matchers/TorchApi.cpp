#include "TorchApi.h"
#include "ApiFacts.h"
#include "DeviceInference.h"
#include "TranslationUnitAnalysis.h"
#include "UseClassifier.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/MacroInfo.h"
#include "clang/Lex/Preprocessor.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/Mangle.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Path.h"

using namespace clang;

namespace torch_syncfree {

/// The value of an object-like macro defined as one integer literal.
static std::optional<unsigned> integerMacro(Preprocessor &PP, StringRef Name) {
  IdentifierInfo *II = PP.getIdentifierInfo(Name);
  const MacroInfo *MI = II ? PP.getMacroInfo(II) : nullptr;
  if (!MI || MI->isFunctionLike() || MI->getNumTokens() != 1 ||
      !MI->getReplacementToken(0).is(tok::numeric_constant))
    return std::nullopt;
  unsigned Value = 0;
  if (StringRef(PP.getSpelling(MI->getReplacementToken(0))).getAsInteger(10, Value))
    return std::nullopt;
  return Value;
}

std::optional<LibTorchVersion> libTorchVersionFromMacros(Preprocessor &PP) {
  std::optional<unsigned> Major = integerMacro(PP, "TORCH_VERSION_MAJOR");
  std::optional<unsigned> Minor = integerMacro(PP, "TORCH_VERSION_MINOR");
  if (!Major || !Minor)
    return std::nullopt;
  return LibTorchVersion{*Major, *Minor};
}

std::optional<LibTorchVersion> parseLibTorchVersion(StringRef Text) {
  StringRef Major, Rest;
  std::tie(Major, Rest) = Text.trim().split('.');
  StringRef Minor = Rest.split('.').first;
  LibTorchVersion Version;
  if (Major.getAsInteger(10, Version.Major) || Minor.getAsInteger(10, Version.Minor))
    return std::nullopt;
  return Version;
}

static const CXXRecordDecl *recordOf(QualType T) {
  if (T.isNull())
    return nullptr;
  T = T.getNonReferenceType().getCanonicalType();
  if (const auto *RT = T->getAs<RecordType>())
    return dyn_cast<CXXRecordDecl>(RT->getDecl());
  return nullptr;
}

static std::string qualifiedNameOf(QualType T) {
  if (T.isNull())
    return {};
  T = T.getNonReferenceType().getCanonicalType();
  if (const auto *TD = T->getAsTagDecl())
    return TD->getQualifiedNameAsString();
  return {};
}

/// A class whose tensors a generic mover may relocate: torch::nn modules and
/// classes with their own to()/cuda()/cpu().
bool mayMoveItsTensors(const CXXRecordDecl *Record) {
  if (!Record || !Record->hasDefinition())
    return true;
  for (const CXXMethodDecl *Method : Record->methods())
    if (Method->getDeclName().isIdentifier() &&
        hasApiTrait(Method->getName(), DeviceMove))
      return true;
  bool Module = false;
  Record->forallBases([&](const CXXRecordDecl *Base) {
    if (isInTorchNamespace(Base) && Base->getName() == "Module")
      Module = true;
    return true;
  });
  return Module;
}

bool isClosedProgramField(const SourceManager &SM, const FieldDecl *Field) {
  const auto *Record = dyn_cast<CXXRecordDecl>(Field->getParent());
  // Other translation units can store into fields of classes from headers.
  return Record && SM.isInMainFile(SM.getExpansionLoc(Record->getLocation())) &&
         !mayMoveItsTensors(Record) && !Field->getType()->isReferenceType();
}

bool isProjectFunction(const FunctionDecl *FD, const SourceManager &SM) {
  if (!FD || FD->getBuiltinID() || isInTorchNamespace(FD) || FD->isInStdNamespace() ||
      SM.isInSystemHeader(FD->getLocation()) || !FD->getDeclName().isIdentifier())
    return false;
  const auto *Method = dyn_cast<CXXMethodDecl>(FD);
  return !Method || !Method->getParent()->isLambda();
}

std::string linkageName(const FunctionDecl *FD) {
  ASTNameGenerator Names(FD->getASTContext());
  std::string Name = Names.getName(FD);
  // Several programs of one compile database may each have their own copy of
  // a header (two chapters, each with a `model.h` defining `GPT::forward`):
  // the copies share a mangled name but not callers. A function every unit
  // that calls it must define (inline, a template's instance) is keyed with
  // the header that defines it; every such unit sees that definition.
  const FunctionDecl *Definition = FD->getDefinition();
  if (Definition && (Definition->isInlined() || Definition->isTemplateInstantiation() ||
                     isa<ClassTemplateSpecializationDecl>(Definition->getDeclContext()))) {
    const SourceManager &SM = FD->getASTContext().getSourceManager();
    SourceLocation At = SM.getExpansionLoc(Definition->getLocation());
    if (At.isValid() && !SM.isInMainFile(At))
      Name += "@" + absoluteFileName(SM, At);
  }
  return Name;
}

bool isTensorType(QualType T) {
  const CXXRecordDecl *RD = recordOf(T);
  if (!RD)
    return false;
  std::string Name = RD->getQualifiedNameAsString();
  return Name == "at::Tensor" || Name == "at::TensorBase";
}

bool isDeviceType(QualType T) {
  std::string Name = qualifiedNameOf(T);
  return Name == "c10::Device" || Name == "c10::DeviceType";
}

bool isTensorOptionsType(QualType T) {
  return qualifiedNameOf(T) == "c10::TensorOptions";
}

bool isOptionalDeviceType(QualType T) {
  const auto *Spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(recordOf(T));
  if (!Spec || Spec->getName() != "optional" || Spec->getTemplateArgs().size() != 1)
    return false;
  const TemplateArgument &Arg = Spec->getTemplateArgs()[0];
  return Arg.getKind() == TemplateArgument::Type && isDeviceType(Arg.getAsType());
}

bool isNonDeviceOptionType(QualType T) {
  std::string Name = qualifiedNameOf(T);
  return Name == "c10::ScalarType" || Name == "caffe2::TypeMeta" ||
         Name == "c10::Layout" || Name == "c10::MemoryFormat";
}

bool isScalarType(QualType T) { return qualifiedNameOf(T) == "c10::Scalar"; }

/// Whether a declaration in a LibTorch namespace is LibTorch's own: not one
/// the project adds there (a dataset in `torch::data::datasets`, declared in
/// its main file or its own header). LibTorch's headers are system headers
/// (`-isystem`), or at least under a `torch`, `ATen`, `c10` or `caffe2`
/// directory when a build passes them with `-I`.
static bool isLibTorchDeclaration(const Decl *D) {
  const SourceManager &SM = D->getASTContext().getSourceManager();
  SourceLocation Loc = SM.getExpansionLoc(D->getLocation());
  if (Loc.isInvalid() || SM.isInSystemHeader(Loc))
    return true;
  if (SM.isInMainFile(Loc))
    return false;
  StringRef Path = SM.getFilename(Loc);
  for (auto Part = llvm::sys::path::begin(Path), End = llvm::sys::path::end(Path); Part != End; ++Part)
    if (*Part == "torch" || *Part == "ATen" || *Part == "c10" || *Part == "caffe2")
      return true;
  return false;
}

bool isInTorchNamespace(const Decl *D) {
  for (const DeclContext *DC = D ? D->getDeclContext() : nullptr; DC;
       DC = DC->getParent()) {
    if (const auto *NS = dyn_cast<NamespaceDecl>(DC)) {
      if (!NS->getParent() || NS->getParent()->isTranslationUnit()) {
        StringRef Top = NS->getName();
        return (Top == "at" || Top == "c10" || Top == "torch") && isLibTorchDeclaration(D);
      }
    }
  }
  return false;
}

bool isTensorMethodCall(const Expr *E, StringRef Name) {
  const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(E);
  if (!MC || !MC->getMethodDecl())
    return false;
  const CXXMethodDecl *MD = MC->getMethodDecl();
  if (!MD->getDeclName().isIdentifier() || MD->getName() != Name)
    return false;
  std::string Class = MD->getParent()->getQualifiedNameAsString();
  return Class == "at::Tensor" || Class == "at::TensorBase";
}

std::optional<std::vector<const Expr *>> indexListElements(const CallExpr *Call) {
  if (!Call || Call->getNumArgs() < 1)
    return std::nullopt;
  // ArrayRef<TensorIndex>({...}) -> std::initializer_list -> InitListExpr.
  const Expr *List = ignoreWrappers(Call->getArg(0));
  if (const auto *Construct = dyn_cast_or_null<CXXConstructExpr>(List))
    if (Construct->getNumArgs() == 1)
      List = ignoreWrappers(Construct->getArg(0));
  if (const auto *Std = dyn_cast_or_null<CXXStdInitializerListExpr>(List))
    List = ignoreWrappers(Std->getSubExpr());
  const auto *Init = dyn_cast_or_null<InitListExpr>(List);
  if (!Init)
    return std::nullopt;
  std::vector<const Expr *> Elements;
  for (const Expr *Element : Init->inits()) {
    const Expr *E = Element->IgnoreImplicit();
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E)) // TensorIndex(t)
      if (Construct->getNumArgs() == 1)
        E = Construct->getArg(0)->IgnoreImplicit();
    Elements.push_back(E);
  }
  return Elements;
}

} // namespace torch_syncfree
