// A per-user private directory for the language server's temporary files
// (preambles), and removal of stale entries in it without following links.
// $TMPDIR is shared: a directory another user created there (or a symlink
// swapped in between a check and a use) made a server empty a victim
// directory. Here the base is $XDG_RUNTIME_DIR/torch-syncfree (or
// $TMPDIR/torch-syncfree-<uid>), 0700, owned by the user, never a link; stale
// entries are removed through directory file descriptors (openat, unlinkat,
// O_NOFOLLOW), so no path is resolved twice.
#ifndef TORCH_SYNCFREE_PRIVATEDIRECTORY_H
#define TORCH_SYNCFREE_PRIVATEDIRECTORY_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include <string>
#include <system_error>

namespace torch_syncfree {

/// The user's private base directory, created 0700 if missing; "" with Why
/// set when it cannot be had safely (a link, another user's, open to others).
std::string privateBaseDirectory(std::string &Why);

/// Removes the entries of Base named "<Prefix><pid>-..." whose process is
/// gone, and everything below them, through directory file descriptors: a
/// symbolic link is removed itself, never followed.
void removeStaleEntries(llvm::StringRef Base, llvm::StringRef Prefix);

/// Whether Name (a temporary file or directory) was made by a process that is
/// gone: the pid that follows Marker in it ("preamble-<pid>-...",
/// "<entry>.tmp-<pid>-...") names no process (kill(pid, 0) fails with ESRCH).
bool madeByGoneProcess(llvm::StringRef Name, llvm::StringRef Marker);

/// Creates a new file "<Prefix>-XXXXXX.<Suffix>" in $TMPDIR, mode 0600 and
/// O_CREAT|O_EXCL (a name something already has, a planted link included, is
/// never opened: another name is tried), open in FD. llvm's
/// createTemporaryFile uses mode 0666 less the umask: 0644 in most shells, so
/// other local users could read a worker's findings and fixes (issue 38).
/// The file is removed if the process is stopped by a signal (SIGTERM, ^C)
/// before removePrivateTemporaryFile.
std::error_code createPrivateTemporaryFile(llvm::StringRef Prefix, llvm::StringRef Suffix,
                                           int &FD, llvm::SmallVectorImpl<char> &Path);
/// Removes a file made by createPrivateTemporaryFile.
void removePrivateTemporaryFile(llvm::StringRef Path);

/// Removes Path and everything below it without following symbolic links.
void removeTreeNoFollow(llvm::StringRef Path);

} // namespace torch_syncfree

#endif
