// Runs the checks over translation units: clang-tidy's runClangTidy with two
// additions it has no hook for.
//  * The checks traverse only user code (ASTContext::setTraversalScope over
//    the top-level declarations outside system headers, as clangd does for its
//    clang-tidy checks): nothing from LibTorch is matched or put in the parent
//    map, and with a precompiled preamble nothing of it is deserialized.
//  * A PreambleSlot keeps a clang::PrecompiledPreamble of the file's #include
//    block between runs (the language server's reuse across edits).
#ifndef TORCH_SYNCFREE_CHECK_RUNNER_H
#define TORCH_SYNCFREE_CHECK_RUNNER_H

#include "FindingRecord.h"
#include "clang-tidy/ClangTidyDiagnosticConsumer.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Support/VirtualFileSystem.h"
#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace torch_syncfree {

/// The precompiled #include block of one file, reused while that block, the
/// flags and the headers it read are unchanged. Not thread-safe: one run at a time.
class PreambleSlot {
public:
  /// StorageDir: where the PCH file lives (empty: the system temp directory).
  explicit PreambleSlot(std::string StorageDir = "");
  ~PreambleSlot();
  PreambleSlot(const PreambleSlot &) = delete;
  PreambleSlot &operator=(const PreambleSlot &) = delete;

  unsigned builds() const { return Builds; }
  /// Whether a preamble is held (the last build succeeded).
  bool hasPreamble() const;
  unsigned reuses() const { return Reuses; }

  struct State;

private:
  friend class PreambleAwareFactory;
  std::unique_ptr<State> Impl;
  std::string StorageDir;
  unsigned Builds = 0, Reuses = 0;
};

/// How runChecks analyses one unit or document (the batch run's own options,
/// for every unit, are RunOptions: batch/RunOptions.h).
struct UnitRunOptions {
  bool EnableCheckProfile = false;
  /// One file only; null: parse every file in full.
  PreambleSlot *Preamble = nullptr;
  /// A PCH of the files' leading #include block (SharedPch.h); "" for none.
  std::string SharedPch;
  /// Receives every file the analysis read (absolute paths), when set.
  std::vector<std::string> *ReadFiles = nullptr;
  /// Template instantiations that LibTorch requests for itself are not
  /// performed (the checks never look into them); off: clang's plain parse.
  bool SkipSystemInstantiations = true;
  /// Set when the parse failed with the shortcuts above (SharedPch, Preamble,
  /// SkipSystemInstantiations) and succeeded without them.
  bool *ParsedPlainly = nullptr;
  /// Whether that plain parse is tried when an error lies in the main file
  /// too (the editor: a file mid-edit; such an error is the user's).
  bool ConfirmErrorsInMainFile = true;
  /// Set by another thread to stop the analysis (the editor: a newer edit).
  /// The parse stops after the top-level declaration it is in and nothing is
  /// matched; the results are then meaningless (runChecks returns none).
  const std::atomic<bool> *Cancelled = nullptr;
  /// The directories #embed may read under (absolute; EmbedPolicy): those the
  /// user's run names, never the repository's flags. Empty: the work tree
  /// around the main file (workTreeRoot).
  std::vector<std::string> EmbedRoots;
  /// With Preamble: only (re)build the preamble, analyse nothing (the editor
  /// builds a new one in the background while it answers from the old one).
  bool PreambleOnly = false;
};

/// The nearest directory at or above Dir holding a .git entry (a work tree's
/// root), or Dir itself when there is none.
std::string workTreeRoot(llvm::StringRef Dir);

/// Whether Path has a .git, .hg or .svn component (version-control metadata:
/// a CI checkout's .git/config holds its token).
bool inVersionControlMetadata(llvm::StringRef Path);

/// A clang error, not a check's finding.
bool isCompileError(const clang::tidy::ClangTidyError &E);
/// A clang error (not a check's finding) among the results: the TU does not compile.
bool hasCompileError(llvm::ArrayRef<FindingRecord> Errors);

/// Creates, on the calling thread, the singletons clang's libraries create
/// lazily on first use and then share between threads (the matchers' shared
/// "true" matcher). Call it before any thread runs checks: their creation then
/// happens before every use, for ThreadSanitizer too, which cannot see the
/// guard inside the uninstrumented libclang-cpp.
void prepareClangForThreads();

std::vector<FindingRecord> runChecks(clang::tidy::ClangTidyContext &Context,
                                     const clang::tooling::CompilationDatabase &Compilations,
                                     llvm::ArrayRef<std::string> Files,
                                     const llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> &FileSystem,
                                     const UnitRunOptions &Options);

} // namespace torch_syncfree

#endif
