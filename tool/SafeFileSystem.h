// The file system the analyses read through. It refuses anything that is not
// a regular file (a source that includes /dev/stdin, a FIFO or a device would
// otherwise read the language server's input or block forever) and remembers
// a hash of the bytes of every file the parser read, so that fixes are only
// ever applied to the exact content they were computed from.
#ifndef TORCH_SYNCFREE_SAFEFILESYSTEM_H
#define TORCH_SYNCFREE_SAFEFILESYSTEM_H

#include "llvm/Support/VirtualFileSystem.h"
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace torch_syncfree {

/// Content hashes of the files read by the analyses of this process.
class ReadContents {
public:
  /// Records the hash of what was read of Path (absolute). A file read twice
  /// with different contents (edited during the run) is marked unstable.
  static void record(llvm::StringRef Path, llvm::StringRef Bytes);
  /// The hash of what the parser read, or nullopt when it was not read or
  /// was read with different contents by two translation units.
  static std::optional<uint64_t> lookup(llvm::StringRef Path);
  static uint64_t hash(llvm::StringRef Bytes);
  /// The same with the hash already known (nullopt: read unstably), as a
  /// worker process reports it (UnitWorker.h).
  static void recordHash(llvm::StringRef Path, std::optional<uint64_t> Hash);
  /// Every file read by this process, in path order.
  static std::vector<std::pair<std::string, std::optional<uint64_t>>> all();
};

/// The paths an analysis looked for and did not find (absolute, no dots): the
/// header search's misses. A header added earlier on the search path changes
/// what a unit includes without changing any file it read, so a cached result
/// (or a shared PCH) is valid only while each of these is still absent (issue 38).
class LookupMisses {
public:
  void record(llvm::StringRef Path);
  /// In path order.
  std::vector<std::string> paths() const;

private:
  mutable std::mutex Mutex;
  std::set<std::string> Paths;
};

/// Whether nothing (not even a dangling link) is at Path now.
bool stillAbsent(llvm::StringRef Path);

/// The largest file an analysis reads (PCHs of LibTorch are a few hundred MB).
constexpr uint64_t MaxReadBytes = uint64_t(4) << 30;

/// Wraps Base: non-regular files and files over MaxReadBytes cannot be opened;
/// reads are recorded, and lookups that find nothing go to Misses when given.
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
makeSafeFileSystem(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> Base,
                   std::shared_ptr<LookupMisses> Misses = nullptr);

} // namespace torch_syncfree

#endif
