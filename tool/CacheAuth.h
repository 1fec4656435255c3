// Authenticates what the tool writes into its caches (issue 23: a repository
// can ship a build directory with a cache in it). A manifest is trusted only
// when it carries a keyed BLAKE3 MAC made with this user's secret, which lives
// outside any repository ($XDG_CONFIG_HOME/torch-syncfree/cache-key, 0600, in a
// 0700 directory, created on first use); a committed or forged entry fails the
// check and is ignored. The shared PCH's manifest also binds the PCH's own
// BLAKE3 digest, so a damaged or swapped PCH is a cache miss, never loaded.
#ifndef TORCH_SYNCFREE_CACHE_AUTH_H
#define TORCH_SYNCFREE_CACHE_AUTH_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace torch_syncfree {

class CacheAuthenticator {
public:
  /// Loads (or creates) the user's secret; nullopt when it cannot be had (no
  /// writable config directory, a key file that is not a regular 0600 file of
  /// this user): caches are then not used. Why: the reason, for one warning.
  static std::optional<CacheAuthenticator> forCurrentUser(std::string &Why);
  /// With a given key (tests, the fuzzer).
  explicit CacheAuthenticator(llvm::StringRef Key32);

  /// Text + "\nmac <hex>\n": the signed form of Text.
  std::string sign(llvm::StringRef Text) const;
  /// The text of a signed manifest whose MAC is right; nullopt otherwise.
  std::optional<std::string> verify(llvm::StringRef Signed) const;

private:
  std::string mac(llvm::StringRef Text) const;
  unsigned char Key[32];
};

/// Makes Dir and its Subdirs (created 0700 when missing) ready for caching:
/// each must be a real directory (not a symbolic link: a repository can commit
/// `build/.torch-syncfree-cache` as a link to anywhere), owned by this user and
/// not writable by others. "" when ready, else why not (caches are then off,
/// with one warning).
std::string prepareCacheDirectory(llvm::StringRef Dir, llvm::ArrayRef<llvm::StringRef> Subdirs);

/// A cache file's bytes: a regular file of at most MaxBytes, opened without
/// following a symbolic link; null otherwise.
std::unique_ptr<llvm::MemoryBuffer> readCacheFile(llvm::StringRef Path, uint64_t MaxBytes);

/// The BLAKE3 digest of a file's bytes (readCacheFile), hex; "" when it cannot be read.
std::string fileDigest(llvm::StringRef Path);

/// Writes a cache file through a temporary file renamed over Target (one per
/// process and thread, so concurrent writers of one entry never interleave).
/// False, with nothing left behind, when any step fails (a full disk too);
/// Why (when given) then says which step and why.
bool writeCacheFile(const std::string &Target, llvm::StringRef Bytes, std::string *Why = nullptr);

} // namespace torch_syncfree

#endif
