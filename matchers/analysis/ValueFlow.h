// The engine's value-flow core: which definitions of a local variable reach a
// program point, computed once per function by a forward fixpoint over clang's
// CFG (loop-carried redefinitions are iterated, not cut). Everything that asks
// "where did this variable's value come from" asks here: the device oracle
// (where a tensor lives), pinning, element kinds, and value identity (two reads
// that see the same definition read the same tensor object).
//
// Why a reaching-definitions fixpoint and not clang's dataflow framework
// (`runDataflowAnalysis`): the framework models every expression's storage in an
// Environment and keeps a SAT solver for flow conditions; the facts the checks
// need are flat per-variable lattices whose transfer functions are the engine's
// own expression evaluators (DeviceOracle, PinnedMemory, TensorFacts). So the
// core computes the one relation they all share, reaching definitions, on the
// framework's own worklist (`ForwardDataflowWorklist`, reverse post-order), and
// each fact is the join, over the definitions reaching a read, of that
// definition's value, solved to a fixpoint where definitions depend on each
// other (DefinitionFixpoint below).
#ifndef TORCH_SYNCFREE_ANALYSIS_VALUEFLOW_H
#define TORCH_SYNCFREE_ANALYSIS_VALUEFLOW_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/Analysis/CFG.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/SparseBitVector.h"
#include <memory>
#include <optional>
#include <vector>

namespace torch_syncfree {

/// One definition of a variable or structured binding inside a function.
struct ValueDefinition {
  enum class Kind {
    Assigned, ///< declaration with initialiser, `=`, or `std::tie(..) = rhs`
    Escaped,  ///< passed by non-const reference to code that may assign it
    /// Bound to a mutable reference (`T &r = x;`), its address taken, or
    /// assigned by a lambda that captures it by reference: writes through
    /// the alias are not seen, so this definition reaches every read.
    Aliased,
    /// An element stored into a std container (`c.push_back(v)`, `c[i] = v`,
    /// `c.insert(..)`): the container's other elements stay, so it kills no
    /// other definition. Its value is the container's, not one tensor's: the
    /// facts of a variable treat it as opaque; the container queries below
    /// follow it.
    ElementStore,
  };
  Kind How = Kind::Assigned;
  /// The value is not known at the definition (escaped or aliased), or is a
  /// container's with one more element (an element store).
  bool isOpaque() const { return How != Kind::Assigned; }
  const clang::ValueDecl *Variable = nullptr;
  /// The CFG element that defines it (a DeclStmt, an assignment, a call).
  const clang::Stmt *Site = nullptr;
  /// The value given (Assigned): the initialiser or the right-hand side; nullptr
  /// for a declaration without initialiser.
  const clang::Expr *Value = nullptr;
  /// The element of Value given (`auto [a, b] = f();`, `std::tie(a, b) = f();`).
  std::optional<unsigned> Element;
  /// The expression naming the variable the definition targets (`c` in
  /// `c.push_back(v)`, `c[i] = v`, `c = d`, `c.clear()`); nullptr for a
  /// declaration.
  const clang::Expr *Target = nullptr;
};

/// Whether Call is a std function that only gives access to its arguments
/// (`std::get`, `std::begin`/`end`, `std::size`/`empty`): its reference
/// parameters never replace what they are bound to; the access's result is
/// followed where it is used.
bool onlyGivesAccess(const clang::CallExpr *Call);

/// Whether Call is `std::tie(...)` (nullptr: no).
bool isStdTie(const clang::CallExpr *Call);

/// The element of its decomposed initialiser that a structured binding names
/// (`auto [a, b] = f();`: b is element 1).
unsigned bindingIndex(const clang::BindingDecl *Binding);

/// The definitions of one variable that reach one read.
struct ReachingDefinitions {
  /// Indices into FunctionValueFlow::definitions(), ascending.
  llvm::SmallVector<unsigned, 2> Definitions;
  /// Some path from the function's entry reaches the read without defining
  /// the variable (a parameter, a global, a captured or uninitialised variable).
  bool FromEntry = false;
};

/// The value-flow facts of one function body (built by TranslationUnitAnalysis,
/// one per function, on first use).
class FunctionValueFlow {
public:
  /// nullptr when clang cannot build the function's CFG.
  static std::unique_ptr<FunctionValueFlow> build(const clang::FunctionDecl *FD, clang::ASTContext &Ctx);

  const clang::FunctionDecl *function() const { return Function; }
  llvm::ArrayRef<ValueDefinition> definitions() const { return Definitions; }
  /// Whether the definition of \p D that \p Site makes (a declaration, an
  /// assignment) reaches \p Read: the def-use question of the use classifier.
  /// nullopt when the core cannot say (a read inside a lambda, or Site makes no
  /// definition of D). An aliased variable's definitions reach every read.
  std::optional<bool> reaches(const clang::Stmt *Site, const clang::ValueDecl *D,
                              const clang::Expr *Read) const;

  /// The definitions of D (a variable or a structured binding of this
  /// function) that reach Read. nullopt when the CFG cannot answer: Read is
  /// inside a lambda (when it runs is not known here) or not in the function.
  std::optional<ReachingDefinitions> reachingAt(const clang::ValueDecl *D, const clang::Expr *Read) const;

  /// The assignments that alone decide what Read sees of D: every definition
  /// reaching it is an assignment of this function with a known value. nullopt
  /// when something else may: a path from the entry (a parameter; a field's
  /// value from before the method), an escape or alias, or a read the CFG
  /// cannot place. Each fact (device, pinning, element kind) of a local or of
  /// a field of *this is the join of its evaluator over these values.
  std::optional<llvm::SmallVector<const ValueDefinition *, 2>>
  assignmentsReaching(const clang::ValueDecl *D, const clang::Expr *Read) const;

  /// Value identity: whether the reads A and B of the same variable see the
  /// same definition (exactly one, assigned, reaching both), i.e. the same
  /// tensor object. In-place writes (`t.add_(1)`) between them change the
  /// contents, not the object: callers that need equal contents ask
  /// ExprMutationAnalyzer for those.
  bool sameDefinition(const clang::DeclRefExpr *A, const clang::DeclRefExpr *B) const;

  /// Container elements as states of the flow: whether the store into a
  /// container that \p Target names (the object of `c.push_back(v)`, the base
  /// of `c[i] = v`, the left side of `c = d`) reaches \p Read, a later
  /// reference to the container: a store after the read, or one that a
  /// `c.clear()` or `c = d` replaces on every path, does not. nullopt when the
  /// core makes no definition at Target (an element read, a store it does not
  /// model: the caller counts it) or cannot place Read (a lambda).
  std::optional<bool> storeReaches(const clang::Expr *Target, const clang::Expr *Read) const;

  /// Whether the declaration of \p VD (its initialiser's elements, for a
  /// container) reaches \p Read; nullopt when the core cannot say.
  std::optional<bool> declarationReaches(const clang::VarDecl *VD, const clang::Expr *Read) const;

  /// Loop invariance: whether every definition of Read's variable that reaches
  /// Read is made outside Loop (a for/while/do/range-for statement of this
  /// function), so the read sees the same object in every iteration.
  bool invariantIn(const clang::DeclRefExpr *Read, const clang::Stmt *Loop) const;

private:
  FunctionValueFlow(const clang::FunctionDecl *FD, clang::ASTContext &Ctx) : Function(FD), Ctx(Ctx) {}
  /// The block and index of the CFG element evaluating S or the nearest
  /// expression around it; nullopt inside a lambda or outside the CFG.
  std::optional<std::pair<const clang::CFGBlock *, unsigned>> positionOf(const clang::Stmt *S) const;
  void solve();

  const clang::FunctionDecl *Function;
  clang::ASTContext &Ctx;
  std::unique_ptr<clang::CFG> Graph;
  llvm::DenseMap<const clang::Stmt *, std::pair<const clang::CFGBlock *, unsigned>> Position;
  std::vector<ValueDefinition> Definitions;
  /// Per CFG element (block id, index): the definitions it makes.
  llvm::DenseMap<std::pair<unsigned, unsigned>, llvm::SmallVector<unsigned, 1>> DefinitionsAt;
  /// Per block id: the definitions reaching its first element. Bit
  /// Definitions.size() + k stands for "variable k not yet defined" (entry).
  /// Sparse: a state holds a few definitions per variable, and a function that
  /// reassigns one variable 50,000 times has 150,000 blocks (bench/growth.py).
  using DefinitionSet = llvm::SparseBitVector<>;
  std::vector<DefinitionSet> BlockEntry;
  llvm::DenseMap<const clang::ValueDecl *, unsigned> EntryBit;
  /// The definition each (statement, variable) makes, for def-use questions.
  llvm::DenseMap<std::pair<const clang::Stmt *, const clang::ValueDecl *>, unsigned> DefinitionAtSite;
  /// The definition each target expression makes (ValueDefinition::Target).
  llvm::DenseMap<const clang::Expr *, unsigned> DefinitionOfTarget;
  /// Per aliased variable: its Aliased definition (placed at no CFG element).
  llvm::DenseMap<const clang::ValueDecl *, unsigned> AliasDefinition;
  void findAliases();
  std::vector<const clang::ValueDecl *> EntryVariable; ///< per entry bit - Definitions.size()
  const clang::ValueDecl *variableOfBit(unsigned Bit) const {
    return Bit < Definitions.size() ? Definitions[Bit].Variable : EntryVariable[Bit - Definitions.size()];
  }
  /// State after Block's elements [0, End).
  void transfer(const clang::CFGBlock &Block, unsigned End, DefinitionSet &State) const;
};

/// A fixpoint over definitions for one flat fact (a placement, a pinning, an
/// element kind): the fact of a read is the join of the facts of the
/// definitions reaching it, and a definition's fact is its value's, which may
/// read variables defined by other definitions, itself included (`t = t * 2`
/// in a loop). Evaluated on demand: a definition met again while its own value
/// is being evaluated answers its current approximation (bottom at first) and
/// is re-evaluated until that approximation stops changing (a flat lattice:
/// at most three rounds), so loop-carried definitions are iterated, not cut.
template <typename Fact> class DefinitionFixpoint {
public:
  /// Evaluate(Definition) -> std::optional<Fact> (nullopt: bottom); Join(a, b);
  /// Top is returned for a definition that does not settle in MaxRounds.
  /// MaySettle is false while the answer depends on more than the definition
  /// (the device oracle's parameter bindings of a followed call): then nothing
  /// is memoised.
  template <typename EvaluateFn, typename JoinFn>
  std::optional<Fact> factOf(const ValueDefinition &Definition, EvaluateFn Evaluate, JoinFn Join, Fact Top,
                             bool MaySettle) {
    const void *Key = &Definition;
    if (auto Done = Settled.find(Key); Done != Settled.end())
      return Done->second;
    if (auto Current = Iterating.find(Key); Current != Iterating.end()) {
      Current->second.Reentered = true;
      return Current->second.Approximation;
    }
    Iterating[Key] = {};
    std::optional<Fact> Result;
    bool Settles = false;
    for (unsigned Round = 0; Round < MaxRounds && !Settles; ++Round) {
      Iterating[Key].Reentered = false;
      std::optional<Fact> Next = Evaluate(Definition);
      if (Round > 0 || Iterating[Key].Reentered)
        Next = joinOptional(Iterating[Key].Approximation, Next, Join);
      Settles = !Iterating[Key].Reentered || Next == Iterating[Key].Approximation;
      Iterating[Key].Approximation = Next;
      Result = Next;
    }
    if (!Settles)
      Result = Top;
    Iterating.erase(Key);
    // A fact computed while another definition is still iterating depends on
    // that definition's approximation: it is settled only by the outermost.
    if (Iterating.empty() && MaySettle)
      Settled[Key] = Result;
    return Result;
  }

  /// Whether a definition is being evaluated (facts computed now are provisional).
  bool iterating() const { return !Iterating.empty(); }

private:
  template <typename JoinFn>
  static std::optional<Fact> joinOptional(std::optional<Fact> A, std::optional<Fact> B, JoinFn Join) {
    if (!A)
      return B;
    if (!B)
      return A;
    return Join(*A, *B);
  }
  struct InFlight {
    std::optional<Fact> Approximation;
    bool Reentered = false;
  };
  static constexpr unsigned MaxRounds = 4;
  llvm::DenseMap<const void *, InFlight> Iterating;
  llvm::DenseMap<const void *, std::optional<Fact>> Settled;
};

} // namespace torch_syncfree

#endif
