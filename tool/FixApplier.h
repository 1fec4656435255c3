// Applies the fixes of a run to the files on disk: one merged replacement set
// per file, conflicting fixes dropped whole, each file written through a
// temporary file and an atomic rename that keeps its permissions.
#ifndef TORCH_SYNCFREE_FIXAPPLIER_H
#define TORCH_SYNCFREE_FIXAPPLIER_H

#include "FindingRecord.h"
#include "clang-tidy/ClangTidyDiagnosticConsumer.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <optional>
#include <vector>

namespace torch_syncfree {

struct FixSummary {
  unsigned Applied = 0;  ///< findings whose fix landed
  unsigned Skipped = 0;  ///< findings whose fix conflicted or could not be written
  unsigned FilesChanged = 0;
  bool WriteFailed = false;
  bool Stale = false;     ///< a file changed after it was parsed
};

/// Applies every finding's fix. A file is written only when its bytes are
/// still those the analysis read (ReadContents), and only atomically; others
/// are reported on \p Log. With \p DryRun, prints a unified diff instead.
/// \p FormatStyle: as clang-tidy's --format-style ("none", "file", "llvm",
/// "google", a `{key: value}` style): the code around each fix is cleaned up
/// and the changed lines formatted with clang-format's library; a style that
/// disables formatting ("none", "file" where no .clang-format is found, a
/// .clang-format with `DisableFormat: true`) leaves the fixes as they are. A
/// style that cannot be read fails the file's fixes, unless \p DefaultStyle
/// (the style is the default, not the user's or the .clang-tidy's choice):
/// then the fixes are written unformatted, with a warning. \p DiffRoot:
/// the directory the diff's `a/` `b/` paths are relative to (the repository root).
/// \p ProjectRoots: the directories files may be written under (absolute):
/// those the user's run names (the work trees around the working directory,
/// -p and the sources on the command line), never a header's own checkout:
/// a repository whose -I names a sibling checkout must not get it rewritten.
/// Empty: the work tree around each file.
FixSummary applyFixes(const std::vector<FindingRecord> &Errors, bool DryRun, llvm::raw_ostream &Out,
                      llvm::raw_ostream &Log, llvm::StringRef FormatStyle = "none",
                      llvm::StringRef DiffRoot = "", llvm::ArrayRef<std::string> ProjectRoots = {},
                      bool DefaultStyle = false);

/// Merges insertions that several findings make at one place of a file into
/// the first finding's (clang-apply-replacements refuses two insertions at one
/// offset); the text is what --fix would insert there.
void mergeCoincidentInsertions(std::vector<FindingRecord> &Errors);

/// Whether every replacement of the finding's fix is on the finding's own line
/// (in its file, with no line break in the replaced or inserted text).
bool fixStaysOnLine(const clang::tidy::ClangTidyError &Error, llvm::StringRef FileText);

/// Waits at \p Point when TORCH_SYNCFREE_TESTING_PAUSE=<point>:<go-file> names it, until the
/// test creates <go-file> (tests only).
void pauseForTesting(llvm::StringRef Point);

/// Replaces \p Path (the target, when it is a symbolic link) by a temporary
/// file renamed over it; the file keeps its permissions. Refuses hard-linked
/// and read-only files. With \p ExpectedHash, the old content is checked once
/// more just before the rename. Returns an error message or "".
std::string writeFileAtomically(llvm::StringRef Path, llvm::StringRef Contents,
                                std::optional<uint64_t> ExpectedHash = std::nullopt);

} // namespace torch_syncfree

#endif
