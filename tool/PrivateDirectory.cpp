#include "PrivateDirectory.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include <cstdint>
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace torch_syncfree {

/// Hand-written: LLVM's remove_directories resolves paths (nftw), and has no
/// *at() form; a tree in a directory others could write must be removed
/// relative to an open descriptor.
static void removeEntryAt(int DirFd, const char *Name) {
  struct stat Status;
  if (::fstatat(DirFd, Name, &Status, AT_SYMLINK_NOFOLLOW) != 0)
    return;
  if (!S_ISDIR(Status.st_mode)) {
    ::unlinkat(DirFd, Name, 0); // a file or a link: the link itself goes
    return;
  }
  int Fd = ::openat(DirFd, Name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (Fd < 0)
    return;
  if (DIR *D = ::fdopendir(Fd)) { // owns Fd from here
    while (struct dirent *E = ::readdir(D)) {
      llvm::StringRef Child = E->d_name;
      if (Child != "." && Child != "..")
        removeEntryAt(::dirfd(D), E->d_name);
    }
    ::closedir(D);
  } else {
    ::close(Fd);
  }
  ::unlinkat(DirFd, Name, AT_REMOVEDIR);
}

void removeTreeNoFollow(llvm::StringRef Path) {
  llvm::SmallString<256> Parent(llvm::sys::path::parent_path(Path));
  std::string Name = llvm::sys::path::filename(Path).str();
  if (Parent.empty() || Name.empty())
    return;
  int Fd = ::open(Parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (Fd < 0)
    return;
  removeEntryAt(Fd, Name.c_str());
  ::close(Fd);
}

/// Opens Dir (creating it 0700 when missing) and checks it through the
/// descriptor: a directory, not a link, the user's, open to no one else.
static bool usableBase(const std::string &Dir, std::string &Why) {
  if (::mkdir(Dir.c_str(), 0700) != 0 && errno != EEXIST) {
    Why = "cannot create " + Dir;
    return false;
  }
  int Fd = ::open(Dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (Fd < 0) {
    Why = Dir + " is not a directory of its own (a symbolic link?)";
    return false;
  }
  struct stat Status;
  bool Ok = ::fstat(Fd, &Status) == 0 && Status.st_uid == ::getuid() &&
            (Status.st_mode & 077) == 0;
  ::close(Fd);
  if (!Ok)
    Why = Dir + " belongs to another user or is open to others";
  return Ok;
}

std::string privateBaseDirectory(std::string &Why) {
  if (const char *Runtime = std::getenv("XDG_RUNTIME_DIR"); Runtime && *Runtime == '/') {
    std::string Dir = std::string(Runtime) + "/torch-syncfree";
    if (usableBase(Dir, Why))
      return Dir;
  }
  llvm::SmallString<128> Temp;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, Temp);
  std::string Dir = (Temp + "/torch-syncfree-" + std::to_string(::getuid())).str();
  if (usableBase(Dir, Why))
    return Dir;
  return "";
}

bool madeByGoneProcess(llvm::StringRef Name, llvm::StringRef Marker) {
  size_t At = Name.find(Marker);
  if (At == llvm::StringRef::npos)
    return false;
  llvm::StringRef Digits = Name.drop_front(At + Marker.size()).take_while(llvm::isDigit);
  unsigned long Pid = 0;
  if (Digits.empty() || Digits.getAsInteger(10, Pid) || Pid == 0 || Pid > INT32_MAX)
    return false;
  return ::kill(static_cast<pid_t>(Pid), 0) == -1 && errno == ESRCH;
}

void removeStaleEntries(llvm::StringRef Base, llvm::StringRef Prefix) {
  int Fd = ::open(Base.str().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (Fd < 0)
    return;
  DIR *D = ::fdopendir(Fd);
  if (!D) {
    ::close(Fd);
    return;
  }
  while (struct dirent *E = ::readdir(D)) {
    llvm::StringRef Name = E->d_name;
    if (Name.starts_with(Prefix) && madeByGoneProcess(Name, Prefix))
      removeEntryAt(::dirfd(D), E->d_name);
  }
  ::closedir(D);
}

std::error_code createPrivateTemporaryFile(llvm::StringRef Prefix, llvm::StringRef Suffix, int &FD,
                                           llvm::SmallVectorImpl<char> &Path) {
  llvm::SmallString<128> Model;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, Model);
  llvm::sys::path::append(Model, Prefix + "-%%%%%%%%%%%%." + Suffix);
  if (std::error_code EC = llvm::sys::fs::createUniqueFile(
          Model, FD, Path, llvm::sys::fs::OF_None,
          llvm::sys::fs::owner_read | llvm::sys::fs::owner_write))
    return EC;
  // The umask cannot widen it, but a mode set by a previous owner of the name
  // cannot exist either (O_EXCL); fchmod keeps it 0600 whatever the system.
  (void)::fchmod(FD, S_IRUSR | S_IWUSR);
  llvm::sys::RemoveFileOnSignal(llvm::StringRef(Path.data(), Path.size()));
  return {};
}

void removePrivateTemporaryFile(llvm::StringRef Path) {
  llvm::sys::fs::remove(Path);
  llvm::sys::DontRemoveFileOnSignal(Path);
}

} // namespace torch_syncfree
