// The dependency class of a finding: a leaf header (no AST), so the front
// ends' records and outputs do not compile against the analyses.
#ifndef TORCH_SYNCFREE_DEPENDENCY_H
#define TORCH_SYNCFREE_DEPENDENCY_H

#include "llvm/ADT/StringRef.h"
#include <optional>

namespace torch_syncfree {

enum class Dependency {
  False,       ///< the CPU does not need the value: logging, metrics, unused
  True,        ///< control flow, sizes, indices, host memory that is read
  Intentional, ///< a deliberate barrier (timing, buffer lifetime)
};

/// "false", "true", "intentional": the JSON spelling.
const char *dependencyName(Dependency D);
/// How a message says it: "false dependency", "true dependency", "intentional barrier".
const char *dependencyLabel(Dependency D);
/// The inverse of dependencyName (a serialized record, never a message).
std::optional<Dependency> dependencyNamed(llvm::StringRef Name);

} // namespace torch_syncfree

#endif
