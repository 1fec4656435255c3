#include "TorchApi.h"
#include "clang/Lex/Lexer.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "llvm/ADT/StringSwitch.h"

using namespace clang;

namespace torch_syncfree {

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

static constexpr llvm::StringLiteral InsertedSyncTag = "NOLINT(torch-sync-*): torch-syncfree";

std::string insertedSyncComment(llvm::StringRef Why) {
  return (" /* " + InsertedSyncTag + ", " + Why + " */").str();
}

std::string insertedSyncMarker(llvm::StringRef Why) {
  return (" /* torch-syncfree: " + Why + " */").str();
}

bool isMarkedInsertedSync(const Expr *E, ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation End = SM.getSpellingLoc(E->getEndLoc());
  End = Lexer::getLocForEndOfToken(End, 0, SM, Ctx.getLangOpts());
  if (End.isInvalid())
    return false;
  bool Invalid = false;
  llvm::StringRef Buffer = SM.getBufferData(SM.getFileID(End), &Invalid);
  if (Invalid)
    return false;
  return Buffer.substr(SM.getFileOffset(End)).ltrim(" \t").starts_with("/* torch-syncfree:");
}

bool isOnInsertedSyncLine(SourceLocation Loc, const SourceManager &SM) {
  SourceLocation Spelling = SM.getSpellingLoc(Loc);
  bool Invalid = false;
  llvm::StringRef Buffer = SM.getBufferData(SM.getFileID(Spelling), &Invalid);
  if (Invalid)
    return false;
  unsigned Offset = SM.getFileOffset(Spelling);
  size_t Begin = Buffer.take_front(Offset).rfind('\n');
  Begin = Begin == llvm::StringRef::npos ? 0 : Begin + 1;
  llvm::StringRef Line = Buffer.substr(Begin).split('\n').first;
  return Line.contains(InsertedSyncTag);
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

bool isNonDeviceOptionType(QualType T) {
  std::string Name = qualifiedNameOf(T);
  return Name == "c10::ScalarType" || Name == "caffe2::TypeMeta" ||
         Name == "c10::Layout" || Name == "c10::MemoryFormat";
}

bool isScalarType(QualType T) { return qualifiedNameOf(T) == "c10::Scalar"; }

bool isInTorchNamespace(const Decl *D) {
  for (const DeclContext *DC = D ? D->getDeclContext() : nullptr; DC;
       DC = DC->getParent()) {
    if (const auto *NS = dyn_cast<NamespaceDecl>(DC)) {
      if (!NS->getParent() || NS->getParent()->isTranslationUnit()) {
        StringRef Top = NS->getName();
        return Top == "at" || Top == "c10" || Top == "torch";
      }
    }
  }
  return false;
}

const Expr *ignoreWrappers(const Expr *E) {
  while (E) {
    const Expr *Before = E;
    E = E->IgnoreParenImpCasts();
    if (const auto *EWC = dyn_cast<ExprWithCleanups>(E))
      E = EWC->getSubExpr();
    if (const auto *MTE = dyn_cast<MaterializeTemporaryExpr>(E))
      E = MTE->getSubExpr();
    if (const auto *BTE = dyn_cast<CXXBindTemporaryExpr>(E))
      E = BTE->getSubExpr();
    if (const auto *CE = dyn_cast<CXXConstructExpr>(E)) {
      // Copies and moves of a tensor/options keep what they were made from.
      if (CE->getNumArgs() == 1 && CE->getConstructor()->isCopyOrMoveConstructor())
        E = CE->getArg(0);
    }
    if (const auto *FC = dyn_cast<CXXFunctionalCastExpr>(E))
      if (FC->getCastKind() == CK_NoOp || FC->getCastKind() == CK_ConstructorConversion)
        E = FC->getSubExpr();
    if (E == Before)
      return E;
  }
  return E;
}

const Stmt *consumerOf(ASTContext &Ctx, const Expr *E) {
  const Stmt *Current = E;
  while (true) {
    DynTypedNodeList Parents = Ctx.getParents(*Current);
    if (Parents.empty())
      return nullptr;
    const Stmt *Parent = Parents[0].get<Stmt>();
    if (!Parent)
      return nullptr;
    if (!isa<ParenExpr, ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr,
             MemberExpr>(Parent))
      return Parent;
    Current = Parent;
  }
}

const Stmt *innermostAncestor(ASTContext &Ctx, const Stmt *S,
                              llvm::function_ref<bool(const Stmt *)> Matches,
                              const Stmt *StopAt) {
  DynTypedNode Node = DynTypedNode::create(*S);
  while (true) {
    DynTypedNodeList Parents = Ctx.getParents(Node);
    if (Parents.empty())
      return nullptr;
    Node = Parents[0];
    if (Node.get<FunctionDecl>() || Node.get<LambdaExpr>())
      return nullptr;
    if (const auto *Ancestor = Node.get<Stmt>()) {
      if (Ancestor == StopAt)
        return nullptr;
      if (Matches(Ancestor))
        return Ancestor;
    }
  }
}

const Stmt *enclosingLoop(ASTContext &Ctx, const Stmt *S) {
  return innermostAncestor(Ctx, S, [](const Stmt *Ancestor) {
    return isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(Ancestor);
  });
}

const Expr *calleeObject(const Expr *Call) {
  if (const auto *MC = dyn_cast_or_null<CXXMemberCallExpr>(Call))
    return MC->getImplicitObjectArgument();
  return nullptr;
}

StringRef calleeName(const Expr *Call) {
  const auto *CE = dyn_cast_or_null<CallExpr>(Call);
  if (!CE)
    return {};
  if (const FunctionDecl *FD = CE->getDirectCallee())
    if (FD->getDeclName().isIdentifier())
      return FD->getName();
  return {};
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

int parameterIndex(const CallExpr *Call, StringRef Name) {
  const FunctionDecl *FD = Call ? Call->getDirectCallee() : nullptr;
  if (!FD)
    return -1;
  for (unsigned I = 0; I < FD->getNumParams(); ++I)
    if (FD->getParamDecl(I)->getName() == Name)
      return static_cast<int>(I);
  return -1;
}

unsigned explicitArgCount(const CallExpr *Call) {
  unsigned N = 0;
  for (const Expr *Arg : Call->arguments()) {
    if (isa<CXXDefaultArgExpr>(Arg))
      break;
    ++N;
  }
  return N;
}

bool isTensorFactoryName(StringRef Name) {
  return llvm::StringSwitch<bool>(Name)
      .Cases({"zeros", "ones", "empty", "full", "rand", "randn", "randint"}, true)
      .Cases({"randperm", "arange", "range", "linspace", "logspace", "eye"}, true)
      .Cases({"tensor", "scalar_tensor", "from_blob", "empty_strided"}, true)
      .Cases({"normal", "bernoulli", "zeros_like", "ones_like", "empty_like"}, false)
      .Default(false);
}

bool isDeterministicFillFactory(StringRef Name) {
  return llvm::StringSwitch<bool>(Name)
      .Cases({"zeros", "ones", "empty", "full", "arange", "range"}, true)
      .Cases({"linspace", "logspace", "eye"}, true)
      .Default(false);
}

} // namespace torch_syncfree
