// Where the program keeps tensors, and what it stores into them: local
// variables, tensor fields of the program's own classes and containers of
// tensors (locals or fields). One model for the facts that follow a tensor
// into its storage and back out (host pinning, element kinds) and for the fixes
// that edit where a value is stored (pinning at creation, fixes/).
#ifndef TORCH_SYNCFREE_TENSORSTORAGE_H
#define TORCH_SYNCFREE_TENSORSTORAGE_H

#include "TranslationUnitAnalysis.h"
#include "analysis/ValueFlow.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <optional>
#include <vector>

namespace torch_syncfree {

/// The tensor a view is taken of (`t.narrow(..)`, `t[i]`, `t.view(..)`), or
/// nullptr when \p E is no view.
const clang::Expr *viewBase(const clang::Expr *E);

/// Where tensors are kept that the analysis can follow: a local variable (not a
/// parameter, not a reference) or a field of the program's own class whose
/// every store the TU shows (isClosedProgramField); nullptr otherwise.
const clang::ValueDecl *storageOf(clang::ASTContext &Ctx, const clang::Expr *E);

/// The storage's uses: the references in its function (a local), or every
/// member access in the main file (a field); nullopt when not all can be seen.
std::optional<std::vector<const clang::Expr *>> storageUses(TranslationUnitAnalysis &TU,
                                                            const clang::ValueDecl *Storage);

/// Whether \p S is in a constructor of \p Field's class: a store there happens
/// before any method of the object runs.
bool inConstructorOf(clang::ASTContext &Ctx, const clang::Stmt *S, const clang::FieldDecl *Field);

/// The container (a storage holding a sequence of tensors) whose element \p E
/// reads: `c[i]`, `c.at(i)`, `c.front()`, `c.back()`, or the variable of a
/// range-for over `c`; nullptr otherwise. \p Reference, when given, receives
/// the expression that names the container there (the read of it).
const clang::ValueDecl *containerOfElement(clang::ASTContext &Ctx, const clang::Expr *E,
                                           const clang::Expr **Reference = nullptr);

/// One value stored into a storage, and the statement that stores it.
struct TensorStore {
  const clang::Expr *Value;
  const clang::Stmt *Statement;
  bool InConstructor = false; ///< a field's store in a constructor of its class
};

/// What a field is initialised with when an object is built: its default
/// member initialiser (it runs in every constructor that does not name the
/// field) and the written initialisers of the constructors defined here.
std::vector<const clang::Expr *> fieldInitialisers(const clang::FieldDecl *Field);

/// What a tensor container (a local or a field) holds: every value stored with
/// push_back / emplace_back (one argument) or `c[i] = v`, and the views its
/// initialisers split off, with the statements that store them; nullopt when it
/// may change in other ways (insert, swap, passed to code that may write it, an
/// element written in place: `c[i].add_(..)`).
std::optional<std::vector<TensorStore>> containerStores(TranslationUnitAnalysis &TU,
                                                        const clang::ValueDecl *Container);

/// The stores of containerStores that \p Read (a reference to the container)
/// can see: for a local container, those the value-flow core says reach it
/// (not those after it, nor those a `clear()` or a reassignment replaced on
/// every path); for a field or a static, all of them (an earlier call's
/// stores are there when the function starts).
std::optional<std::vector<TensorStore>> containerStoresReaching(TranslationUnitAnalysis &TU,
                                                                const clang::ValueDecl *Container,
                                                                const clang::Expr *Read);

/// Whether one use of a tensor storage only reads it: the object of a LibTorch
/// method that does not write (no `_` suffix, no data_ptr/accessor), a
/// subscript read, an argument of a LibTorch call, or a lambda capture (the
/// lambda body's uses are among the uses).
bool isReadOnlyUse(clang::ASTContext &Ctx, const clang::Expr *Use);

/// Whether a local tensor variable is only read in its function.
bool onlyRead(TranslationUnitAnalysis &TU, const clang::VarDecl *VD);

/// What a tensor field of the program's own class is given across the program:
/// its default member initialiser, the constructors' initialisers and
/// assignments `f = v` anywhere in the main file.
struct FieldStores {
  std::vector<TensorStore> Stores;
  /// Every other use only reads the field.
  bool OnlyRead = true;
  /// Some other use may put another tensor object in it (passed by non-const
  /// reference to code that is not LibTorch's, its address taken, `set_`):
  /// facts of the object (device, pinning, element kind) are not the join of
  /// Stores then. In-place LibTorch ops keep the object.
  bool MayBeReplaced = false;
};
std::optional<FieldStores> tensorFieldStores(TranslationUnitAnalysis &TU, const clang::FieldDecl *Field);

/// The values a read of a storage may see, as the value-flow core orders its
/// stores: for a local variable or a field of `*this`, the assignments of the
/// enclosing function that alone reach \p Read (fixpoint keys for the facts'
/// DefinitionFixpoint); for a field read whose value may come from before the
/// method (its entry, a call that may store, an alias), every store of the
/// program instead (their order across methods is not known).
struct StoredValues {
  /// The function's assignments reaching the read; empty when ProgramStores answer.
  llvm::SmallVector<const ValueDefinition *, 2> Assignments;
  /// The field's stores across the program (only when Assignments is empty).
  std::vector<TensorStore> ProgramStores;
};
/// nullopt when not every value is known (a local from outside its function,
/// a field some use may replace, a store the TU does not show).
std::optional<StoredValues> fieldValuesAt(TranslationUnitAnalysis &TU, const clang::FieldDecl *Field,
                                          const clang::Expr *Read);

/// One flat fact (a pinning, an element kind) of a field read, joined over the
/// values \p Values says it may see: the method's assignments through the
/// question's DefinitionFixpoint (loop-carried stores iterate), or the
/// program's stores, each once per question (\p InProgress: a store that reads
/// the field again answers Top). \p Evaluate(const Expr *) -> Fact.
template <typename Fact, typename EvaluateFn, typename JoinFn>
Fact joinFieldValues(const clang::FieldDecl *Field, const StoredValues &Values,
                     DefinitionFixpoint<Fact> &Fixpoint,
                     llvm::SmallPtrSetImpl<const clang::FieldDecl *> &InProgress, EvaluateFn Evaluate,
                     JoinFn Join, Fact Top) {
  std::optional<Fact> Result;
  auto Add = [&](std::optional<Fact> F) {
    if (F)
      Result = Result ? Join(*Result, *F) : *F;
  };
  for (const ValueDefinition *Definition : Values.Assignments)
    Add(Fixpoint.factOf(
        *Definition, [&](const ValueDefinition &Def) { return std::optional<Fact>(Evaluate(Def.Value)); },
        Join, Top, /*MaySettle=*/true));
  if (!Values.ProgramStores.empty()) {
    if (!InProgress.insert(Field).second)
      return Top;
    for (const TensorStore &Store : Values.ProgramStores)
      Add(Evaluate(Store.Value));
    InProgress.erase(Field);
  }
  return Result.value_or(Top);
}

} // namespace torch_syncfree

#endif
