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

/// A plain unified diff of two texts (whole-file hunks are enough for review).
static void printUnifiedDiff(StringRef Path, StringRef Before, StringRef After,
                             llvm::raw_ostream &Out) {
  llvm::SmallVector<StringRef, 0> A, B;
  Before.split(A, '\n');
  After.split(B, '\n');
  // Common prefix and suffix, then one hunk with three lines of context.
  size_t Prefix = 0;
  while (Prefix < A.size() && Prefix < B.size() && A[Prefix] == B[Prefix])
    ++Prefix;
  size_t Suffix = 0;
  while (Suffix < A.size() - Prefix && Suffix < B.size() - Prefix &&
         A[A.size() - 1 - Suffix] == B[B.size() - 1 - Suffix])
    ++Suffix;
  size_t Start = Prefix >= 3 ? Prefix - 3 : 0;
  size_t EndA = std::min(A.size(), A.size() - Suffix + 3);
  size_t EndB = std::min(B.size(), B.size() - Suffix + 3);
  Out << "--- a/" << Path << "\n+++ b/" << Path << "\n";
  Out << "@@ -" << Start + 1 << "," << EndA - Start << " +" << Start + 1 << ","
      << EndB - Start << " @@\n";
  for (size_t I = Start; I < Prefix; ++I)
    Out << " " << A[I] << "\n";
  for (size_t I = Prefix; I < A.size() - Suffix; ++I)
    Out << "-" << A[I] << "\n";
  for (size_t I = Prefix; I < B.size() - Suffix; ++I)
    Out << "+" << B[I] << "\n";
  for (size_t I = A.size() - Suffix; I < EndA; ++I)
    Out << " " << A[I] << "\n";
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
          llvm::consumeError(std::move(Err));
          Conflict = true;
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
