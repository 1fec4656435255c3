// llvm::json::parse and clang-tidy's line-filter parser recurse once per
// nesting level, so a few hundred thousand '[' overflow the stack. Every JSON
// text from outside (baselines, --line-filter, LSP messages) is measured
// first. Hand-written: neither parser has a depth limit.
#ifndef TORCH_SYNCFREE_JSONLIMITS_H
#define TORCH_SYNCFREE_JSONLIMITS_H

#include "llvm/ADT/StringRef.h"
#include <string>

namespace torch_syncfree {

constexpr unsigned MaxJsonNesting = 64;

/// "" when Text nests arrays and objects at most MaxJsonNesting deep (strings
/// are skipped), else a one-line reason.
inline std::string checkJsonNesting(llvm::StringRef Text, unsigned Max = MaxJsonNesting) {
  unsigned Depth = 0;
  bool InString = false;
  for (size_t I = 0; I < Text.size(); ++I) {
    char C = Text[I];
    if (InString) {
      if (C == '\\')
        ++I;
      else if (C == '"')
        InString = false;
      continue;
    }
    if (C == '"')
      InString = true;
    else if (C == '[' || C == '{') {
      if (++Depth > Max)
        return "JSON nested deeper than " + std::to_string(Max) + " levels";
    } else if ((C == ']' || C == '}') && Depth > 0)
      --Depth;
  }
  return "";
}

} // namespace torch_syncfree

#endif
