//===- utils/Directives.h - Preprocessor directives of a file ----*- C++ -*-===//
//
// The #include, #import and conditional directives of a source text, scanned
// by clang's dependency-directives scanner, so that comments, continued lines
// and raw strings are handled as the preprocessor handles them. The one place
// the tool reads directives from text (where a fix inserts a helper, which file
// includes a header); the shared-PCH planner reads a file's leading block, a
// question the scanner does not answer (it drops the code between directives).
//
//===----------------------------------------------------------------------===//
#ifndef TORCH_SYNCFREE_UTILS_DIRECTIVES_H
#define TORCH_SYNCFREE_UTILS_DIRECTIVES_H

#include "llvm/ADT/StringRef.h"

#include <vector>

namespace torch_syncfree {

struct SourceDirective {
  enum Kind { Include, Conditional, EndConditional, Other } Kind;
  unsigned Offset;        ///< of the `#`
  unsigned NextLine;      ///< the offset just after the directive's line
  llvm::StringRef Header; ///< an include's header name, without quotes or brackets
  bool Angled = false;    ///< `<...>` rather than `"..."`
};

/// The directives of \p Text in order (#include, #include_next and #import
/// are Include; #if, #ifdef and #ifndef open a Conditional, #endif closes
/// it). Empty when the scanner cannot read the text.
std::vector<SourceDirective> scanDirectives(llvm::StringRef Text);

} // namespace torch_syncfree

#endif
