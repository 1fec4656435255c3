#include "FindingFacts.h"
#include <limits>

namespace torch_syncfree {

/// Each class's wire name and message label, in one place.
static std::pair<const char *, const char *> dependencyWords(Dependency D) {
  switch (D) {
  case Dependency::False:
    return {"false", "false dependency"};
  case Dependency::True:
    break;
  case Dependency::Intentional:
    return {"intentional", "intentional barrier"};
  }
  return {"true", "true dependency"};
}

const char *dependencyName(Dependency D) { return dependencyWords(D).first; }
const char *dependencyLabel(Dependency D) { return dependencyWords(D).second; }

std::optional<Dependency> dependencyNamed(llvm::StringRef Name) {
  for (Dependency D : {Dependency::False, Dependency::True, Dependency::Intentional})
    if (Name == dependencyName(D))
      return D;
  return std::nullopt;
}

// Argument 1 carries a tag and the class (bits 0-7); arguments 2.. the facts of
// FindingFacts.def in order, as unsigned integers. The tag keeps a diagnostic with
// integer arguments of its own (none of ours has one today) from being read as facts.
static constexpr int64_t FactsTag = 0x7f5f0000;
static constexpr unsigned ClassArgument = 1;
enum : unsigned {
#define FINDING_FACT(Type, Name, WireName, PublicName, Doc) FactIndexOf##Name,
#include "FindingFacts.def"
  FactCount
};
static_assert(ClassArgument + 1 + FactCount <= clang::DiagnosticStorage::MaxArguments,
              "a diagnostic carries at most MaxArguments arguments");

void attachFacts(const clang::DiagnosticBuilder &Diag, const FindingFacts &Facts) {
  Diag << static_cast<int>(FactsTag + static_cast<int64_t>(Facts.Class));
#define FINDING_FACT(Type, Name, WireName, PublicName, Doc) Diag << static_cast<unsigned>(Facts.Name);
#include "FindingFacts.def"
}

std::optional<FindingFacts> factsOf(const clang::Diagnostic &Info) {
  if (Info.getNumArgs() != ClassArgument + 1 + FactCount ||
      Info.getArgKind(ClassArgument) != clang::DiagnosticsEngine::ak_sint)
    return std::nullopt;
  for (unsigned I = ClassArgument + 1; I < Info.getNumArgs(); ++I)
    if (Info.getArgKind(I) != clang::DiagnosticsEngine::ak_uint)
      return std::nullopt;
  int64_t Tagged = Info.getArgSInt(ClassArgument);
  if ((Tagged & ~int64_t(0xff)) != FactsTag)
    return std::nullopt;
  FindingFacts Facts;
  switch (Tagged & 0xff) {
  case static_cast<int>(Dependency::False):
    Facts.Class = Dependency::False;
    break;
  case static_cast<int>(Dependency::True):
    Facts.Class = Dependency::True;
    break;
  case static_cast<int>(Dependency::Intentional):
    Facts.Class = Dependency::Intentional;
    break;
  default:
    return std::nullopt;
  }
  unsigned Argument = ClassArgument + 1;
#define FINDING_FACT(Type, Name, WireName, PublicName, Doc)                                                  \
  Facts.Name = static_cast<Type>(Info.getArgUInt(Argument++));
#include "FindingFacts.def"
  return Facts;
}

static llvm::json::Value toJson(unsigned Value) { return static_cast<int64_t>(Value); }
static llvm::json::Value toJson(bool Value) { return Value; }
static bool fromJson(const llvm::json::Value *V, unsigned &Out) {
  std::optional<int64_t> N = V ? V->getAsInteger() : std::nullopt;
  if (!N || *N < 0 || *N > std::numeric_limits<unsigned>::max())
    return false;
  Out = static_cast<unsigned>(*N);
  return true;
}
static bool fromJson(const llvm::json::Value *V, bool &Out) {
  std::optional<bool> B = V ? V->getAsBoolean() : std::nullopt;
  if (!B)
    return false;
  Out = *B;
  return true;
}

llvm::json::Object factsToJson(const FindingFacts &Facts) {
  llvm::json::Object Object{{"dependency", dependencyName(Facts.Class)}};
#define FINDING_FACT(Type, Name, WireName, PublicName, Doc) Object[WireName] = toJson(Facts.Name);
#include "FindingFacts.def"
  return Object;
}

std::optional<FindingFacts> factsFromJson(const llvm::json::Object &Object) {
  std::optional<llvm::StringRef> Class = Object.getString("dependency");
  std::optional<Dependency> D = Class ? dependencyNamed(*Class) : std::nullopt;
  if (!D)
    return std::nullopt;
  FindingFacts Facts;
  Facts.Class = *D;
#define FINDING_FACT(Type, Name, WireName, PublicName, Doc)                                                  \
  if (!fromJson(Object.get(WireName), Facts.Name))                                                           \
    return std::nullopt;
#include "FindingFacts.def"
  return Facts;
}

void addPublicFacts(const FindingFacts &Facts, llvm::json::Object &Out) {
#define FINDING_FACT(Type, Name, WireName, PublicName, Doc)                                                  \
  if (llvm::StringRef(PublicName).size() && Facts.Name)                                                      \
    Out[WireName] = toJson(Facts.Name);
#include "FindingFacts.def"
}

void addPublicFactsOrNull(const FindingFacts &Facts, llvm::json::Object &Out) {
#define FINDING_FACT(Type, Name, WireName, PublicName, Doc)                                                  \
  if (llvm::StringRef(PublicName).size())                                                                    \
    Out[PublicName] = Facts.Name ? toJson(Facts.Name) : llvm::json::Value(nullptr);
#include "FindingFacts.def"
}

} // namespace torch_syncfree
