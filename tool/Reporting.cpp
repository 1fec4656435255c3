#include "Reporting.h"
#include "SyncCheck.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace clang;

namespace torch_syncfree {

/// Line and column (1-based) of a byte offset, reading each file once.
static std::pair<unsigned, unsigned> lineAndColumn(StringRef Path, unsigned Offset) {
  static llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> Files;
  auto &Buffer = Files[Path];
  if (!Buffer) {
    auto Loaded = llvm::MemoryBuffer::getFile(Path);
    if (!Loaded)
      return {0, 0};
    Buffer = std::move(*Loaded);
  }
  StringRef Text = Buffer->getBuffer().take_front(Offset);
  unsigned Line = 1 + Text.count('\n');
  size_t LastNewline = Text.rfind('\n');
  unsigned Column = LastNewline == StringRef::npos ? Offset + 1 : Offset - LastNewline;
  return {Line, Column};
}

std::vector<ReportedFinding>
collectFindings(const std::vector<tidy::ClangTidyError> &Errors) {
  std::vector<ReportedFinding> Findings;
  for (const tidy::ClangTidyError &Error : Errors) {
    if (!StringRef(Error.DiagnosticName).starts_with("torch-sync-"))
      continue;
    ReportedFinding F;
    F.Check = Error.DiagnosticName;
    F.File = Error.Message.FilePath;
    std::tie(F.Line, F.Column) = lineAndColumn(F.File, Error.Message.FileOffset);
    F.Message = Error.Message.Message;
    F.Dependency = dependencyName(dependencyFromMessage(F.Message).value_or(Dependency::True));
    for (const auto &Entry : Error.Message.Fix)
      F.Fixable |= !Entry.second.empty();
    Findings.push_back(std::move(F));
  }
  return Findings;
}

void printJson(const std::vector<ReportedFinding> &Findings, llvm::raw_ostream &OS) {
  llvm::json::Array Array;
  for (const ReportedFinding &F : Findings)
    Array.push_back(llvm::json::Object{{"check", F.Check},
                                       {"file", F.File},
                                       {"line", F.Line},
                                       {"column", F.Column},
                                       {"message", F.Message},
                                       {"dependency", F.Dependency},
                                       {"fixable", F.Fixable}});
  OS << llvm::formatv("{0:2}", llvm::json::Value(std::move(Array))) << "\n";
}

} // namespace torch_syncfree
