#include "SafeFileSystem.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Errc.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"
#include <mutex>

using namespace llvm;

namespace torch_syncfree {

namespace {
std::mutex HashMutex;
StringMap<std::optional<uint64_t>> &hashes() {
  static StringMap<std::optional<uint64_t>> Map;
  return Map;
}

std::string normalised(StringRef Path) {
  SmallString<256> P(Path);
  sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P);
}

/// A file whose buffer is hashed when the parser reads it.
class RecordingFile : public vfs::File {
public:
  RecordingFile(std::unique_ptr<vfs::File> Inner, std::string Path)
      : Inner(std::move(Inner)), Path(std::move(Path)) {}
  ErrorOr<vfs::Status> status() override { return Inner->status(); }
  ErrorOr<std::string> getName() override { return Inner->getName(); }
  ErrorOr<std::unique_ptr<MemoryBuffer>> getBuffer(const Twine &Name, int64_t FileSize,
                                                   bool RequiresNullTerminator,
                                                   bool IsVolatile) override {
    auto Buffer = Inner->getBuffer(Name, FileSize, RequiresNullTerminator, IsVolatile);
    if (Buffer)
      ReadContents::record(Path, (*Buffer)->getBuffer());
    return Buffer;
  }
  std::error_code close() override { return Inner->close(); }

private:
  std::unique_ptr<vfs::File> Inner;
  std::string Path;
};

class SafeFileSystem : public vfs::ProxyFileSystem {
public:
  SafeFileSystem(IntrusiveRefCntPtr<vfs::FileSystem> Base, std::shared_ptr<LookupMisses> Misses)
      : ProxyFileSystem(std::move(Base)), Misses(std::move(Misses)) {}

  ErrorOr<vfs::Status> status(const Twine &Name) override {
    ErrorOr<vfs::Status> Status = ProxyFileSystem::status(Name);
    if (!Status)
      recordMiss(Name, Status.getError());
    return Status;
  }

  ErrorOr<std::unique_ptr<vfs::File>> openFileForRead(const Twine &Name) override {
    ErrorOr<vfs::Status> Status = getUnderlyingFS().status(Name);
    if (Status && Status->getType() != sys::fs::file_type::regular_file)
      return std::make_error_code(std::errc::permission_denied); // not a regular file
    // A bound on every read (a source, a header, an #embed, a PCH): a
    // multi-gigabyte file in a repository cannot exhaust memory.
    if (Status && Status->getSize() > MaxReadBytes)
      return std::make_error_code(std::errc::file_too_large);
    auto File = ProxyFileSystem::openFileForRead(Name);
    if (!File) {
      recordMiss(Name, File.getError());
      return File;
    }
    SmallString<256> Absolute;
    Name.toVector(Absolute);
    getUnderlyingFS().makeAbsolute(Absolute);
    return std::unique_ptr<vfs::File>(
        std::make_unique<RecordingFile>(std::move(*File), normalised(Absolute)));
  }

private:
  void recordMiss(const Twine &Name, std::error_code Error) {
    if (!Misses || (Error != std::errc::no_such_file_or_directory && Error != std::errc::not_a_directory))
      return;
    SmallString<256> Absolute;
    Name.toVector(Absolute);
    getUnderlyingFS().makeAbsolute(Absolute);
    Misses->record(normalised(Absolute));
  }

  std::shared_ptr<LookupMisses> Misses;
};
} // namespace

void LookupMisses::record(StringRef Path) {
  std::lock_guard<std::mutex> Lock(Mutex);
  Paths.insert(Path.str());
}

std::vector<std::string> LookupMisses::paths() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return std::vector<std::string>(Paths.begin(), Paths.end());
}

bool stillAbsent(StringRef Path) {
  sys::fs::file_status Status;
  std::error_code EC = sys::fs::status(Path, Status, /*Follow=*/false);
  return EC == std::errc::no_such_file_or_directory || EC == std::errc::not_a_directory;
}

uint64_t ReadContents::hash(StringRef Bytes) { return xxh3_64bits(Bytes); }

void ReadContents::record(StringRef Path, StringRef Bytes) { recordHash(Path, hash(Bytes)); }

void ReadContents::recordHash(StringRef Path, std::optional<uint64_t> H) {
  std::lock_guard<std::mutex> Lock(HashMutex);
  auto [It, Inserted] = hashes().try_emplace(normalised(Path), H);
  if (!Inserted && It->second != H)
    It->second = std::nullopt; // two translation units read different contents
}

std::vector<std::pair<std::string, std::optional<uint64_t>>> ReadContents::all() {
  std::lock_guard<std::mutex> Lock(HashMutex);
  std::vector<std::pair<std::string, std::optional<uint64_t>>> All;
  for (const auto &Entry : hashes())
    All.emplace_back(Entry.getKey().str(), Entry.getValue());
  llvm::sort(All);
  return All;
}

std::optional<uint64_t> ReadContents::lookup(StringRef Path) {
  std::lock_guard<std::mutex> Lock(HashMutex);
  auto It = hashes().find(normalised(Path));
  if (It == hashes().end())
    return std::nullopt;
  return It->second;
}

IntrusiveRefCntPtr<vfs::FileSystem>
makeSafeFileSystem(IntrusiveRefCntPtr<vfs::FileSystem> Base, std::shared_ptr<LookupMisses> Misses) {
  return makeIntrusiveRefCnt<SafeFileSystem>(std::move(Base), std::move(Misses));
}

} // namespace torch_syncfree
