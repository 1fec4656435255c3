// The results cache (--cache-dir): a translation unit whose inputs are
// unchanged gets its previous findings and fixes without being parsed.
// Inputs: the tool binary (size and mtime), clang's version, the effective
// compile command, the check options, the line filter, and the content hash
// of every file the analysis read (main file, headers, the shared PCH's
// headers). One JSON file per unit, written to a temporary file and renamed.
#ifndef TORCH_SYNCFREE_RESULTS_CACHE_H
#define TORCH_SYNCFREE_RESULTS_CACHE_H

#include "CacheAuth.h"
#include "FindingRecord.h"
#include "clang-tidy/ClangTidyDiagnosticConsumer.h"
#include "llvm/ADT/StringMap.h"
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace torch_syncfree {

class ResultsCache {
public:
  /// Auth: entries are read only when signed with the user's key (CacheAuth.h).
  ResultsCache(std::string Directory, CacheAuthenticator Auth)
      : Directory(std::move(Directory)), Auth(Auth) {}

  /// The identity of a unit's analysis, before its dependencies are known.
  static std::string key(llvm::StringRef File, llvm::ArrayRef<std::string> Command,
                         llvm::StringRef Directory, llvm::StringRef OptionsText,
                         llvm::StringRef LineFilter);

  /// The cached results of Key when every file it read still has the same
  /// content and every path its header search missed is still absent.
  std::optional<std::vector<FindingRecord>> lookup(llvm::StringRef Key);

  /// Stores Errors with the files they were computed from and the lookups
  /// that found nothing (absolute paths).
  void store(llvm::StringRef Key, const std::vector<FindingRecord> &Errors,
             const std::vector<std::string> &ReadFiles,
             const std::vector<std::string> &AbsentFiles);

  unsigned hits() const { return Hits; }
  unsigned misses() const { return Misses; }
  /// Entries ignored: not signed by this user's tool, no inputs, or a finding
  /// outside the files the entry names.
  unsigned untrusted() const { return Untrusted; }
  /// Why entries stopped being written ("" while they are): the first write
  /// that failed (a full disk, a read-only directory) turns storing off.
  std::string writeFailure() const;

private:
  std::optional<uint64_t> contentHash(const std::string &Path); ///< memoised per run
  std::string Directory;
  CacheAuthenticator Auth;
  mutable std::mutex Mutex;
  llvm::StringMap<std::optional<uint64_t>> Hashes;
  unsigned Hits = 0, Misses = 0, Untrusted = 0;
  std::string WriteFailure;
};

} // namespace torch_syncfree

#endif
