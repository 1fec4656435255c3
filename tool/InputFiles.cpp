#include "InputFiles.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Errc.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <cerrno>
#include <fcntl.h>
#include <mutex>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace torch_syncfree {

namespace {
std::string sizeLimit(uint64_t MaxBytes) {
  if (MaxBytes >= (uint64_t(1) << 20) && MaxBytes % (uint64_t(1) << 20) == 0)
    return std::to_string(MaxBytes >> 20) + " MiB";
  return std::to_string(MaxBytes) + " bytes";
}

/// Opens Path for reading without blocking; -1 with Why set otherwise.
int openRegular(llvm::StringRef Path, uint64_t MaxBytes, uint64_t &Size, std::string &Why) {
  llvm::SmallString<256> Name(Path);
  int FD = ::open(Name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (FD < 0) {
    Why = std::error_code(errno, std::generic_category()).message();
    return -1;
  }
  struct stat Status;
  if (::fstat(FD, &Status) != 0 || !S_ISREG(Status.st_mode)) {
    Why = "not a regular file";
  } else if (static_cast<uint64_t>(Status.st_size) > MaxBytes) {
    Why = "larger than " + sizeLimit(MaxBytes);
  } else {
    Size = static_cast<uint64_t>(Status.st_size);
    return FD;
  }
  ::close(FD);
  return -1;
}
} // namespace

std::unique_ptr<llvm::MemoryBuffer> readInputFile(llvm::StringRef Path, uint64_t MaxBytes,
                                                  std::string &Why) {
  uint64_t Size = 0;
  int FD = openRegular(Path, MaxBytes, Size, Why);
  if (FD < 0)
    return nullptr;
  auto Buffer = llvm::MemoryBuffer::getOpenFile(llvm::sys::fs::convertFDToNativeFile(FD), Path,
                                                Size, /*RequiresNullTerminator=*/true);
  ::close(FD);
  if (!Buffer) {
    Why = Buffer.getError().message();
    return nullptr;
  }
  return std::move(*Buffer);
}

std::string checkInputFile(llvm::StringRef Path, uint64_t MaxBytes) {
  uint64_t Size = 0;
  std::string Why;
  int FD = openRegular(Path, MaxBytes, Size, Why);
  if (FD >= 0)
    ::close(FD);
  return Why;
}

std::string checkYamlNesting(llvm::StringRef Text, unsigned MaxNesting) {
  unsigned Flow = 0;
  char Quote = 0;
  bool LineStart = true, Comment = false;
  unsigned Indent = 0, Dashes = 0;
  auto TooDeep = [&] {
    return "YAML nested deeper than " + std::to_string(MaxNesting) + " levels";
  };
  for (size_t I = 0; I < Text.size(); ++I) {
    char C = Text[I];
    if (C == '\n') {
      // (A quoted scalar may span lines: Quote carries over.)
      LineStart = true, Comment = false, Indent = 0, Dashes = 0;
      continue;
    }
    if (Comment)
      continue;
    if (Quote) {
      if (Quote == '"' && C == '\\')
        ++I;
      else if (C == Quote)
        Quote = 0;
      continue;
    }
    if (LineStart) {
      if (C == ' ') {
        if (++Indent > 4 * MaxNesting)
          return TooDeep();
        continue;
      }
      // Block entries begun on one line ("- - - x", "? ? x") nest one level each.
      if ((C == '-' || C == '?' || C == ':') && I + 1 < Text.size() &&
          (Text[I + 1] == ' ' || Text[I + 1] == '\n')) {
        if (++Dashes > MaxNesting)
          return TooDeep();
        continue;
      }
      LineStart = false;
    }
    if (C == '#' && (I == 0 || Text[I - 1] == ' ' || Text[I - 1] == '\t')) {
      Comment = true;
      continue;
    }
    if (C == '"' || (C == '\'' && (I == 0 || !llvm::isAlnum(Text[I - 1])))) {
      Quote = C;
      continue;
    }
    if (C == '[' || C == '{') {
      if (++Flow > MaxNesting)
        return TooDeep();
    } else if ((C == ']' || C == '}') && Flow > 0) {
      --Flow;
    }
  }
  return "";
}

namespace {
bool isConfigFileName(llvm::StringRef Path) {
  llvm::StringRef Name = llvm::sys::path::filename(Path);
  return Name == ".clang-tidy" || Name == ".clang-format" || Name == "_clang-format";
}

/// One warning per refused configuration file, whatever thread reads it.
void warnRefused(llvm::StringRef Path, llvm::StringRef Why) {
  static std::mutex Mutex;
  static std::set<std::string> Warned;
  std::lock_guard<std::mutex> Lock(Mutex);
  if (Warned.insert(Path.str()).second)
    llvm::errs() << "torch-syncfree: warning: ignoring the configuration file '" << printable(Path)
                 << "': " << Why << "\n";
}

/// A refused .clang-tidy reads as an empty configuration (the defaults and
/// the command line hold): clang-tidy would print "Can't read" at every lookup.
class EmptyConfigFile : public llvm::vfs::File {
public:
  EmptyConfigFile(llvm::vfs::Status Status, std::string Name)
      : Status(llvm::vfs::Status::copyWithNewSize(Status, 2)), Name(std::move(Name)) {}
  llvm::ErrorOr<llvm::vfs::Status> status() override { return Status; }
  llvm::ErrorOr<std::string> getName() override { return Name; }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> getBuffer(const llvm::Twine &, int64_t, bool,
                                                               bool) override {
    return llvm::MemoryBuffer::getMemBufferCopy("{}", Name);
  }
  std::error_code close() override { return {}; }

private:
  llvm::vfs::Status Status;
  std::string Name;
};

class ConfigFileSystem : public llvm::vfs::ProxyFileSystem {
public:
  explicit ConfigFileSystem(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> Base)
      : ProxyFileSystem(std::move(Base)) {}

  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>> openFileForRead(const llvm::Twine &Name) override {
    llvm::SmallString<256> Path;
    Name.toVector(Path);
    if (!isConfigFileName(Path))
      return ProxyFileSystem::openFileForRead(Name);
    getUnderlyingFS().makeAbsolute(Path);
    std::string Why;
    std::unique_ptr<llvm::MemoryBuffer> Buffer = readInputFile(Path, MaxConfigBytes, Why);
    if (Buffer)
      Why = checkYamlNesting(Buffer->getBuffer());
    if (!Why.empty()) {
      warnRefused(Path, Why);
      llvm::ErrorOr<llvm::vfs::Status> Status = getUnderlyingFS().status(Path);
      if (llvm::sys::path::filename(Path) == ".clang-tidy" && Status)
        return std::unique_ptr<llvm::vfs::File>(
            std::make_unique<EmptyConfigFile>(*Status, std::string(Path)));
      return std::make_error_code(std::errc::invalid_argument);
    }
    return ProxyFileSystem::openFileForRead(Name);
  }
};
} // namespace

llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
makeConfigFileSystem(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> Base) {
  return llvm::makeIntrusiveRefCnt<ConfigFileSystem>(std::move(Base));
}

std::string printable(llvm::StringRef Text) {
  std::string Out;
  Out.reserve(Text.size());
  for (size_t I = 0; I < Text.size();) {
    unsigned char C = Text[I];
    if (C >= 0x80) {
      // A valid UTF-8 sequence stays; a stray byte is escaped.
      unsigned Length = C >= 0xF0 ? 4 : C >= 0xE0 ? 3 : C >= 0xC0 ? 2 : 1;
      if (Length > 1 && I + Length <= Text.size() &&
          llvm::json::isUTF8(Text.substr(I, Length))) {
        Out.append(Text.data() + I, Length);
        I += Length;
        continue;
      }
    } else if (C >= 0x20 && C != 0x7F) {
      Out += static_cast<char>(C);
      ++I;
      continue;
    }
    switch (C) {
    case '\n': Out += "\\n"; break;
    case '\r': Out += "\\r"; break;
    case '\t': Out += "\\t"; break;
    default:
      Out += "\\x";
      Out += llvm::hexdigit(C >> 4, /*LowerCase=*/true);
      Out += llvm::hexdigit(C & 15, /*LowerCase=*/true);
    }
    ++I;
  }
  return Out;
}

} // namespace torch_syncfree
