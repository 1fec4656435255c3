//===- SiteOwnership.h - Which check reports a sync site -------*- C++ -*-===//
//
// One finding per sync site. Where a specific check reports a site with a
// better remedy than the general one (a read summed into a host metric, reads
// coalesced into one copy, a read only logged), the general check leaves it.
// Which check that is is data: Checks.def lists, per kind of site, the checks
// that may report it, most specific first (TORCH_SYNC_SITE_OWNER). Each check
// answers for itself whether it reports a site (SiteClaimant::claimsSite); the
// engine asks the enabled ones in that order, once per site and TU
// (TranslationUnitAnalysis::ownerOfSite). Checks ask the engine who owns a
// site and never each other, and the answer does not depend on the order in
// which MatchFinder visits the checks.
//
//===----------------------------------------------------------------------===//
#ifndef TORCH_SYNCFREE_SITEOWNERSHIP_H
#define TORCH_SYNCFREE_SITEOWNERSHIP_H

#include "clang/AST/Expr.h"
#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <optional>

namespace torch_syncfree {

class TranslationUnitAnalysis;

/// Every check of Checks.def, by class.
enum class CheckId {
#define TORCH_SYNC_CHECK(Class, Name, Summary, Level) Class,
#include "Checks.def"
};
inline constexpr unsigned NumCheckIds = 0
#define TORCH_SYNC_CHECK(Class, Name, Summary, Level) +1
#include "Checks.def"
    ;

/// The sync sites more than one check reports.
enum class SyncSiteKind {
  ItemRead,     ///< `t.item<T>()` (a member call)
  GradNormCall, ///< `clip_grad_norm_(...)`
};

/// The kind of sync site \p Site is, if it is one several checks report.
std::optional<SyncSiteKind> syncSiteKindOf(const clang::Expr *Site);

/// The checks that may report a site of \p Kind, most specific first
/// (Checks.def's TORCH_SYNC_SITE_OWNER lines).
llvm::ArrayRef<CheckId> sitePrecedence(SyncSiteKind Kind);

/// A check that reports sites of a kind listed in Checks.def.
class SiteClaimant {
public:
  virtual ~SiteClaimant() = default;
  /// Whether this check reports \p Site, when no check ranked above it does.
  /// It may ask TranslationUnitAnalysis::isSiteClaimedAbove about sites
  /// (its own rank as the bound), never ownerOfSite.
  virtual bool claimsSite(SyncSiteKind Kind, TranslationUnitAnalysis &TU, const clang::Expr *Site) = 0;
  /// Whether this check's fix, where it owns \p Site, removes the wait (other
  /// waits of the loop aside: the "no gain" rule counts the waits no fix of the
  /// run removes, and must not depend on itself).
  virtual bool removesSite(SyncSiteKind, TranslationUnitAnalysis &, const clang::Expr *) { return false; }
  /// Whether removesSite can answer true at all (the check has a fix that
  /// removes waits, and it is on).
  virtual bool removesAnySites() const { return false; }
};

/// The checks one factory set made (clang-tidy makes the enabled ones only):
/// who can claim a site. A check enrolls when made and withdraws when destroyed.
class SiteClaimants {
public:
  void enroll(CheckId Id, SiteClaimant *Check) { Checks[static_cast<unsigned>(Id)] = Check; }
  void withdraw(CheckId Id, const SiteClaimant *Check) {
    if (Checks[static_cast<unsigned>(Id)] == Check)
      Checks[static_cast<unsigned>(Id)] = nullptr;
  }
  SiteClaimant *claimant(CheckId Id) const { return Checks[static_cast<unsigned>(Id)]; }

private:
  std::array<SiteClaimant *, NumCheckIds> Checks{};
};

} // namespace torch_syncfree

#endif
