// Does the host need the value a syncing call produces? Walks from the call to
// the code that consumes its value (through arithmetic, conversions and local
// variables) and decides between a true and a false dependency.
#ifndef TORCH_SYNCFREE_USECLASSIFIER_H
#define TORCH_SYNCFREE_USECLASSIFIER_H

#include "Dependency.h"
#include "TranslationUnitAnalysis.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>
#include <string>
#include <vector>

namespace torch_syncfree {

struct UseVerdict {
  Dependency Kind = Dependency::True;
  std::string Reason;  ///< e.g. "the value is only logged"
  unsigned LoopLine = 0; ///< line of the innermost enclosing loop, 0 if none
  /// A false dependency read only under a log interval inside that loop
  /// (`if (step % N == 0)`): the interval's line and condition as written.
  /// Such a read is the remedy, not a finding (reported with ReportIntervalReads).
  unsigned IntervalLine = 0;
  std::string IntervalCondition;
  /// Every use of the value is logging; LoggedAt is the first logging use (a
  /// stream insertion, a logging call or macro argument).
  bool OnlyLogged = false;
  const clang::Stmt *LoggedAt = nullptr;
  /// The value is added into a host variable (`m += v`): a metric the host reads later.
  bool Accumulated = false;
  /// The value is read inside an assertion or check macro (`assert`,
  /// `TORCH_CHECK`, `AT_ASSERT`, a project's `CHECK`): its name.
  std::string ValidationMacro;
  /// The value is returned to callers this TU does not show: a caller decides
  /// (issue 42: the project's callers, when a batch run sees them).
  bool ReturnedToUnseenCaller = false;
  /// With ReturnedToUnseenCaller: the function whose callers decide (a batch
  /// run joins its callers' uses across units, tool/batch/ProjectSummaries.cpp).
  const clang::FunctionDecl *ReturnedBy = nullptr;
};

struct ClassifierOptions {
  /// Extra function or macro names whose arguments are only logged.
  std::vector<std::string> LoggingFunctions;
};

/// The reads of a selection's count (UseClassifier::classifyCountReads).
struct CountReads {
  /// The first read: `sel.numel()` or `sel.size(0)`.
  const clang::CallExpr *First = nullptr;
  /// Some read is `numel()` (every element), not `size(0)` (the selected rows).
  bool Numel = false;
  /// The local variable the selection is kept in, or nullptr when read directly.
  const clang::VarDecl *Through = nullptr;
  /// How the host uses the count: true as soon as one read is.
  UseVerdict Verdict;
};

class UseClassifier {
public:
  UseClassifier(TranslationUnitAnalysis &TU, ClassifierOptions Options)
      : TU(TU), Ctx(TU.context()), Options(std::move(Options)) {}

  /// Classifies how the host uses the value of \p ValueExpr (a host scalar
  /// from item(), or a host tensor from cpu()).
  UseVerdict classify(const clang::Expr *ValueExpr);

  /// How the host uses a local variable that \p Writer fills (a copy into
  /// `&n`); the references inside \p Writer are not uses.
  UseVerdict classifyFilledVariable(const clang::VarDecl *VD, const clang::Stmt *Writer);

  /// Line of the innermost loop (in the same function) around \p S, or 0.
  unsigned enclosingLoopLine(const clang::Stmt *S);
  /// Sets V's interval fields when V is a false dependency and \p S is read
  /// only under a log interval inside its loop.
  void noteLogInterval(UseVerdict &V, const clang::Stmt *S);

  /// The waits \p Loop makes every iteration that no fix of the run removes:
  /// value reads of any class (`if (loss.item<float>() < eps) break;`, a loss
  /// logged every step, `out.cpu()` whose data the host reads) unless the fix of
  /// the check that reports them moves them out (TranslationUnitAnalysis::
  /// isRemovedByItsOwner), and ops that wait for a result the host needs
  /// (`masked_select` classified true); not under a branch of the body, not in
  /// a nested loop's body. While such a wait remains, a rewrite elsewhere in
  /// the loop (non_blocking, a deferred sum, coalescing) saves no wait. In
  /// source order.
  llvm::ArrayRef<const clang::CallExpr *> waitsEveryIteration(const clang::Stmt *Loop);

  /// A selection whose size depends on the data (`masked_select`, `index({mask})`,
  /// `nonzero`) of which only the count is read (`sel.numel()`, `sel.size(0)`),
  /// directly or through a local variable whose every use is such a read: how the
  /// host uses that count. nullopt when anything else reads the selection (its
  /// values, another dimension, an escape).
  std::optional<CountReads> classifyCountReads(const clang::Expr *Selection);

  /// printf-family, fmt, spdlog, glog, c10 logging or a configured logging function.
  bool isLoggingCall(const clang::CallExpr *Call) const;
  /// Whether parameter \p Index of \p FD (defined in this TU, not LibTorch's
  /// or the standard library's) is only written to a stream (`std::cout <<
  /// p`), given to a logging call, or to such a parameter of another function
  /// (two calls deep): the program's own print helper.
  bool loggingParameter(const clang::FunctionDecl *FD, unsigned Index, unsigned Depth) const;

private:
  UseVerdict classifyUse(const clang::Expr *E, unsigned Depth);
  UseVerdict classifyUseImpl(const clang::Expr *E, unsigned Depth,
                             llvm::SmallVectorImpl<const clang::Expr *> &Visited);
  llvm::DenseMap<std::pair<const void *, unsigned>, UseVerdict> UseMemo;
  /// The uses of the value \p Store (a declaration or an assignment; null:
  /// every read) puts in \p VD, joined; references inside \p Except and
  /// \p SkipWithin are not uses; with \p Within, only the references
  /// inside it are.
  UseVerdict classifyVariable(const clang::VarDecl *VD, const clang::Stmt *Store, const clang::Expr *Except,
                              unsigned Depth, const clang::Stmt *SkipWithin = nullptr,
                              const clang::Stmt *Within = nullptr);
  /// `m += v` (Accumulation) into \p Accumulator: a host metric (each
  /// iteration's read deferrable) unless m is a local the loop itself reads in
  /// a way the host needs (`if (m > limit) break;`).
  UseVerdict accumulatedInto(const clang::Expr *Accumulator, const clang::Stmt *Accumulation, unsigned Depth);
  /// `if (v == label) correct[label] += 1;` in a loop: a value that only
  /// decides whether local counts grow, counts the loop does not read, is
  /// summed as much as `correct += (v == label)` would be. nullopt otherwise.
  /// FD's body when it is the program's own function the call surely runs
  /// (no virtual, no library's or system header's body); nullptr otherwise.
  const clang::FunctionDecl *programHelperDefinition(const clang::FunctionDecl *FD) const;
  std::optional<UseVerdict> onlyDecidesCounts(const clang::IfStmt *If, unsigned Depth);
  /// A value passed by value to the unit's own function whose parameter's
  /// uses there are all false dependencies (it only goes back into tensor
  /// operations, or into a log): that verdict, said of the callee. nullopt otherwise.
  std::optional<UseVerdict> deferrableInCallee(const clang::CallExpr *Call, const clang::Expr *Arg,
                                               unsigned Depth);
  bool isStreamInsertion(const clang::CXXOperatorCallExpr *Op) const;
  bool isLoggingMacroArgument(const clang::Expr *E) const;
  /// A call of a function this TU does not define (the program's own metrics
  /// or progress object, defined in another file) whose name and signature say
  /// it records a number: void, the value taken as a number, a name such as
  /// `update`, `log_loss`, `addScalar`. nullopt when not.
  std::optional<UseVerdict> unseenMetricSink(const clang::CallExpr *Call, const clang::Expr *Arg) const;
  /// A value stored into a local container (`metrics["loss"] = v`,
  /// `values.push_back(v)`): how the container's contents are used.
  UseVerdict classifyContainer(const clang::VarDecl *Container, const clang::Stmt *Writer,
                               unsigned Depth);
  /// A value returned by a function of this program (a TU that defines
  /// `main`, or a function with internal linkage): how its callers use it.
  UseVerdict classifyReturned(const clang::Stmt *Return, unsigned Depth);
  llvm::DenseSet<const clang::FunctionDecl *> ReturnsInProgress;
  /// The local container variable a subscript or member call is made on.
  static const clang::VarDecl *localContainer(const clang::Expr *Object);

  llvm::DenseMap<const clang::Stmt *, std::vector<const clang::CallExpr *>> LoopWaits;

  TranslationUnitAnalysis &TU;
  clang::ASTContext &Ctx;
  ClassifierOptions Options;
};

} // namespace torch_syncfree

#endif
