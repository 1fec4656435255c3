#include "FindingFacts.h"

namespace torch_syncfree {

// Argument 1 carries a tag, the class (bits 0-7) and whether the read is made
// at an interval (bit 8), whether it moves a module (bit 9); argument 2 the loop line. The tag
// keeps a diagnostic with a second integer argument of its own (none of ours
// has one today) from being read as facts.
static constexpr int64_t FactsTag = 0x7f5f0000;
static constexpr unsigned ClassArgument = 1, LoopLineArgument = 2;
static constexpr int64_t IntervalBit = 0x100, ModuleMoveBit = 0x200;

void attachFacts(const clang::DiagnosticBuilder &Diag, const FindingFacts &Facts) {
  Diag << static_cast<int>(FactsTag + static_cast<int64_t>(Facts.Class) +
                           (Facts.IntervalRead ? IntervalBit : 0) +
                           (Facts.ModuleMove ? ModuleMoveBit : 0))
       << Facts.LoopLine;
}

std::optional<FindingFacts> factsOf(const clang::Diagnostic &Info) {
  if (Info.getNumArgs() <= LoopLineArgument ||
      Info.getArgKind(ClassArgument) != clang::DiagnosticsEngine::ak_sint ||
      Info.getArgKind(LoopLineArgument) != clang::DiagnosticsEngine::ak_uint)
    return std::nullopt;
  int64_t Tagged = Info.getArgSInt(ClassArgument);
  if ((Tagged & ~int64_t(0x3ff)) != FactsTag)
    return std::nullopt;
  FindingFacts Facts;
  Facts.IntervalRead = Tagged & IntervalBit;
  Facts.ModuleMove = Tagged & ModuleMoveBit;
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
  Facts.LoopLine = static_cast<unsigned>(Info.getArgUInt(LoopLineArgument));
  return Facts;
}

} // namespace torch_syncfree
