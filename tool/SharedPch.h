// Shared precompiled headers for batch runs. The translation units of a run
// are grouped by their effective compile command (minus the file) and by the
// leading block of #includes of their main file; each group (one unit or
// more) gets one PCH of that block, built once, kept in a cache directory and
// reused by later runs while the headers it read are unchanged (size and
// modification time of every one).
//
// A unit whose block does not qualify (a macro, a #pragma or code before or
// between the includes, a quoted include that is not beside the file) is
// parsed in full. A unit whose analysis with the PCH reports a compile error
// is analysed again in full: correctness first.
#ifndef TORCH_SYNCFREE_SHARED_PCH_H
#define TORCH_SYNCFREE_SHARED_PCH_H

#include "CacheAuth.h"
#include "clang-tidy/ClangTidyDiagnosticConsumer.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/ADT/StringRef.h"
#include <condition_variable>
#include <functional>
#include <optional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace torch_syncfree {

/// The main file's leading block of #include directives, as the text of a
/// header that includes the same files in the same order (quoted includes
/// made absolute); nullopt when there is none or it cannot be shared.
/// QuoteDirs: where a quoted include not beside its includer is looked for
/// (quoteSearchDirs()).
std::optional<std::string> leadingIncludeBlock(llvm::StringRef Text, llvm::StringRef FileDir,
                                               llvm::ArrayRef<std::string> QuoteDirs = {});

/// The directories clang searches for `#include "..."` after the includer's
/// own: -iquote, then -I, then -isystem (a project's own headers passed as
/// system headers, as CMake's SYSTEM include directories do), each group in
/// command-line order, made absolute against the command's directory.
std::vector<std::string> quoteSearchDirs(const clang::tooling::CompileCommand &Command);

/// What a unit's shared PCH is made of: its effective command (file and
/// outputs removed, the .clang-tidy ExtraArgs added) and the block of system
/// #includes it begins with (through its first project header), one line each.
struct PchRequest {
  std::string FlagsIdentity; ///< clang's version, directory, language, command
  std::string Identity;      ///< FlagsIdentity and the block's first line
  std::vector<std::string> Lines;
  clang::tooling::CompileCommand Command;
  std::string Language; ///< -x of the PCH build: c++-header or cuda
};

/// The request for File whose text is Text (the editor's buffer, or the file);
/// nullopt with WhyNot set when the unit cannot share a PCH.
std::optional<PchRequest> pchRequestFor(const clang::tooling::CompilationDatabase &Database,
                                        clang::tidy::ClangTidyOptionsProvider &Options,
                                        const std::string &File, llvm::StringRef Text,
                                        std::string &WhyNot);
/// The PCH of the first Lines lines of R's block: its key (file name in a PCH
/// directory) and the header it is built from. A PCH of a prefix of a unit's
/// block is sound for it: the rest of its includes are parsed as usual.
std::string pchKey(const PchRequest &R, size_t Lines);
std::string pchHeader(const PchRequest &R, size_t Lines);

/// Whether the PCH at Base (Base.pch, its manifest Base.deps) may be loaded:
/// written by this user's tool (MAC) for headers that are unchanged since, and
/// Base.pch is the file the manifest was written for.
/// CheckDigest false: the PCH's digest is not recomputed (its caller checked
/// it before, and the file has not changed since).
enum class PchTrust { Trusted, Missing, Stale, Untrusted };
PchTrust checkPch(llvm::StringRef Base, const CacheAuthenticator &Auth, bool CheckDigest = true);

/// The compile step of a PCH build: clang writes Output (a file the caller
/// created) from Header with Command (the header and "-x <language>" appended).
struct PchCompileResult {
  bool Built = false;
  std::string OutputError;   ///< clang could not write Output (an error without a location)
  bool SawUserHeader = false; ///< a non-system header was read: not shareable
  std::vector<std::string> Dependencies; ///< every file read
  std::vector<std::string> Misses;       ///< header-search lookups that found nothing
  std::string Failure; ///< the isolated compile crashed, hung or gave no result
};
PchCompileResult compilePch(const clang::tooling::CompileCommand &Command, const std::string &Header,
                            const std::string &Output);

/// Runs the compile step elsewhere: in a worker process under --tu-timeout
/// (UnitWorker.h), so that a crash or a hang in the headers is that build's
/// failure. Unset: in this process.
struct PchBuilderProcess {
  std::function<PchCompileResult(const clang::tooling::CompileCommand &, const std::string &Header,
                                 const std::string &Output)>
      Run;
};

/// Builds the PCH of HeaderText (Language: c++-header or cuda) with Command into
/// Directory/Key.{h,pch,deps}, signed with Auth. Pch is empty when it failed;
/// WriteFailure then says why when the directory could not be written, and
/// Failure when the isolated compile crashed or ran out of time.
struct PchBuildResult {
  std::string Pch;
  std::string WriteFailure;
  std::string Failure;
};
PchBuildResult buildPch(const std::string &Directory, const std::string &Key,
                        const std::string &HeaderText, const clang::tooling::CompileCommand &Command,
                        const std::string &Language, const CacheAuthenticator &Auth,
                        const PchBuilderProcess *Isolation = nullptr);

class SharedPchCache {
public:
  /// Directory: where PCHs live (created on demand). Options: the .clang-tidy
  /// options of each file (their ExtraArgs are part of the command).
  /// Auth: the user's key; a cached PCH is used only with a manifest it signed.
  SharedPchCache(std::string Directory, const clang::tooling::CompilationDatabase &Database,
                 clang::tidy::ClangTidyOptionsProvider &Options, CacheAuthenticator Auth);

  /// Groups Files (absolute paths); call once before pchFor.
  void plan(const std::vector<std::string> &Files);

  /// The PCH to analyse File with, or "" (parse in full). A cached PCH was
  /// validated by plan(); otherwise the first caller of a group builds it and
  /// a caller that finds it being built by another thread waits for it.
  std::string pchFor(const std::string &File);

  /// The order to start Files' analyses in (indices into Files): the first
  /// unit of each group whose PCH is to be built, then the rest in order, so
  /// that at -jN the builds run side by side and later units find them done.
  std::vector<size_t> schedule(const std::vector<std::string> &Files) const;

  /// PCHs are compiled in worker processes through Builder (PchBuilderProcess).
  void isolateBuilds(PchBuilderProcess Builder) { Isolation = std::move(Builder); }

  struct Stats {
    unsigned Groups = 0, Built = 0, Reused = 0, Failed = 0, UnitsWithPch = 0;
    unsigned Untrusted = 0; ///< cached entries ignored: not signed by this user's tool, or damaged
    /// The first isolated build that crashed or ran out of time, as its worker said.
    std::string FirstFailure;
    /// Why no PCH is written any more ("" while they are): the first write
    /// that failed (a full disk, a read-only directory).
    std::string WriteFailure;
    /// Units planned without a shared PCH, by why (one reason per unit).
    std::map<std::string, unsigned> NotShared;
  };
  Stats stats() const;

  /// Whether the PCH at Base (Base.pch, with its manifest Base.deps) was
  /// written by this user's tool for headers that have not changed since,
  /// and Base.pch is the file the manifest was written for.
  bool trusted(llvm::StringRef Base);

  /// Whether the PCH at Base (Base.pch, with its manifest Base.deps) was
  /// written by this user's tool for headers that have not changed since.

private:
  struct Group {
    std::string Key;                              ///< hash of command, block, versions
    std::string Header;                           ///< the block, as a header's text
    clang::tooling::CompileCommand Command;       ///< of the first unit, file replaced
    std::string Language;                         ///< -x of the PCH build: c++-header or cuda
    std::vector<std::string> Units;
    enum { Unbuilt, Building, Ready, Failed } State = Unbuilt;
    std::string Pch;
  };
  bool build(Group &G); ///< without the lock
  std::string Directory;
  const clang::tooling::CompilationDatabase &Database;
  clang::tidy::ClangTidyOptionsProvider &Options;
  CacheAuthenticator Auth;
  std::optional<PchBuilderProcess> Isolation;
  mutable std::mutex Mutex;
  std::condition_variable BuildFinished; ///< a group left Building
  std::map<std::string, Group> Groups;         ///< by key
  std::map<std::string, std::string> GroupOf;  ///< file -> key
  Stats Counts;
};

/// The files a shared PCH was built from (its manifest), absolute paths.
std::vector<std::string> pchInputs(llvm::StringRef PchPath);
/// The paths its build's header search looked for and did not find.
std::vector<std::string> pchAbsentInputs(llvm::StringRef PchPath);

/// The default cache directory: <build dir>/.torch-syncfree-cache with -p,
/// else $XDG_CACHE_HOME/torch-syncfree (~/.cache/torch-syncfree).
std::string defaultCacheDirectory(llvm::StringRef BuildPath);

} // namespace torch_syncfree

#endif
