#include "CacheAuth.h"
#include "PrivateDirectory.h"
#include <cerrno>
#include <csignal>
#include "llvm/Support/raw_ostream.h"
#include <thread>
#include <vector>

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace torch_syncfree {

namespace {
std::string configDirectory() {
  if (std::optional<std::string> Dir = llvm::sys::Process::GetEnv("XDG_CONFIG_HOME"); Dir && !Dir->empty())
    return *Dir + "/torch-syncfree";
  if (std::optional<std::string> Home = llvm::sys::Process::GetEnv("HOME"); Home && !Home->empty())
    return *Home + "/.config/torch-syncfree";
  return "";
}

/// Reads exactly 32 bytes from a regular file of this user that no one else
/// can read or write, opened without following a symbolic link.
bool readKey(const std::string &Path, unsigned char *Key, std::string &Why) {
  int FD = ::open(Path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (FD < 0)
    return false;
  struct stat St;
  bool Ok = ::fstat(FD, &St) == 0 && S_ISREG(St.st_mode) && St.st_uid == ::geteuid() &&
            (St.st_mode & 077) == 0 && St.st_size == 32 && ::read(FD, Key, 32) == 32;
  ::close(FD);
  if (!Ok)
    Why = Path + " is not a 32-byte regular file readable by this user only";
  return Ok;
}
} // namespace

/// Removes temporary files a killed run left in Dir: ours are named
/// "<entry>.tmp-<pid>-<thread>[...]" (clang's own output temporaries add a
/// suffix to that name). Only regular files of this user whose process is gone
/// (no process with that pid: kill(pid, 0) fails with ESRCH) are removed;
/// symlinks are never followed.
static void removeStaleTemporaries(const std::string &Dir) {
  // Through a descriptor of the directory (openat-style): no path is resolved
  // twice, and a directory swapped for a link is not walked.
  int Fd = ::open(Dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (Fd < 0)
    return;
  DIR *D = ::fdopendir(Fd);
  if (!D) {
    ::close(Fd);
    return;
  }
  while (struct dirent *E = ::readdir(D)) {
    if (!madeByGoneProcess(E->d_name, ".tmp-"))
      continue;
    struct stat Status;
    if (::fstatat(::dirfd(D), E->d_name, &Status, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(Status.st_mode) || Status.st_uid != ::getuid())
      continue;
    ::unlinkat(::dirfd(D), E->d_name, 0);
  }
  ::closedir(D);
}

/// A symbolic link among Dir's ancestors inside the work tree that holds it
/// ("" when none): a repository can commit `build` as a link to anywhere, and
/// `-p build` (or --cache-dir=build/cache) would then write caches there. Links
/// above the work tree (the user's own file system layout) are the user's.
static std::string linkInsideWorkTree(llvm::StringRef Dir) {
  llvm::SmallString<256> Absolute(Dir);
  if (llvm::sys::fs::make_absolute(Absolute))
    return "";
  llvm::sys::path::remove_dots(Absolute, /*remove_dot_dot=*/true);
  llvm::SmallString<256> Root;
  for (llvm::StringRef At = llvm::sys::path::parent_path(Absolute); !At.empty();
       At = llvm::sys::path::parent_path(At)) {
    llvm::SmallString<256> Git(At);
    llvm::sys::path::append(Git, ".git");
    struct stat Status;
    if (::lstat(Git.c_str(), &Status) == 0) {
      Root = At;
      break;
    }
    if (llvm::sys::path::parent_path(At) == At)
      break;
  }
  if (Root.empty())
    return "";
  for (llvm::StringRef At = llvm::sys::path::parent_path(Absolute);
       At.size() > Root.size() && At.starts_with(Root); At = llvm::sys::path::parent_path(At)) {
    struct stat Status;
    llvm::SmallString<256> Name(At);
    if (::lstat(Name.c_str(), &Status) == 0 && S_ISLNK(Status.st_mode))
      return Name.str().str();
  }
  return "";
}

std::string prepareCacheDirectory(llvm::StringRef Dir, llvm::ArrayRef<llvm::StringRef> Subdirs) {
  if (std::string Link = linkInsideWorkTree(Dir); !Link.empty())
    return Dir.str() + " lies under " + Link +
           ", a symbolic link inside the checkout (a committed link can point anywhere; "
           "pass --cache-dir with a path without one)";
  std::vector<std::string> Paths{Dir.str()};
  for (llvm::StringRef Sub : Subdirs)
    Paths.push_back((Dir + "/" + Sub).str());
  for (const std::string &Path : Paths) {
    struct stat Status;
    if (::lstat(Path.c_str(), &Status) != 0) {
      if (std::error_code EC = llvm::sys::fs::create_directories(Path, /*IgnoreExisting=*/true,
                                                                 llvm::sys::fs::perms::owner_all))
        return "cannot create " + Path + ": " + EC.message();
      if (::lstat(Path.c_str(), &Status) != 0)
        return "cannot create " + Path;
    }
    if (S_ISLNK(Status.st_mode))
      return Path + " is a symbolic link (a cache directory is never followed through one)";
    if (!S_ISDIR(Status.st_mode))
      return Path + " is not a directory";
    if (Status.st_uid != ::getuid())
      return Path + " belongs to another user";
    if (Status.st_mode & (S_IWGRP | S_IWOTH))
      return Path + " is writable by other users";
  }
  for (const std::string &Path : Paths)
    removeStaleTemporaries(Path);
  return "";
}

std::optional<CacheAuthenticator> CacheAuthenticator::forCurrentUser(std::string &Why) {
  std::string Dir = configDirectory();
  if (Dir.empty()) {
    Why = "no HOME or XDG_CONFIG_HOME for the cache key";
    return std::nullopt;
  }
  std::string Path = Dir + "/cache-key";
  unsigned char Key[32];
  if (readKey(Path, Key, Why))
    return CacheAuthenticator(llvm::StringRef(reinterpret_cast<char *>(Key), 32));
  if (!Why.empty())
    return std::nullopt;
  // First use: a new random key, written exclusively (another process may race us).
  llvm::sys::fs::create_directories(Dir, /*IgnoreExisting=*/true, llvm::sys::fs::perms::owner_all);
  int Random = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  bool Got = Random >= 0 && ::read(Random, Key, 32) == 32;
  if (Random >= 0)
    ::close(Random);
  if (!Got) {
    Why = "cannot read /dev/urandom for the cache key";
    return std::nullopt;
  }
  int FD = ::open(Path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (FD >= 0) {
    bool Written = ::write(FD, Key, 32) == 32;
    ::close(FD);
    if (!Written) {
      ::unlink(Path.c_str());
      Why = "cannot write " + Path;
      return std::nullopt;
    }
  }
  // Whoever created it, the file on disk is the key.
  if (readKey(Path, Key, Why))
    return CacheAuthenticator(llvm::StringRef(reinterpret_cast<char *>(Key), 32));
  if (Why.empty())
    Why = "cannot create " + Path;
  return std::nullopt;
}

CacheAuthenticator::CacheAuthenticator(llvm::StringRef Key32) {
  std::memset(Key, 0, sizeof(Key));
  std::memcpy(Key, Key32.data(), std::min<size_t>(Key32.size(), sizeof(Key)));
}

std::string CacheAuthenticator::mac(llvm::StringRef Text) const {
  llvm_blake3_hasher Hasher;
  llvm_blake3_hasher_init_keyed(&Hasher, Key);
  llvm_blake3_hasher_update(&Hasher, Text.data(), Text.size());
  uint8_t Out[32];
  llvm_blake3_hasher_finalize(&Hasher, Out, sizeof(Out));
  return llvm::toHex(llvm::ArrayRef<uint8_t>(Out, sizeof(Out)), /*LowerCase=*/true);
}

std::string CacheAuthenticator::sign(llvm::StringRef Text) const {
  return Text.str() + "\nmac " + mac(Text) + "\n";
}

std::optional<std::string> CacheAuthenticator::verify(llvm::StringRef Signed) const {
  if (!Signed.consume_back("\n"))
    return std::nullopt;
  size_t At = Signed.rfind("\nmac ");
  if (At == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef Text = Signed.take_front(At), Mac = Signed.drop_front(At + 5);
  // Compared in full (no early exit on the first differing byte).
  std::string Expected = mac(Text);
  if (Mac.size() != Expected.size())
    return std::nullopt;
  unsigned char Diff = 0;
  for (size_t I = 0; I < Expected.size(); ++I)
    Diff |= Mac[I] ^ Expected[I];
  if (Diff)
    return std::nullopt;
  return Text.str();
}

std::unique_ptr<llvm::MemoryBuffer> readCacheFile(llvm::StringRef Path, uint64_t MaxBytes) {
  // O_NOFOLLOW: a link planted in the cache (a committed build directory)
  // is not followed; O_NONBLOCK: opening a FIFO does not wait for a writer.
  llvm::SmallString<256> Name(Path);
  int FD = ::open(Name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (FD < 0)
    return nullptr;
  struct stat Status;
  std::unique_ptr<llvm::MemoryBuffer> Result;
  if (::fstat(FD, &Status) == 0 && S_ISREG(Status.st_mode) &&
      static_cast<uint64_t>(Status.st_size) <= MaxBytes) {
    auto Buffer = llvm::MemoryBuffer::getOpenFile(llvm::sys::fs::convertFDToNativeFile(FD), Path,
                                                  Status.st_size,
                                                  /*RequiresNullTerminator=*/false);
    if (Buffer)
      Result = std::move(*Buffer);
  }
  ::close(FD);
  return Result;
}

std::string fileDigest(llvm::StringRef Path) {
  auto Buffer = readCacheFile(Path, /*MaxBytes=*/uint64_t(16) << 30);
  if (!Buffer)
    return "";
  llvm::BLAKE3 Hasher;
  Hasher.update(Buffer->getBuffer());
  auto Digest = Hasher.final();
  return llvm::toHex(Digest, /*LowerCase=*/true);
}

bool writeCacheFile(const std::string &Target, llvm::StringRef Bytes, std::string *Why) {
  std::string Temp = Target + ".tmp-" + std::to_string(::getpid()) + "-" +
                     std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  auto Failed = [&](std::error_code EC) {
    if (Why)
      *Why = "cannot write '" + Target + "': " + EC.message();
    return false;
  };
  {
    std::error_code EC;
    // O_EXCL: a name planted in a committed cache directory (a link to
    // anywhere) is never opened, let alone written through.
    llvm::raw_fd_ostream OS(Temp, EC, llvm::sys::fs::CD_CreateNew);
    if (EC)
      return Failed(EC);
    OS << Bytes;
    OS.close(); // a write that fails at the final flush (a full disk) is an error here, not a fatal one later
    if (OS.has_error()) {
      EC = OS.error();
      OS.clear_error();
      llvm::sys::fs::remove(Temp);
      return Failed(EC);
    }
  }
  if (std::error_code EC = llvm::sys::fs::rename(Temp, Target)) {
    llvm::sys::fs::remove(Temp);
    return Failed(EC);
  }
  return true;
}

} // namespace torch_syncfree
