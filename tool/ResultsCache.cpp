#include "ResultsCache.h"
#include "FindingJson.h"
#include "TextEncoding.h"
#include "llvm/ADT/StringSet.h"

#include "JsonLimits.h"
#include "SafeFileSystem.h"

#include "clang/Basic/Version.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include <limits>
#include <thread>
#include <unistd.h>

using namespace clang;
using namespace clang::tidy;
namespace json = llvm::json;
namespace fs = llvm::sys::fs;

namespace torch_syncfree {

namespace {

/// The running binary's size and mtime: a rebuilt tool never reads the
/// results of its previous build (the version string may not change).
std::string toolIdentity() {
  static const std::string Identity = [] {
    std::string Self = llvm::sys::fs::getMainExecutable(nullptr, (void *)&toolIdentity);
    fs::file_status Status;
    if (Self.empty() || fs::status(Self, Status))
      return std::string("unknown");
    return Self + " " + std::to_string(Status.getSize()) + " " +
           std::to_string(Status.getLastModificationTime().time_since_epoch().count());
  }();
  return Identity;
}

} // namespace

std::string ResultsCache::key(StringRef File, ArrayRef<std::string> Command, StringRef Directory,
                              StringRef OptionsText, StringRef LineFilter) {
  std::string Identity = toolIdentity() + '\0' + getClangFullVersion() + '\0' + File.str() +
                         '\0' + Directory.str() + '\0' + OptionsText.str() + '\0' +
                         LineFilter.str();
  for (const std::string &Arg : Command)
    Identity += '\0' + Arg;
  return hex64(llvm::xxh3_64bits(Identity));
}

std::optional<uint64_t> ResultsCache::contentHash(const std::string &Path) {
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    auto It = Hashes.find(Path);
    if (It != Hashes.end())
      return It->second;
  }
  std::optional<uint64_t> Hash;
  // Regular files only: an entry naming /dev/zero or a FIFO as an input would
  // read forever (defence in depth: entries are signed, CacheAuth.h).
  fs::file_status Status;
  if (!fs::status(Path, Status) && fs::is_regular_file(Status))
  if (auto Buffer = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                                /*RequiresNullTerminator=*/false))
  {
    Hash = ReadContents::hash((*Buffer)->getBuffer());
    // Cached fixes are applied to exactly these contents (FixApplier checks).
    ReadContents::record(Path, (*Buffer)->getBuffer());
  }
  std::lock_guard<std::mutex> Lock(Mutex);
  Hashes[Path] = Hash;
  return Hash;
}

std::optional<std::vector<FindingRecord>> ResultsCache::lookup(StringRef Key) {
  SmallString<256> Path(Directory);
  llvm::sys::path::append(Path, Key + ".json");
  auto Miss = [&]() -> std::optional<std::vector<FindingRecord>> {
    std::lock_guard<std::mutex> Lock(Mutex);
    ++Misses;
    return std::nullopt;
  };
  auto Reject = [&]() -> std::optional<std::vector<FindingRecord>> {
    std::lock_guard<std::mutex> Lock(Mutex);
    ++Untrusted;
    ++Misses;
    return std::nullopt;
  };
  std::unique_ptr<llvm::MemoryBuffer> Buffer = readCacheFile(Path, /*MaxBytes=*/64 << 20);
  if (!Buffer)
    return Miss();
  // Only what this user's tool wrote: a committed or forged entry is ignored.
  std::optional<std::string> Text = Auth.verify(Buffer->getBuffer());
  if (!Text)
    return Reject();
  if (!checkJsonNesting(*Text).empty())
    return Miss();
  llvm::Expected<json::Value> Parsed = json::parse(*Text);
  if (!Parsed) {
    llvm::consumeError(Parsed.takeError());
    return Miss();
  }
  const json::Object *Root = Parsed->getAsObject();
  const json::Array *Inputs = Root ? Root->getArray("inputs") : nullptr;
  const json::Array *Findings = Root ? Root->getArray("findings") : nullptr;
  const json::Array *Absent = Root ? Root->getArray("absent") : nullptr;
  if (!Inputs || !Findings || !Absent)
    return Miss();
  // A header search miss that now finds a file (a header added earlier on the
  // search path shadows the one that was read): the unit includes other code.
  for (const json::Value &V : *Absent) {
    std::optional<std::string> File = bytesFromJson(&V);
    if (!File)
      return Miss();
    if (!stillAbsent(*File))
      return Miss();
  }
  if (Inputs->empty()) // an analysis reads its main file at least
    return Reject();
  llvm::StringSet<> InputFiles;
  for (const json::Value &V : *Inputs) {
    const json::Object *Input = V.getAsObject();
    auto File = Input ? bytesFromJson(Input->get("file")) : std::nullopt;
    auto Hash = Input ? Input->getString("hash") : std::nullopt;
    if (!File || !Hash)
      return Miss();
    std::optional<uint64_t> Now = contentHash(*File);
    if (!Now || hex64(*Now) != *Hash)
      return Miss();
    InputFiles.insert(*File);
  }
  std::optional<std::vector<FindingRecord>> Errors = findingsFromJson(*Findings);
  if (!Errors)
    return Miss();
  for (const FindingRecord &E : *Errors) {
    // Every location and fix lies in a file the entry names (and was read).
    auto Read = [&](StringRef File) { // as the analysis named it: absolute, no dots
      SmallString<256> Absolute(File);
      if (!llvm::sys::path::is_absolute(Absolute))
        llvm::sys::path::make_absolute(E.BuildDirectory, Absolute);
      llvm::sys::path::remove_dots(Absolute, /*remove_dot_dot=*/true);
      return InputFiles.contains(Absolute);
    };
    auto Inside = [&](const tooling::DiagnosticMessage &M) {
      if (!M.FilePath.empty() && !Read(M.FilePath))
        return false;
      for (const auto &[FixFile, Replacements] : M.Fix)
        for (const tooling::Replacement &R : Replacements)
          if (!Read(R.getFilePath()) || !Read(FixFile))
            return false;
      return true;
    };
    if (!Inside(E.Message) || !llvm::all_of(E.Notes, Inside))
      return Reject();
  }
  std::lock_guard<std::mutex> Lock(Mutex);
  ++Hits;
  return Errors;
}

void ResultsCache::store(StringRef Key, const std::vector<FindingRecord> &Errors,
                         const std::vector<std::string> &ReadFiles,
                         const std::vector<std::string> &AbsentFiles) {
  json::Array Inputs, Absent;
  for (const std::string &File : AbsentFiles)
    Absent.push_back(bytesToJson(File));
  for (const std::string &File : ReadFiles) {
    std::optional<uint64_t> Hash = contentHash(File);
    if (!Hash)
      return; // a file that cannot be read again: nothing to validate with
    Inputs.push_back(json::Object{{"file", bytesToJson(File)}, {"hash", hex64(*Hash)}});
  }
  json::Array Findings = findingsToJson(Errors);
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (!WriteFailure.empty())
      return;
  }
  std::string Why;
  if (std::error_code EC = fs::create_directories(Directory)) {
    Why = "cannot create '" + Directory + "': " + EC.message();
  } else {
    SmallString<256> Path(Directory);
    llvm::sys::path::append(Path, Key + ".json");
    std::string Entry;
    llvm::raw_string_ostream(Entry)
        << json::Value(json::Object{{"inputs", std::move(Inputs)},
                                    {"absent", std::move(Absent)},
                                    {"findings", std::move(Findings)}});
    if (writeCacheFile(std::string(Path), Auth.sign(Entry), &Why))
      return;
  }
  std::lock_guard<std::mutex> Lock(Mutex);
  if (WriteFailure.empty())
    WriteFailure = Why;
}

std::string ResultsCache::writeFailure() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return WriteFailure;
}

} // namespace torch_syncfree
