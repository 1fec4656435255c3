//===- utils/AstWalk.h - Walking clang's AST ---------------------*- C++ -*-===//
//
// AST helpers that know nothing of LibTorch (as clang-tidy's utils/): the
// parents of a node, what consumes a value, the wrappers clang puts around an
// expression, calls and their arguments, loops' log intervals.
//
//===----------------------------------------------------------------------===//
#ifndef TORCH_SYNCFREE_UTILS_ASTWALK_H
#define TORCH_SYNCFREE_UTILS_ASTWALK_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

namespace torch_syncfree {

/// The first parent of \p Node (clang's parent map; a node in a template
/// instantiation may have more, the first is the one walked), or a null node.
clang::DynTypedNode firstParent(clang::ASTContext &Ctx, const clang::DynTypedNode &Node);
/// The first parent of \p S if it is an expression, or nullptr.
const clang::Expr *parentExpr(clang::ASTContext &Ctx, const clang::Stmt *S);
/// The first ancestor of \p S that is not one of \p Skipped (a statement,
/// or a declaration when \p S is an initialiser), as a node; null at the root.
/// The one parent-skipping loop: e.g. ancestorSkipping<ParenExpr, ImplicitCastExpr>.
/// \p Child, when given, is set to the node below the answer (S or the last
/// one skipped).
template <typename... Skipped>
clang::DynTypedNode ancestorSkipping(clang::ASTContext &Ctx, const clang::Stmt *S,
                                     const clang::Stmt **Child = nullptr) {
  const clang::Stmt *Below = S;
  clang::DynTypedNode Node = firstParent(Ctx, clang::DynTypedNode::create(*S));
  while (const auto *Parent = Node.get<clang::Stmt>()) {
    if (!llvm::isa<Skipped...>(Parent))
      break;
    Below = Parent;
    Node = firstParent(Ctx, Node);
  }
  if (Child)
    *Child = Below;
  return Node;
}
/// The range-for loop whose loop variable or implicit range variable (`auto
/// &&__range = c;`) is \p VD, or nullptr.
const clang::CXXForRangeStmt *rangeForDeclaring(clang::ASTContext &Ctx, const clang::VarDecl *VD);
/// A reference through which the referent may be changed (`T &`, `T &&`;
/// not `const T &`). The one "may be written through a reference" test.
bool isMutableReference(clang::QualType T);
/// Whether a call of \p FD may change its argument \p ArgIndex (an lvalue
/// passed there): the callee is unknown, or binds it to a mutable reference.
/// Arguments past the parameters (C varargs) are copies.
bool argumentMayBeModified(const clang::FunctionDecl *FD, unsigned ArgIndex);
/// The body of a for/while/do/range-for loop; nullptr for any other statement.
const clang::Stmt *loopBody(const clang::Stmt *Loop);
/// The function whose body holds \p S, or nullptr inside a lambda (its body
/// runs whenever the lambda is called) or outside any function.
const clang::FunctionDecl *enclosingFunction(clang::ASTContext &Ctx, const clang::Stmt *S);
/// The outermost function around \p S (through lambdas and local classes).
const clang::FunctionDecl *outermostFunction(clang::ASTContext &Ctx, const clang::Stmt *S);
/// The function whose code holds \p S: inside a lambda, its call operator.
const clang::FunctionDecl *enclosingCallable(clang::ASTContext &Ctx, const clang::Stmt *S);
/// The body of the function or lambda whose code holds \p S, or nullptr.
const clang::Stmt *enclosingBody(clang::ASTContext &Ctx, const clang::Stmt *S);
/// The declaration at namespace or file scope around \p S (its function, a
/// namespace around it), or nullptr.
const clang::Decl *outermostDeclaration(clang::ASTContext &Ctx, const clang::Stmt *S);
/// The block \p S is in, through expressions, statements and declarations (a
/// variable's initialiser), and the statement of that block that holds S;
/// nullptr when S is in no block of its function.
const clang::CompoundStmt *enclosingBlock(clang::ASTContext &Ctx, const clang::Stmt *S,
                                          const clang::Stmt **Statement = nullptr);

/// Strips parentheses, implicit casts, temporaries and copy/move constructions.
const clang::Expr *ignoreWrappers(const clang::Expr *E);

/// The nearest ancestor of \p E that is not a paren, implicit cast, temporary or
/// member access: the expression or statement that consumes E's value.
const clang::Stmt *consumerOf(clang::ASTContext &Ctx, const clang::Expr *E);

/// The variable \p E initialises (`auto x = E;`, through implicit casts,
/// temporaries and a converting construction), or nullptr.
const clang::VarDecl *initialisedVariable(clang::ASTContext &Ctx, const clang::Expr *E);

/// The innermost ancestor of \p S (within its function or lambda, below \p StopAt)
/// for which \p Matches holds, or nullptr. Declarations on the way (a variable whose
/// initialiser holds S) are walked through.
const clang::Stmt *innermostAncestor(clang::ASTContext &Ctx, const clang::Stmt *S,
                                     llvm::function_ref<bool(const clang::Stmt *)> Matches,
                                     const clang::Stmt *StopAt = nullptr);

/// Whether the value of \p E is discarded (a full-expression statement, the
/// body of a loop or branch written without braces, a for loop's increment).
bool isValueDiscarded(clang::ASTContext &Ctx, const clang::Expr *E);

/// The object a method is called on, for member calls (nullptr otherwise).
const clang::Expr *calleeObject(const clang::Expr *Call);

/// Name of the called method or function, empty when not a named call.
llvm::StringRef calleeName(const clang::Expr *Call);

/// Index of the parameter called `Name` in the call's callee, or -1.
int parameterIndex(const clang::CallExpr *Call, llvm::StringRef Name);

/// Number of arguments written in the source (defaulted ones are not).
unsigned explicitArgCount(const clang::CallExpr *Call);

/// A condition that holds once every N iterations: it takes a remainder
/// (`step % N == 0`, `batch_idx++ % kLogInterval == 0`).
bool isIntervalCondition(const clang::Expr *Condition);

/// The innermost `if` with an interval condition around \p S, below \p Loop
/// (through a variable's initialiser too: `float v = t.item<float>();` inside
/// the `if`); S in the condition itself does not count.
const clang::IfStmt *logIntervalAround(clang::ASTContext &Ctx, const clang::Stmt *S, const clang::Stmt *Loop);

} // namespace torch_syncfree

#endif
