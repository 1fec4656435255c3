#include "FixApplier.h"
#include "clang/Format/Format.h"

#include "CheckRunner.h"
#include "InputFiles.h"
#include "SafeFileSystem.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include <map>
#include <optional>
#include <thread>

using namespace clang;

namespace torch_syncfree {

void pauseForTesting(StringRef Point) {
  // Tests act at a chosen point of a run through this pause
  // (TORCH_SYNCFREE_TESTING_PAUSE=<point>:<go-file>): the run says it has
  // paused, then waits until the test creates <go-file> (or stops the run).
  // No clock decides anything, so a slow machine cannot make a test fail.
  const char *Spec = getenv("TORCH_SYNCFREE_TESTING_PAUSE");
  if (!Spec)
    return;
  auto [Where, GoFile] = StringRef(Spec).split(':');
  if (Where != Point || GoFile.empty())
    return;
  // The test waits for this line before it acts.
  llvm::errs() << "torch-syncfree: testing: paused at " << Point << "\n";
  llvm::errs().flush();
  while (!llvm::sys::fs::exists(GoFile))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

/// Where a rewrite of Path lands: the target of a symbolic link (the link
/// itself stays), or an error for files that must not be replaced by a new
/// inode (hard links would be split) or that the user made read-only.
static std::string writableTarget(StringRef Path, SmallVectorImpl<char> &Target) {
  if (!llvm::sys::fs::exists(Path)) {
    Target.assign(Path.begin(), Path.end());
    return "";
  }
  if (std::error_code EC = llvm::sys::fs::real_path(Path, Target, /*expand_tilde=*/false))
    return "cannot resolve " + Path.str() + ": " + EC.message();
  llvm::sys::fs::file_status Status;
  if (std::error_code EC = llvm::sys::fs::status(Target, Status))
    return "cannot stat " + Path.str() + ": " + EC.message();
  if (Status.type() != llvm::sys::fs::file_type::regular_file)
    return Path.str() + " is not a regular file; not rewritten";
  if (Status.getLinkCount() > 1)
    return Path.str() + " has " + std::to_string(Status.getLinkCount()) +
           " hard links; a rewrite would split them, so it is not rewritten";
  if (!(Status.permissions() & llvm::sys::fs::all_write) ||
      llvm::sys::fs::access(Target, llvm::sys::fs::AccessMode::Write))
    return Path.str() + " is read-only; not rewritten";
  return "";
}

/// Temporary files of earlier runs beside Target that a SIGKILL left behind
/// (no handler runs then): removed once they are ten minutes old, so a run
/// in progress elsewhere keeps its own.
static void removeStaleTemporaries(StringRef Target) {
  StringRef Dir = llvm::sys::path::parent_path(Target);
  std::string Prefix = (llvm::sys::path::filename(Target) + ".torch-syncfree-").str();
  std::error_code EC;
  auto Now = std::chrono::system_clock::now();
  for (llvm::sys::fs::directory_iterator It(Dir.empty() ? "." : Dir, EC), End; It != End && !EC;
       It.increment(EC)) {
    StringRef Name = llvm::sys::path::filename(It->path());
    if (!Name.starts_with(Prefix) || Name.size() != Prefix.size() + 6)
      continue;
    llvm::sys::fs::file_status Status;
    if (llvm::sys::fs::status(It->path(), Status) ||
        Status.type() != llvm::sys::fs::file_type::regular_file)
      continue;
    if (Now - Status.getLastModificationTime() > std::chrono::minutes(10))
      llvm::sys::fs::remove(It->path());
  }
}

std::string writeFileAtomically(StringRef Path, StringRef Contents,
                                std::optional<uint64_t> ExpectedHash) {
  // Hand-written: llvm::writeToOutput renames a temporary file too, but the
  // temporary gets default permissions, and a rewritten source must keep its
  // own; it also cannot re-check the old content just before the rename.
  SmallString<256> Target;
  if (std::string Refused = writableTarget(Path, Target); !Refused.empty())
    return Refused;
  llvm::sys::fs::file_status Status;
  unsigned Mode = 0644;
  if (!llvm::sys::fs::status(Target, Status) && llvm::sys::fs::exists(Status))
    Mode = Status.permissions();
  removeStaleTemporaries(Target);
  int FD = -1;
  llvm::SmallString<256> TempPath;
  std::string Model = (Target + ".torch-syncfree-%%%%%%").str();
  if (std::error_code EC = llvm::sys::fs::createUniqueFile(Model, FD, TempPath,
                                                           llvm::sys::fs::OF_None, Mode))
    return "cannot create a temporary file beside " + Path.str() + ": " + EC.message();
  // Removed if a signal ends the process before the rename.
  llvm::sys::RemoveFileOnSignal(TempPath);
  auto Discard = [&](std::string Message) {
    llvm::sys::fs::remove(TempPath);
    llvm::sys::DontRemoveFileOnSignal(TempPath);
    return Message;
  };
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS << Contents;
    OS.close();
    if (OS.has_error()) {
      std::string Message = OS.error().message();
      OS.clear_error();
      return Discard("cannot write " + Path.str() + ": " + Message);
    }
  }
  llvm::sys::fs::setPermissions(TempPath, static_cast<llvm::sys::fs::perms>(Mode));
  pauseForTesting("before-rename");
  // The last look before the rename: an edit made since the fixes were
  // computed must not be overwritten.
  if (ExpectedHash) {
    auto Now = llvm::MemoryBuffer::getFile(Target, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
    if (!Now || ReadContents::hash((*Now)->getBuffer()) != *ExpectedHash)
      return Discard(Path.str() + " changed while it was being fixed; not rewritten");
  }
  if (std::error_code EC = llvm::sys::fs::rename(TempPath, Target))
    return Discard("cannot replace " + Path.str() + ": " + EC.message());
  llvm::sys::DontRemoveFileOnSignal(TempPath);
  return "";
}

/// Inserted text follows the file's line endings (CRLF files get CRLF lines).
static std::string matchLineEndings(StringRef Text, StringRef FileContent) {
  size_t FirstNewline = FileContent.find('\n');
  bool CRLF = FirstNewline != StringRef::npos && FirstNewline > 0 &&
              FileContent[FirstNewline - 1] == '\r';
  bool CROnly = FirstNewline == StringRef::npos && FileContent.contains('\r');
  if (!CRLF && !CROnly)
    return Text.str();
  std::string Out;
  for (size_t I = 0; I < Text.size(); ++I) {
    if (Text[I] == '\n' && (I == 0 || Text[I - 1] != '\r'))
      Out += CRLF ? "\r\n" : "\r";
    else
      Out += Text[I];
  }
  return Out;
}

/// A unified diff of two texts with three lines of context. Hand-written: LLVM
/// has no unified-diff printer. The changed window (after the common prefix and
/// suffix) is aligned with a longest-common-subsequence table.
static void printUnifiedDiff(StringRef Path, StringRef Before, StringRef After,
                             llvm::raw_ostream &Out, StringRef DiffRoot) {
  // Lines without their '\n'; a last line with no newline keeps a '\n'
  // sentinel so that it differs from the same text with one, and is printed
  // with diff's "\\ No newline at end of file" marker (patch needs it; a
  // CR-only file is one such line).
  std::vector<std::string> AStore, BStore;
  auto SplitLines = [](StringRef Text, std::vector<std::string> &Lines) {
    while (!Text.empty()) {
      auto [Line, Rest] = Text.split('\n');
      bool HasNewline = Line.size() < Text.size();
      Lines.push_back(Line.str() + (HasNewline ? "" : "\n"));
      Text = Rest;
    }
  };
  SplitLines(Before, AStore);
  SplitLines(After, BStore);
  std::vector<StringRef> A(AStore.begin(), AStore.end()), B(BStore.begin(), BStore.end());
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

  // Paths relative to the repository root with git's a/ and b/ prefixes, so
  // that `git apply` (and `patch -p1`) take the diff from there; a file
  // outside the root keeps its absolute path.
  StringRef Relative = Path;
  if (!DiffRoot.empty() && Relative.consume_front(DiffRoot.rtrim('/')) && Relative.consume_front("/"))
    Out << "--- a/" << Relative << "\n+++ b/" << Relative << "\n";
  else
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
    for (size_t X = Begin; X < End; ++X) {
      StringRef Line = Script[X].second;
      if (Line.consume_back("\n"))
        Out << Script[X].first << Line << "\n\\ No newline at end of file\n";
      else
        Out << Script[X].first << Line << "\n";
    }
    K = End;
  }
}

bool fixStaysOnLine(const tidy::ClangTidyError &Error, StringRef Text) {
  if (Error.Message.Fix.empty())
    return true;
  size_t Begin = Error.Message.FileOffset, End = Error.Message.FileOffset;
  for (const auto &Entry : Error.Message.Fix) {
    if (Entry.first() != Error.Message.FilePath)
      return false;
    for (const tooling::Replacement &R : Entry.second) {
      if (R.getReplacementText().contains('\n'))
        return false;
      Begin = std::min<size_t>(Begin, R.getOffset());
      End = std::max<size_t>(End, R.getOffset() + R.getLength());
    }
  }
  if (End > Text.size())
    return false;
  return !Text.slice(Begin, End).contains('\n');
}

void mergeCoincidentInsertions(std::vector<FindingRecord> &Errors) {
  // The first finding with an insertion at (file, offset) takes the text of
  // the later ones, in the order --fix applies them (a later insertion goes
  // after an earlier one), so the export and --fix write the same file.
  std::map<std::pair<std::string, unsigned>, std::pair<size_t, std::string>> First;
  for (size_t I = 0; I < Errors.size(); ++I)
    for (auto &Entry : Errors[I].Message.Fix) {
      tooling::Replacements Kept;
      for (const tooling::Replacement &R : Entry.second) {
        if (R.getLength() != 0) {
          llvm::consumeError(Kept.add(R));
          continue;
        }
        auto Key = std::make_pair(Entry.first().str(), R.getOffset());
        auto [It, Inserted] = First.try_emplace(Key, I, "");
        if (!Inserted && It->second.first != I) {
          It->second.second += R.getReplacementText().str();
          continue; // moved into the first finding's insertion
        }
        llvm::consumeError(Kept.add(R));
      }
      Entry.second = std::move(Kept);
    }
  for (auto &[Key, Owner] : First) {
    if (Owner.second.empty())
      continue;
    tooling::Replacements &Fix = Errors[Owner.first].Message.Fix[Key.first];
    tooling::Replacements Updated;
    for (const tooling::Replacement &R : Fix) {
      if (R.getLength() == 0 && R.getOffset() == Key.second)
        llvm::consumeError(Updated.add(tooling::Replacement(
            R.getFilePath(), R.getOffset(), 0, (R.getReplacementText() + Owner.second).str())));
      else
        llvm::consumeError(Updated.add(R));
    }
    Fix = std::move(Updated);
  }
}

/// Why --fix must not write Path, or "". Only regular files inside the
/// project are written: under one of ProjectRoots (real paths compared), or,
/// when there are none, under the nearest directory above Path (as named,
/// symlinks not followed) that holds a .git, else Path's own directory. A
/// file that resolves outside (a committed symlink to a file elsewhere) is
/// refused; one that resolves inside is fixed at its target.
static std::string outsideProjectReason(StringRef Path, llvm::ArrayRef<std::string> ProjectRoots) {
  std::vector<std::string> Roots(ProjectRoots.begin(), ProjectRoots.end());
  if (Roots.empty())
    Roots.push_back(workTreeRoot(llvm::sys::path::parent_path(Path)));
  SmallString<256> RealPath;
  if (llvm::sys::fs::real_path(Path, RealPath))
    return "cannot resolve " + Path.str();
  llvm::sys::fs::file_status Status;
  if (llvm::sys::fs::status(RealPath, Status) || !llvm::sys::fs::is_regular_file(Status))
    return Path.str() + " is not a regular file";
  for (const std::string &Root : Roots) {
    SmallString<256> RealRoot;
    if (llvm::sys::fs::real_path(Root, RealRoot))
      continue;
    StringRef Inside = RealPath;
    if (Inside.consume_front(RealRoot) && Inside.starts_with("/"))
      return "";
  }
  return Path.str() + " resolves to " + RealPath.str().str() + ", outside the project " +
         llvm::join(Roots, ", ");
}

FixSummary applyFixes(const std::vector<FindingRecord> &Errors, bool DryRun, llvm::raw_ostream &Out,
                      llvm::raw_ostream &Log, StringRef FormatStyle, StringRef DiffRoot,
                      llvm::ArrayRef<std::string> ProjectRoots, bool DefaultStyle) {
  FixSummary Summary;
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> ConfigFiles =
      makeConfigFileSystem(llvm::vfs::getRealFileSystem());
  // Merge per file; a fix whose replacements conflict with ones already taken
  // is dropped as a whole, so no finding is ever half-fixed.
  llvm::StringMap<tooling::Replacements> PerFile;
  std::map<std::string, std::vector<const FindingRecord *>> Contributors;
  for (const FindingRecord &Error : Errors) {
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
      Log << "torch-syncfree: note: fix for " << printable(Error.Message.FilePath) << " ["
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
    if (std::string Reason = outsideProjectReason(Path, ProjectRoots); !Reason.empty()) {
      Log << "torch-syncfree: error: " << printable(Reason) << "; its fixes were not written\n";
      Summary.Applied -= Findings, Summary.Skipped += Findings, Summary.WriteFailed = true;
      continue;
    }
    auto Buffer = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!Buffer) {
      Log << "torch-syncfree: error: cannot read " << printable(Path) << " to fix it\n";
      Summary.Applied -= Findings, Summary.Skipped += Findings, Summary.WriteFailed = true;
      continue;
    }
    // Stale by content, not by time: `cp -p`, `rsync -t` and `tar` keep the
    // modification time of an edited file.
    StringRef Before = (*Buffer)->getBuffer();
    std::optional<uint64_t> Parsed = ReadContents::lookup(Path);
    if (!Parsed || *Parsed != ReadContents::hash(Before)) {
      Log << "torch-syncfree: warning: " << printable(Path)
          << " changed after it was parsed; its fixes were not written\n";
      Summary.Applied -= Findings, Summary.Skipped += Findings, Summary.Stale = true;
      continue;
    }
    tooling::Replacements Adapted;
    for (const tooling::Replacement &R : Entry.second)
      llvm::consumeError(Adapted.add(tooling::Replacement(
          R.getFilePath(), R.getOffset(), R.getLength(),
          matchLineEndings(R.getReplacementText(), Before))));
    // As clang-tidy's --format-style: clean up around the edits, then format
    // the lines they changed (and only those).
    std::optional<format::FormatStyle> Style;
    if (!FormatStyle.empty() && FormatStyle != "none") {
      // .clang-format files are read through the bounded reader (a deeply
      // nested one overflowed the YAML parser's stack), and so is an inline
      // style, which a repository's .clang-tidy can set (FormatStyle: '{...}').
      // clang-format's parser quotes the line of a style it refuses: its
      // diagnostics are dropped (a repository's text is never quoted).
      std::string InlineProblem =
          FormatStyle.trim().starts_with("{") ? checkYamlNesting(FormatStyle) : std::string();
      llvm::Expected<format::FormatStyle> Found =
          !InlineProblem.empty()
              ? llvm::Expected<format::FormatStyle>(llvm::createStringError(
                    std::make_error_code(std::errc::invalid_argument), "the inline style: " + InlineProblem))
              : format::getStyle(FormatStyle, Path, "none", Before, ConfigFiles.get(),
                                 /*AllowUnknownOptions=*/false, [](const llvm::SMDiagnostic &, void *) {});
      if (Found) {
        Style = std::move(*Found);
      } else if (DefaultStyle) {
        // Nobody asked for this style: a .clang-format that cannot be used
        // leaves the fixes unformatted, it does not fail them.
        Log << "torch-syncfree: warning: " << printable(Path)
            << ": fixes not formatted: " << printable(llvm::toString(Found.takeError()))
            << " (--format-style=none turns formatting off)\n";
      } else {
        Log << "torch-syncfree: error: --format-style: " << printable(llvm::toString(Found.takeError()))
            << "\n";
        Summary.Applied -= Findings, Summary.Skipped += Findings, Summary.WriteFailed = true;
        continue;
      }
    }
    // A style that formats nothing (`file` where no .clang-format is found,
    // DisableFormat) leaves the fixes as the checks spell them.
    if (Style && !Style->DisableFormat) {
      llvm::Expected<tooling::Replacements> Cleaned = format::cleanupAroundReplacements(Before, Adapted, *Style);
      llvm::Expected<tooling::Replacements> Formatted =
          Cleaned ? format::formatReplacements(Before, *Cleaned, *Style) : Cleaned.takeError();
      if (!Formatted) {
        Log << "torch-syncfree: warning: " << printable(Path) << ": fixes not formatted: "
            << llvm::toString(Formatted.takeError()) << "\n";
      } else {
        Adapted = std::move(*Formatted);
      }
    }
    llvm::Expected<std::string> After = tooling::applyAllReplacements(Before, Adapted);
    if (!After) {
      Log << "torch-syncfree: error: cannot apply fixes to " << printable(Path) << ": "
          << llvm::toString(After.takeError()) << "\n";
      Summary.Applied -= Findings, Summary.Skipped += Findings, Summary.WriteFailed = true;
      continue;
    }
    if (*After == Before)
      continue;
    if (DryRun) {
      printUnifiedDiff(Path, Before, *After, Out, DiffRoot);
      ++Summary.FilesChanged;
      continue;
    }
    std::string Failure = writeFileAtomically(Path, *After, *Parsed);
    if (!Failure.empty()) {
      Log << "torch-syncfree: error: " << printable(Failure) << "\n";
      Summary.Applied -= Findings, Summary.Skipped += Findings, Summary.WriteFailed = true;
      continue;
    }
    ++Summary.FilesChanged;
  }
  return Summary;
}

} // namespace torch_syncfree
