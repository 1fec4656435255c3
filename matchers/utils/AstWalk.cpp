//===- utils/AstWalk.cpp - Walking clang's AST -----------------------------===//
#include "utils/AstWalk.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"

using namespace clang;
using llvm::StringRef;

namespace torch_syncfree {

DynTypedNode firstParent(ASTContext &Ctx, const DynTypedNode &Node) {
  DynTypedNodeList Parents = Ctx.getParents(Node);
  return Parents.empty() ? DynTypedNode() : Parents[0];
}

const Expr *parentExpr(ASTContext &Ctx, const Stmt *S) {
  return firstParent(Ctx, DynTypedNode::create(*S)).get<Expr>();
}

const CXXForRangeStmt *rangeForDeclaring(ASTContext &Ctx, const VarDecl *VD) {
  if (!VD)
    return nullptr;
  const auto *Declaration = firstParent(Ctx, DynTypedNode::create(*VD)).get<DeclStmt>();
  const auto *Loop =
      Declaration ? firstParent(Ctx, DynTypedNode::create(*Declaration)).get<CXXForRangeStmt>() : nullptr;
  return Loop && (Loop->getRangeStmt() == Declaration || Loop->getLoopVarStmt() == Declaration) ? Loop
                                                                                                : nullptr;
}

bool isMutableReference(QualType T) {
  return T->isReferenceType() && !T.getNonReferenceType().isConstQualified();
}

bool argumentMayBeModified(const FunctionDecl *FD, unsigned ArgIndex) {
  if (!FD)
    return true;
  return ArgIndex < FD->getNumParams() && isMutableReference(FD->getParamDecl(ArgIndex)->getType());
}

const FunctionDecl *enclosingFunction(ASTContext &Ctx, const Stmt *S) {
  for (DynTypedNode Node = firstParent(Ctx, DynTypedNode::create(*S)); !Node.getNodeKind().isNone();
       Node = firstParent(Ctx, Node)) {
    if (Node.get<LambdaExpr>())
      return nullptr;
    if (const auto *FD = Node.get<FunctionDecl>())
      return FD;
  }
  return nullptr;
}

const FunctionDecl *outermostFunction(ASTContext &Ctx, const Stmt *S) {
  const FunctionDecl *Outermost = nullptr;
  for (DynTypedNode Node = firstParent(Ctx, DynTypedNode::create(*S)); !Node.getNodeKind().isNone();
       Node = firstParent(Ctx, Node))
    if (const auto *FD = Node.get<FunctionDecl>())
      Outermost = FD;
  return Outermost;
}

const FunctionDecl *enclosingCallable(ASTContext &Ctx, const Stmt *S) {
  for (DynTypedNode Node = firstParent(Ctx, DynTypedNode::create(*S)); !Node.getNodeKind().isNone();
       Node = firstParent(Ctx, Node)) {
    if (const auto *Lambda = Node.get<LambdaExpr>())
      return Lambda->getCallOperator();
    if (const auto *FD = Node.get<FunctionDecl>())
      return FD;
  }
  return nullptr;
}

const Stmt *enclosingBody(ASTContext &Ctx, const Stmt *S) {
  const FunctionDecl *Callable = enclosingCallable(Ctx, S);
  return Callable ? Callable->getBody() : nullptr;
}

const Decl *outermostDeclaration(ASTContext &Ctx, const Stmt *S) {
  const Decl *TopLevel = nullptr;
  for (DynTypedNode Node = firstParent(Ctx, DynTypedNode::create(*S)); !Node.getNodeKind().isNone();
       Node = firstParent(Ctx, Node))
    if (const auto *D = Node.get<Decl>();
        D && !isa<TranslationUnitDecl>(D) && isa_and_nonnull<TranslationUnitDecl>(D->getDeclContext()))
      TopLevel = D;
  return TopLevel;
}

const CompoundStmt *enclosingBlock(ASTContext &Ctx, const Stmt *S, const Stmt **Statement) {
  DynTypedNode Below = DynTypedNode::create(*S);
  for (DynTypedNode Node = firstParent(Ctx, Below); !Node.getNodeKind().isNone();
       Below = Node, Node = firstParent(Ctx, Node)) {
    if (const auto *Block = Node.get<CompoundStmt>()) {
      if (Statement)
        *Statement = Below.get<Stmt>();
      return Block;
    }
    if (Node.get<FunctionDecl>() || Node.get<LambdaExpr>())
      return nullptr;
  }
  return nullptr;
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
  return ancestorSkipping<ParenExpr, ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr,
                          MemberExpr>(Ctx, E)
      .get<Stmt>();
}

const VarDecl *initialisedVariable(ASTContext &Ctx, const Expr *E) {
  return ancestorSkipping<ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr, ExprWithCleanups,
                          CXXConstructExpr>(Ctx, E)
      .get<VarDecl>();
}

const Stmt *innermostAncestor(ASTContext &Ctx, const Stmt *S, llvm::function_ref<bool(const Stmt *)> Matches,
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

bool isValueDiscarded(ASTContext &Ctx, const Expr *E) {
  const Stmt *Current = E;
  const Stmt *Parent =
      ancestorSkipping<ExprWithCleanups, ImplicitCastExpr, ParenExpr>(Ctx, E, &Current).get<Stmt>();
  if (!Parent)
    return false;
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

const Stmt *loopBody(const Stmt *Loop) {
  if (const auto *For = dyn_cast<ForStmt>(Loop))
    return For->getBody();
  if (const auto *While = dyn_cast<WhileStmt>(Loop))
    return While->getBody();
  if (const auto *Do = dyn_cast<DoStmt>(Loop))
    return Do->getBody();
  if (const auto *Range = dyn_cast<CXXForRangeStmt>(Loop))
    return Range->getBody();
  return nullptr;
}

} // namespace torch_syncfree
