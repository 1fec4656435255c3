// The engine's state for one translation unit: every memo, index and set the
// analyses keep (template representatives, reference indices, enclosing loops,
// the calls of each function, the reads one fix takes over), the device oracle
// and the use classifiers. One object per TU, reached by the checks through
// the AnalysisHub their factories share: there is no static or thread_local
// mutable data in matchers/ (docs/design.md), so results are a function of the
// input alone, whatever the number of threads.
#ifndef TORCH_SYNCFREE_TRANSLATIONUNITANALYSIS_H
#define TORCH_SYNCFREE_TRANSLATIONUNITANALYSIS_H

#include "LibTorchVersion.h"
#include "SiteOwnership.h"
#include "SyncCalls.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace torch_syncfree {

class DeviceOracle;
class FunctionValueFlow;
class UseClassifier;
struct ClassifierOptions;

class TranslationUnitAnalysis {
public:
  /// \p Claimants: the checks that may own sync sites (none: ownerOfSite
  /// answers nullopt). \p PP: the TU's preprocessor, for what only its macro
  /// table says (the LibTorch version); null where there is none.
  explicit TranslationUnitAnalysis(clang::ASTContext &Ctx, const SiteClaimants *Claimants = nullptr,
                                   clang::Preprocessor *PP = nullptr);
  ~TranslationUnitAnalysis();
  TranslationUnitAnalysis(const TranslationUnitAnalysis &) = delete;
  TranslationUnitAnalysis &operator=(const TranslationUnitAnalysis &) = delete;

  clang::ASTContext &context() const { return Ctx; }
  /// The LibTorch version the TU's headers define (`TORCH_VERSION_MAJOR` /
  /// `TORCH_VERSION_MINOR`), read once; nullopt when they do not say.
  std::optional<LibTorchVersion> headerLibTorchVersion();

  /// Where tensors live, shared by every check of the TU.
  DeviceOracle &oracle();
  /// The value-flow core's facts of FD's body (analysis/ValueFlow.h), built on
  /// first use; nullptr when FD has no body or clang cannot build its CFG.
  const FunctionValueFlow *valueFlow(const clang::FunctionDecl *FD);
  /// How values are used; one per distinct option set (LoggingFunctions).
  UseClassifier &classifier(const ClassifierOptions &Options);

  /// Every DeclRefExpr naming VD (a variable or a structured binding) inside Root, in source order. Indexed once per
  /// root (one walk of Root for all its variables): the analyses ask this per
  /// use, and a findAll() matcher per question was quadratic (2,000
  /// reassignments of one variable took 52 s).
  llvm::ArrayRef<const clang::DeclRefExpr *> referencesTo(const clang::Stmt &Root,
                                                          const clang::ValueDecl *VD);
  /// Every member access naming Field spelled in the main file (`batches_`,
  /// `this->batches_`, `other.batches_`), in the order of a walk of the main file's declarations, or nullopt when code
  /// the index cannot resolve may name it (a member access on a dependent type
  /// with the field's name). Indexed once per TU: one walk of the main file's
  /// declarations for all fields.
  std::optional<llvm::ArrayRef<const clang::MemberExpr *>> memberReferencesTo(const clang::FieldDecl *Field);
  /// One call under a statement, classified once per TU (SyncCalls.h).
  struct CallSite {
    const clang::CallExpr *Call;
    /// The catalog sync it is; nullopt for other calls (and for the syncs the
    /// tool inserted on purpose: a marked read, a kept read's line).
    std::optional<SyncCall> Sync;
    /// Inside a lambda under the statement asked about (its body runs when
    /// the lambda is called, not where it is written).
    bool InLambda;
    /// A read the tool inserted on purpose (Sync is nullopt for it).
    bool Inserted;
  };
  /// Every call under \p Root, in source order (pre-order), each classified
  /// once per TU: the enumeration the walks that look for syncs share (the
  /// use classifier's waits of a loop, graph capture, call-in-loop's callee
  /// bodies, eager-fallback's argument). Indexed once per outermost function
  /// body; a statement inside one is answered from its body's index.
  std::vector<CallSite> callSitesUnder(const clang::Stmt &Root);
  /// The innermost for/while/do/range-for loop around S within its function or
  /// lambda, or nullptr (memoised along the path).
  const clang::Stmt *enclosingLoop(const clang::Stmt *S);
  /// Whether S is in a template instantiation other than the template's
  /// representative, or in a branch that never runs (a constant condition).
  bool isOutsideAnalysedCode(const clang::Stmt *S);
  /// Whether every caller of FD is in this TU: a function (not a method, not
  /// main) defined in the main file of a program (a TU that defines main), or
  /// one with internal linkage.
  bool callersAllVisible(const clang::FunctionDecl *FD);
  /// The calls of FD spelled in the main file, in source order.
  llvm::ArrayRef<const clang::CallExpr *> callsOf(const clang::FunctionDecl *FD);
  /// The check that reports the sync site \p Site (SiteOwnership.h): the
  /// first enabled check in Checks.def's precedence for its kind that claims
  /// it; nullopt when none does or \p Site is no such site. Each check's
  /// claim is asked once per site.
  std::optional<CheckId> ownerOfSite(const clang::Expr *Site);
  /// Whether the fix of the check that reports \p Site removes its wait
  /// (SiteClaimant::removesSite; other waits of the loop aside). Checks
  /// ranked below the last one whose fix can remove such sites are not asked.
  bool isRemovedByItsOwner(const clang::Expr *Site);
  /// Whether an enabled check ranked above \p Rank for \p Site's kind claims it
  /// (for a claim that depends on other sites' owners).
  bool isSiteClaimedAbove(const clang::Expr *Site, CheckId Rank);
  /// A name a fix declares, claimed so that no other fix of this run declares
  /// it again in \p Scope (a function, or nullptr for the file: the device
  /// clipping helper). True for the first fix that asks, and again for the same
  /// \p Owner (the site whose fix declares it: an analysis asked twice about
  /// one site answers the same).
  bool claimName(const clang::Decl *Scope, llvm::StringRef Name, const void *Owner = nullptr) {
    auto [It, New] = ClaimedNames.try_emplace({Scope, Name.str()}, Owner);
    return New || (Owner && It->second == Owner);
  }

private:
  const clang::FunctionDecl *representativeOf(const clang::FunctionDecl *Pattern);
  bool declIsInInstantiation(const clang::Decl *D);
  /// Child follows a throw/return/break/continue/goto in Block, with no label between.
  bool isUnreachableInBlock(const clang::CompoundStmt *Block, const clang::Stmt *Child);

  clang::ASTContext &Ctx;
  clang::Preprocessor *PP;
  std::optional<std::optional<LibTorchVersion>> HeaderVersion;
  std::map<std::pair<const clang::Decl *, std::string>, const void *> ClaimedNames;
  std::unique_ptr<DeviceOracle> Oracle;
  llvm::DenseMap<const clang::FunctionDecl *, std::unique_ptr<FunctionValueFlow>> ValueFlows;
  std::map<std::vector<std::string>, std::unique_ptr<UseClassifier>> Classifiers;
  using ReferenceIndex =
      llvm::DenseMap<const clang::ValueDecl *, llvm::SmallVector<const clang::DeclRefExpr *, 4>>;
  llvm::DenseMap<const clang::Stmt *, std::unique_ptr<ReferenceIndex>> ReferenceIndices;
  struct MemberIndex {
    llvm::DenseMap<const clang::FieldDecl *, llvm::SmallVector<const clang::MemberExpr *, 4>> Uses;
    llvm::DenseSet<const clang::IdentifierInfo *> DependentNames;
  };
  /// Per outermost body (or a root outside any function): its calls, pre-order.
  llvm::DenseMap<const clang::Stmt *, std::vector<CallSite>> CallSites;
  const std::vector<CallSite> &callSitesOfBody(const clang::Stmt &Body);
  std::unique_ptr<MemberIndex> Members;
  llvm::DenseMap<const clang::Stmt *, const clang::Stmt *> LoopMemo;
  llvm::DenseMap<const clang::Stmt *, bool> OutsideAnalysedCode;
  llvm::DenseMap<const clang::FunctionDecl *, const clang::FunctionDecl *> Representatives;
  llvm::DenseMap<const clang::FunctionDecl *, std::vector<const clang::CallExpr *>> CallsOf;
  const SiteClaimants *Claimants;
  /// Each check's answer per site; absent while it is being asked (a claim
  /// that depends on itself is refused).
  llvm::DenseMap<std::pair<const clang::Expr *, unsigned>, bool> Claims;
  bool claims(CheckId Id, SyncSiteKind Kind, const clang::Expr *Site);
  llvm::DenseMap<const clang::CompoundStmt *, llvm::DenseSet<const clang::Stmt *>> DeadRanges;
  std::optional<bool> ProgramTU;
};

/// Shared by the checks one factory set creates (one per clang-tidy run, batch
/// worker run or editor analysis; TUs are analysed one after another there):
/// holds the analysis of the TU being checked.
class AnalysisHub {
public:
  /// The analysis of Ctx's TU, made on first use.
  TranslationUnitAnalysis &analysis(clang::ASTContext &Ctx) {
    if (!Current || &Current->context() != &Ctx)
      Current = std::make_unique<TranslationUnitAnalysis>(Ctx, &Claimants, PP);
    return *Current;
  }
  /// The preprocessor of the TU about to be analysed (each check's
  /// registerPPCallbacks, before the TU is parsed).
  void setPreprocessor(clang::Preprocessor *ThePP) { PP = ThePP; }
  /// The checks of this hub that may own sync sites.
  SiteClaimants &claimants() { return Claimants; }
  /// Called as each TU starts (before any matching): a new ASTContext may
  /// reuse the address of the last one.
  void startTranslationUnit() { Current.reset(); }
  /// The analysis of the TU being checked, or nullptr before its first use.
  TranslationUnitAnalysis *current() { return Current.get(); }

private:
  SiteClaimants Claimants;
  clang::Preprocessor *PP = nullptr;
  std::unique_ptr<TranslationUnitAnalysis> Current;
};

} // namespace torch_syncfree

#endif
