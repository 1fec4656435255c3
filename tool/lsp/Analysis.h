// The language server's analysis layer: one document's text in, its findings
// and problems out, with the preamble chosen to answer fast (clangd's
// ParsedAST/Preamble layer). Knows nothing of the protocol or of threads but
// the one that builds preambles in the background.
//
// Preambles, in the order they are tried:
//  1. A shared PCH of the file's include block (SharedPch.h: the system headers
//     it reaches first, through its own project header), the same PCH the batch
//     builds, in the build directory's cache and signed with the user's key, so
//     a file whose block a batch run (or another open file) has cached is
//     analysed at once. A PCH of a prefix of the block is exact too (the rest of
//     the includes are parsed), so the batch's group PCH serves. Shared by every
//     open file with the same flags and block.
//  2. A document preamble (PreambleSlot: clang's PrecompiledPreamble of the
//     file's own #include region), for files whose block cannot be shared
//     (a macro before the includes, ...).
//  3. While the right one is being built in the background: the shared PCH the
//     document used last, with the document's own text parsed after it ("the
//     old preamble plus a patch": its #includes, #defines and comments are all
//     processed; the headers the PCH already holds are skipped by their
//     guards). Such a result is provisional: the document is analysed again
//     when the new preamble is ready, and a provisional result that does not
//     compile is not shown.
#ifndef TORCH_SYNCFREE_LSP_ANALYSIS_H
#define TORCH_SYNCFREE_LSP_ANALYSIS_H

#include "CacheAuth.h"
#include "CheckRunner.h"
#include "CompileCommandSanitizer.h"
#include "FindingRecord.h"
#include "SharedPch.h"
#include "clang-tidy/ClangTidyOptions.h"
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace torch_syncfree {
namespace lsp {

/// compile_commands.json per directory: loaded once, reloaded when the file
/// changes (size or modification time), never re-read otherwise.
class CompileDatabases {
public:
  /// FixedDirectory: --compile-commands-dir ("" to search beside each file).
  explicit CompileDatabases(std::string FixedDirectory) : FixedDirectory(std::move(FixedDirectory)) {}
  struct Entry {
    std::shared_ptr<const SanitizedDatabase> Database; ///< null: none found (Error says why)
    std::string Directory;                             ///< where compile_commands.json is
    std::string Error;
  };
  Entry forFile(llvm::StringRef Path);
  unsigned loads() const { return Loads; }

private:
  struct Loaded {
    std::shared_ptr<const SanitizedDatabase> Database;
    std::string Error;
    uint64_t Size = 0;
    int64_t Time = 0;
  };
  std::string FixedDirectory;
  std::mutex Mutex;
  std::map<std::string, std::string> DirectoryOf; ///< source directory -> database directory
  std::map<std::string, Loaded> ByDirectory;
  unsigned Loads = 0;
};

/// The server's shared PCHs and the one thread that builds preambles.
class PreambleStore {
public:
  /// PrivateDirectory: this server's own directory, for PCHs of build
  /// directories whose cache cannot be used (no key, a link, ...).
  /// Isolation: where shared PCHs are compiled (none: in this process).
  PreambleStore(std::string PrivateDirectory, std::optional<PchBuilderProcess> Isolation);
  ~PreambleStore();

  /// The PCH for R: of its whole block, else of the longest prefix of it that
  /// is cached and trusted; "" when none is. Exact reports which.
  std::string ready(const PchRequest &R, llvm::StringRef BuildDirectory, bool &Exact);
  /// The PCH of R's whole block, built now (or by the build in progress);
  /// "" when it does not build.
  std::string buildNow(const PchRequest &R, llvm::StringRef BuildDirectory);
  /// Builds R's whole block in the background, once per key; Done runs on the
  /// builder thread when it has (whether it built or not).
  void buildLater(const PchRequest &R, llvm::StringRef BuildDirectory, std::function<void()> Done);
  /// Runs Job on the builder thread (document preambles).
  void runLater(std::function<void()> Job);
  /// Whether the PCH of R's whole block was attempted and did not build.
  bool failed(const PchRequest &R, llvm::StringRef BuildDirectory);

  /// The private directory for document preambles ("" when none could be made).
  const std::string &privateDirectory() const { return PrivateDir; }

private:
  std::optional<PchBuilderProcess> PchBuilder;
  struct Location {
    std::string Directory;                 ///< where the PCHs are
    std::optional<CacheAuthenticator> Auth; ///< none: this server's own, unsigned
  };
  Location locationFor(llvm::StringRef BuildDirectory);
  bool usable(const std::string &Base, const Location &Where);
  struct Build {
    bool Done = false;
    std::string Pch;
    std::vector<std::function<void()>> Waiters;
  };
  std::shared_ptr<Build> startBuild(const PchRequest &R, const Location &Where, bool &Started);
  void runBuild(std::shared_ptr<Build> B, PchRequest R, Location Where);
  void builderLoop();

  std::string PrivateDir;
  std::mutex Mutex;
  std::condition_variable Changed;
  std::map<std::string, Location> Locations;        ///< by build directory
  std::map<std::string, std::shared_ptr<Build>> Builds; ///< by PCH path (base)
  std::map<std::string, std::string> Verified;      ///< PCH base -> "size mtime" when its digest was checked
  std::deque<std::function<void()>> Jobs;
  bool Stopping = false;
  std::thread Builder;
};

/// What the analysis of one document keeps between its runs. Owned by the
/// document's worker; the builder thread hands a new preamble over through
/// the mutex.
struct DocumentState {
  std::mutex Mutex;
  std::string LastPch;         ///< the shared PCH used last (the patch's base)
  std::string LastPchIdentity; ///< the flags it is for
  std::shared_ptr<PreambleSlot> Slot;
  std::string SlotText;        ///< the #include region Slot was built for
  std::string SlotFailedText;  ///< a region whose preamble did not build: not patched again
  bool SlotBuilding = false;
};

struct Problem {
  size_t Offset = 0; ///< in the document's text
  int Severity = 1;  ///< 1 error, 2 warning
  std::string Code, Message;
};

struct AnalysisResult {
  std::vector<FindingRecord> Findings; ///< the document's own, paths absolute
  std::vector<Problem> Problems;       ///< no flags, cannot analyse, does not compile
  bool Cancelled = false;
  /// From the old preamble plus the edit: analysed again when the new one is built.
  bool Provisional = false;
  /// A provisional result that does not compile: not to be shown.
  bool Discard = false;
  std::string How; ///< the preamble used, for the log
};

struct AnalysisInputs {
  std::string Path, Text;
  /// The checks' options (.clang-tidy files, the command line's).
  std::function<std::unique_ptr<clang::tidy::ClangTidyOptionsProvider>()> Options;
  const std::atomic<bool> *Cancelled = nullptr;
  /// Called on the builder thread when a preamble this result waits for is ready.
  std::function<void()> Reanalyse;
  /// --summaries: joins the unit's findings with a batch run's records of
  /// the other units (calls into other files, devices across files,
  /// `uncalled`); an error message when it cannot. Unset: none.
  std::function<std::string(llvm::StringRef File, std::vector<FindingRecord> &Findings)> JoinSummaries;
};

/// State outlives the call: a background build holds it until it is done.
AnalysisResult analyseDocument(const AnalysisInputs &In, const std::shared_ptr<DocumentState> &State,
                               CompileDatabases &Databases, PreambleStore &Store);

} // namespace lsp
} // namespace torch_syncfree

#endif
