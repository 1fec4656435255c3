#include "FixApplier.h"

#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace clang;

namespace torch_syncfree {

std::string writeFileAtomically(StringRef Path, StringRef Contents) {
  // Hand-written: llvm::writeToOutput renames a temporary file too, but the
  // temporary gets default permissions, and a rewritten source must keep its own.
  llvm::sys::fs::file_status Status;
  unsigned Mode = 0644;
  if (!llvm::sys::fs::status(Path, Status) && llvm::sys::fs::exists(Status))
    Mode = Status.permissions();
  int FD = -1;
  llvm::SmallString<256> TempPath;
  std::string Model = (Path + ".torch-syncfree-%%%%%%").str();
  if (std::error_code EC = llvm::sys::fs::createUniqueFile(Model, FD, TempPath,
                                                           llvm::sys::fs::OF_None, Mode))
    return "cannot create a temporary file beside " + Path.str() + ": " + EC.message();
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS << Contents;
    OS.close();
    if (OS.has_error()) {
      std::string Message = OS.error().message();
      OS.clear_error();
      llvm::sys::fs::remove(TempPath);
      return "cannot write " + Path.str() + ": " + Message;
    }
  }
  llvm::sys::fs::setPermissions(TempPath, static_cast<llvm::sys::fs::perms>(Mode));
  if (std::error_code EC = llvm::sys::fs::rename(TempPath, Path)) {
    llvm::sys::fs::remove(TempPath);
    return "cannot replace " + Path.str() + ": " + EC.message();
  }
  return "";
}

/// A unified diff of two texts with three lines of context. Hand-written: LLVM
/// has no unified-diff printer. The changed window (after the common prefix and
/// suffix) is aligned with a longest-common-subsequence table.
static void printUnifiedDiff(StringRef Path, StringRef Before, StringRef After,
                             llvm::raw_ostream &Out) {
  llvm::SmallVector<StringRef, 0> A, B;
  Before.split(A, '\n');
  After.split(B, '\n');
  size_t Prefix = 0;
  while (Prefix < A.size() && Prefix < B.size() && A[Prefix] == B[Prefix])
    ++Prefix;
  size_t Suffix = 0;
  while (Suffix < A.size() - Prefix && Suffix < B.size() - Prefix &&
         A[A.size() - 1 - Suffix] == B[B.size() - 1 - Suffix])
    ++Suffix;
  size_t N = A.size() - Prefix - Suffix, M = B.size() - Prefix - Suffix;
  // Edit script over the window: ' ' keep, '-' delete, '+' insert.
  std::vector<std::pair<char, StringRef>> Script;
  for (size_t I = 0; I < Prefix; ++I)
    Script.push_back({' ', A[I]});
  if (N * M <= 16u * 1024 * 1024) {
    std::vector<std::vector<uint32_t>> L(N + 1, std::vector<uint32_t>(M + 1, 0));
    for (size_t I = N; I-- > 0;)
      for (size_t J = M; J-- > 0;)
        L[I][J] = A[Prefix + I] == B[Prefix + J] ? L[I + 1][J + 1] + 1
                                                 : std::max(L[I + 1][J], L[I][J + 1]);
    size_t I = 0, J = 0;
    while (I < N || J < M) {
      if (I < N && J < M && A[Prefix + I] == B[Prefix + J])
        Script.push_back({' ', A[Prefix + I]}), ++I, ++J;
      else if (I < N && (J == M || L[I + 1][J] >= L[I][J + 1]))
        Script.push_back({'-', A[Prefix + I]}), ++I;
      else
        Script.push_back({'+', B[Prefix + J]}), ++J;
    }
  } else { // too large to align: one block
    for (size_t I = 0; I < N; ++I)
      Script.push_back({'-', A[Prefix + I]});
    for (size_t J = 0; J < M; ++J)
      Script.push_back({'+', B[Prefix + J]});
  }
  for (size_t I = A.size() - Suffix; I < A.size(); ++I)
    Script.push_back({' ', A[I]});

  Out << "--- " << Path << "\n+++ " << Path << "\n";
  const size_t Context = 3;
  size_t K = 0;
  while (K < Script.size()) {
    if (Script[K].first == ' ') {
      ++K;
      continue;
    }
    // A hunk: from Context lines before this change to Context lines after the
    // last change that is within 2*Context of the previous one.
    size_t Begin = K >= Context ? K - Context : 0, End = K;
    size_t Last = K;
    for (size_t X = K; X < Script.size(); ++X) {
      if (Script[X].first != ' ')
        Last = X;
      else if (X - Last > 2 * Context)
        break;
    }
    End = std::min(Script.size(), Last + Context + 1);
    size_t OldStart = 1, NewStart = 1;
    for (size_t X = 0; X < Begin; ++X) {
      OldStart += Script[X].first != '+';
      NewStart += Script[X].first != '-';
    }
    size_t OldCount = 0, NewCount = 0;
    for (size_t X = Begin; X < End; ++X) {
      OldCount += Script[X].first != '+';
      NewCount += Script[X].first != '-';
    }
    Out << "@@ -" << OldStart << "," << OldCount << " +" << NewStart << "," << NewCount
        << " @@\n";
    for (size_t X = Begin; X < End; ++X)
      Out << Script[X].first << Script[X].second << "\n";
    K = End;
  }
}

FixSummary applyFixes(const std::vector<tidy::ClangTidyError> &Errors,
                      llvm::sys::TimePoint<> ParsedAt, bool DryRun, llvm::raw_ostream &Out,
                      llvm::raw_ostream &Log) {
  FixSummary Summary;
  // Merge per file; a fix whose replacements conflict with ones already taken
  // is dropped as a whole, so no finding is ever half-fixed.
  llvm::StringMap<tooling::Replacements> PerFile;
  std::map<std::string, std::vector<const tidy::ClangTidyError *>> Contributors;
  for (const tidy::ClangTidyError &Error : Errors) {
    const auto &Fix = Error.Message.Fix;
    if (Fix.empty())
      continue;
    llvm::StringMap<tooling::Replacements> Trial;
    for (const auto &Entry : Fix)
      Trial[Entry.first()] = PerFile.lookup(Entry.first());
    bool Conflict = false;
    for (const auto &Entry : Fix)
      for (const tooling::Replacement &R : Entry.second) {
        // The same edit reached from two translation units is applied once.
        bool Duplicate = false;
        for (const tooling::Replacement &Existing : Trial[Entry.first()])
          Duplicate |= Existing == R;
        if (Duplicate)
          continue;
        if (llvm::Error Err = Trial[Entry.first()].add(R)) {
          // Two insertions at one offset (two fixes inserting before the same loop)
          // are not a conflict: the later one goes after the earlier, as clang-tidy
          // and clang-apply-replacements do.
          bool InsertConflict = false;
          llvm::handleAllErrors(std::move(Err), [&](const tooling::ReplacementError &E) {
            InsertConflict = E.get() == tooling::replacement_error::insert_conflict;
          });
          if (!InsertConflict) {
            Conflict = true;
            continue;
          }
          tooling::Replacements &Current = Trial[Entry.first()];
          tooling::Replacement Shifted(R.getFilePath(), Current.getShiftedCodePosition(R.getOffset()),
                                       R.getLength(), R.getReplacementText());
          Current = Current.merge(tooling::Replacements(Shifted));
        }
      }
    if (Conflict) {
      ++Summary.Skipped;
      Log << "torch-syncfree: note: fix for " << Error.Message.FilePath << " ["
          << Error.DiagnosticName << "] conflicts with another fix; not applied\n";
      continue;
    }
    for (auto &Entry : Trial) {
      PerFile[Entry.first()] = std::move(Entry.second);
      Contributors[Entry.first().str()].push_back(&Error);
    }
    ++Summary.Applied;
  }

  for (const auto &Entry : PerFile) {
    StringRef Path = Entry.first();
    unsigned Findings = Contributors[Path.str()].size();
    auto Buffer = llvm::MemoryBuffer::getFile(Path);
    llvm::sys::fs::file_status Status;
    if (!Buffer || llvm::sys::fs::status(Path, Status)) {
      Log << "torch-syncfree: error: cannot read " << Path << " to fix it\n";
      Summary.Applied -= Findings, Summary.Skipped += Findings, Summary.WriteFailed = true;
      continue;
    }
    if (Status.getLastModificationTime() > ParsedAt) {
      Log << "torch-syncfree: warning: " << Path
          << " changed after it was parsed; its fixes were not written\n";
      Summary.Applied -= Findings, Summary.Skipped += Findings;
      continue;
    }
    StringRef Before = (*Buffer)->getBuffer();
    llvm::Expected<std::string> After = tooling::applyAllReplacements(Before, Entry.second);
    if (!After) {
      Log << "torch-syncfree: error: cannot apply fixes to " << Path << ": "
          << llvm::toString(After.takeError()) << "\n";
      Summary.Applied -= Findings, Summary.Skipped += Findings, Summary.WriteFailed = true;
      continue;
    }
    if (*After == Before)
      continue;
    if (DryRun) {
      printUnifiedDiff(Path, Before, *After, Out);
      ++Summary.FilesChanged;
      continue;
    }
    std::string Failure = writeFileAtomically(Path, *After);
    if (!Failure.empty()) {
      Log << "torch-syncfree: error: " << Failure << "\n";
      Summary.Applied -= Findings, Summary.Skipped += Findings, Summary.WriteFailed = true;
      continue;
    }
    ++Summary.FilesChanged;
  }
  return Summary;
}

} // namespace torch_syncfree
