#include "TorchApi.h"
#include "ApiFacts.h"
#include "DeviceInference.h"
#include "TranslationUnitAnalysis.h"
#include "UseClassifier.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Lex/Lexer.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "llvm/ADT/DenseSet.h"
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


StringRef validationMacro(ASTContext &Ctx, SourceLocation Loc, CharSourceRange *Invocation) {
  const SourceManager &SM = Ctx.getSourceManager();
  for (unsigned Depth = 0; Loc.isMacroID() && Depth < 64; ++Depth) {
    if (SM.isMacroArgExpansion(Loc)) {
      StringRef Name = Lexer::getImmediateMacroName(Loc, SM, Ctx.getLangOpts());
      std::string Upper = Name.upper();
      if (Name == "assert" || StringRef(Upper).contains("ASSERT") ||
          StringRef(Upper).contains("CHECK")) {
        if (Invocation) // the whole outermost invocation, as spelled in the file
          *Invocation = SM.getExpansionRange(Loc);
        return Name;
      }
    }
    Loc = SM.getImmediateMacroCallerLoc(Loc);
  }
  return "";
}

bool isInValidationMessage(ASTContext &Ctx, SourceLocation Loc) {
  if (!Loc.isMacroID())
    return false;
  const SourceManager &SM = Ctx.getSourceManager();
  // The outermost invocation as written in a file, and Loc's spelling in it.
  CharSourceRange Invocation = SM.getExpansionRange(Loc);
  SourceLocation Spelled = SM.getSpellingLoc(Loc);
  if (Invocation.isInvalid() || Spelled.isMacroID() ||
      SM.getFileID(Invocation.getBegin()) != SM.getFileID(Spelled))
    return false;
  bool Invalid = false;
  StringRef Buffer = SM.getBufferData(SM.getFileID(Spelled), &Invalid);
  if (Invalid)
    return false;
  unsigned Begin = SM.getFileOffset(Invocation.getBegin());
  unsigned End = SM.getFileOffset(Invocation.getEnd());
  unsigned At = SM.getFileOffset(Spelled);
  if (End > Buffer.size() || At < Begin || At > End)
    return false;
  StringRef Text = Buffer.slice(Begin, End + 1);
  size_t Open = Text.find('(');
  if (Open == StringRef::npos)
    return false;
  // The macros whose arguments after the condition only build the failure's
  // message (TORCH_CHECK_WITH takes the error type first).
  unsigned FirstMessageArg = llvm::StringSwitch<unsigned>(Text.take_front(Open).trim())
                                 .Cases({"TORCH_CHECK", "TORCH_CHECK_VALUE", "TORCH_CHECK_INDEX",
                                         "TORCH_CHECK_TYPE", "TORCH_CHECK_LINALG"}, 1)
                                 .Cases({"TORCH_CHECK_NOT_IMPLEMENTED", "TORCH_INTERNAL_ASSERT",
                                         "TORCH_INTERNAL_ASSERT_DEBUG_ONLY", "AT_ASSERT", "AT_ASSERTM"}, 1)
                                 .Case("TORCH_CHECK_WITH", 2)
                                 .Default(0);
  if (!FirstMessageArg)
    return false;
  // Which argument holds Loc: top-level commas, skipping brackets and literals.
  unsigned Arg = 0, Depth = 0;
  for (size_t I = Open + 1; I < Text.size(); ++I) {
    if (Begin + I == At)
      return Arg >= FirstMessageArg;
    char C = Text[I];
    if (C == '"' || C == '\'') {
      for (++I; I < Text.size() && Text[I] != C; ++I)
        if (Text[I] == '\\')
          ++I;
    } else if (C == '(' || C == '[' || C == '{') {
      ++Depth;
    } else if (C == ')' || C == ']' || C == '}') {
      if (Depth == 0)
        return false;
      --Depth;
    } else if (C == ',' && Depth == 0) {
      ++Arg;
    }
  }
  return false;
}

static constexpr llvm::StringLiteral InsertedSyncTag = "NOLINT(torch-sync-*): torch-syncfree";

std::string insertedSyncComment(llvm::StringRef Why) {
  return (" /* " + InsertedSyncTag + ", " + Why + " */").str();
}

std::string insertedSyncMarker(llvm::StringRef Why) {
  return (" /* torch-syncfree: " + Why + " */").str();
}

std::string spelledText(ASTContext &Ctx, const Stmt *S) {
  CharSourceRange Range = CharSourceRange::getTokenRange(S->getSourceRange());
  return Lexer::getSourceText(Range, Ctx.getSourceManager(), Ctx.getLangOpts()).str();
}

bool isValueDiscarded(ASTContext &Ctx, const Expr *E) {
  const Stmt *Current = E;
  while (true) {
    DynTypedNodeList Parents = Ctx.getParents(*Current);
    if (Parents.empty())
      return false;
    const Stmt *Parent = Parents[0].get<Stmt>();
    if (!Parent)
      return false;
    if (isa<ExprWithCleanups, ImplicitCastExpr, ParenExpr>(Parent)) {
      Current = Parent;
      continue;
    }
    if (isa<CompoundStmt>(Parent))
      return true;
    // The body of a loop or a branch written without braces.
    if (const auto *If = dyn_cast<IfStmt>(Parent))
      return If->getThen() == Current || If->getElse() == Current;
    if (const auto *For = dyn_cast<ForStmt>(Parent))
      return For->getBody() == Current || For->getInc() == Current;
    if (const auto *While = dyn_cast<WhileStmt>(Parent))
      return While->getBody() == Current;
    if (const auto *Do = dyn_cast<DoStmt>(Parent))
      return Do->getBody() == Current;
    if (const auto *Range = dyn_cast<CXXForRangeStmt>(Parent))
      return Range->getBody() == Current;
    return false;
  }
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

const VarDecl *initialisedVariable(ASTContext &Ctx, const Expr *E) {
  DynTypedNodeList Parents = Ctx.getParents(*E);
  while (!Parents.empty() && Parents[0].get<Expr>() &&
         isa<ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr, ExprWithCleanups,
             CXXConstructExpr>(Parents[0].get<Expr>()))
    Parents = Ctx.getParents(Parents[0]);
  return Parents.empty() ? nullptr : Parents[0].get<VarDecl>();
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

const Stmt *TranslationUnitAnalysis::enclosingLoop(const Stmt *S) {
  // Memoised per TU: every site asks, and a walk to the function per site
  // is quadratic on long expressions.
  // `do { ... } while (0)` (a statement macro's body) is not a loop.
  auto IsLoop = [](const Stmt *X) {
    if (const auto *Do = dyn_cast<DoStmt>(X)) {
      const Expr *Cond = Do->getCond()->IgnoreParenImpCasts();
      if (const auto *Int = dyn_cast<IntegerLiteral>(Cond))
        return Int->getValue() != 0;
      if (const auto *Bool = dyn_cast<CXXBoolLiteralExpr>(Cond))
        return Bool->getValue();
      return true;
    }
    return isa<ForStmt, WhileStmt, CXXForRangeStmt>(X);
  };
  if (auto It = LoopMemo.find(S); It != LoopMemo.end())
    return It->second;
  llvm::SmallVector<const Stmt *, 16> Path{S};
  const Stmt *Answer = nullptr;
  DynTypedNode Node = DynTypedNode::create(*S);
  while (true) {
    DynTypedNodeList Parents = Ctx.getParents(Node);
    if (Parents.empty())
      break;
    Node = Parents[0];
    if (Node.get<FunctionDecl>() || Node.get<LambdaExpr>())
      break;
    if (const auto *Ancestor = Node.get<Stmt>()) {
      if (IsLoop(Ancestor)) {
        Answer = Ancestor;
        break;
      }
      if (auto It = LoopMemo.find(Ancestor); It != LoopMemo.end()) {
        Answer = It->second;
        break;
      }
      Path.push_back(Ancestor);
    }
  }
  for (const Stmt *P : Path)
    LoopMemo[P] = Answer;
  return Answer;
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

bool isIntervalCondition(const Expr *Condition) {
  if (!Condition)
    return false;
  if (const auto *BO = dyn_cast<BinaryOperator>(Condition->IgnoreParenImpCasts()))
    if (BO->getOpcode() == BO_Rem)
      return true;
  for (const Stmt *Child : Condition->children())
    if (const auto *E = dyn_cast_or_null<Expr>(Child); E && isIntervalCondition(E))
      return true;
  return false;
}

const IfStmt *logIntervalAround(ASTContext &Ctx, const Stmt *S, const Stmt *Loop) {
  return cast_or_null<IfStmt>(innermostAncestor(
      Ctx, S,
      [&](const Stmt *Ancestor) {
        const auto *If = dyn_cast<IfStmt>(Ancestor);
        return If && isIntervalCondition(If->getCond()) && If->getCond() != S;
      },
      Loop));
}

} // namespace torch_syncfree
