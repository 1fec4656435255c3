// The typed facts of a finding travel with its diagnostic, not in its text.
//
// A check emits its finding through clang's diagnostic engine (so NOLINT, the
// header filter, clang-tidy's printer and its fix merging all apply). The
// rendered message is for people; the facts a front end needs (the dependency
// class, the loop line) ride along as integer arguments after the ones the
// format string uses. clang's formatter ignores arguments the format does not
// name, so the clang-tidy plugin prints the same text, and the standalone
// tool's runner reads the facts back from the Diagnostic (CheckRunner) into the
// finding record every output reads. Nothing recovers a class from message text.
#ifndef TORCH_SYNCFREE_FINDINGFACTS_H
#define TORCH_SYNCFREE_FINDINGFACTS_H

#include "Dependency.h"
#include "clang/Basic/Diagnostic.h"
#include "llvm/Support/JSON.h"
#include <optional>

namespace torch_syncfree {

/// The dependency class and the facts of FindingFacts.def.
struct FindingFacts {
  Dependency Class = Dependency::True;
#define FINDING_FACT(Type, Name, WireName, PublicName, Doc) Type Name = Type();
#include "FindingFacts.def"
};

/// Appends the facts to a diagnostic whose format string names only %0.
void attachFacts(const clang::DiagnosticBuilder &Diag, const FindingFacts &Facts);
/// The facts a check attached, or nothing (a compiler diagnostic, a note).
std::optional<FindingFacts> factsOf(const clang::Diagnostic &Info);

/// Every fact, losslessly ("dependency" and each wire name): batch workers and
/// the results cache.
llvm::json::Object factsToJson(const FindingFacts &Facts);
/// The inverse of factsToJson; nullopt when a fact is missing or out of range.
std::optional<FindingFacts> factsFromJson(const llvm::json::Object &Object);
/// The facts with a public name that are set, under their wire names (SARIF
/// result properties, LSP diagnostic data).
void addPublicFacts(const FindingFacts &Facts, llvm::json::Object &Out);
/// Every fact with a public name under it, unset ones as null (--format=json).
void addPublicFactsOrNull(const FindingFacts &Facts, llvm::json::Object &Out);

} // namespace torch_syncfree

#endif
