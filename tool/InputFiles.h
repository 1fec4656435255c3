// The one reader for files the tool reads on a repository's behalf: response
// files of compile commands, profiles and the modules they name, baselines,
// configuration files (.clang-tidy, .clang-format, --config-file). A repository
// can name /dev/stdin (the language server's own input), a FIFO (a hang),
// /dev/zero or a huge file (memory), or a text nested deep enough to overflow a
// recursive parser; and whatever such a file holds must never be echoed into a
// diagnostic (a CI log is often public). Hand-written: LLVM's readers follow
// any path (MemoryBuffer::getFile reads a FIFO until EOF) and its YAML and
// JSON parsers have no depth limit.
#ifndef TORCH_SYNCFREE_INPUTFILES_H
#define TORCH_SYNCFREE_INPUTFILES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"
#include <cstdint>
#include <memory>
#include <string>

namespace torch_syncfree {

/// The bytes of Path when it is (after symbolic links) a regular file of at
/// most MaxBytes; opened non-blocking, so a FIFO is refused, never waited on.
/// Null otherwise, with Why set to a one-line reason that quotes nothing of
/// the file ("not a regular file", "larger than 1 MiB", the system's error).
std::unique_ptr<llvm::MemoryBuffer> readInputFile(llvm::StringRef Path, uint64_t MaxBytes,
                                                  std::string &Why);

/// Whether Path is, now, a regular file of at most MaxBytes ("" when it is,
/// else the reason), for readers that open it themselves (a module's DWARF).
std::string checkInputFile(llvm::StringRef Path, uint64_t MaxBytes);

/// "" when a YAML text nests at most MaxNesting deep, else a one-line reason.
/// Counted conservatively: flow collections ([ {) over the whole text, block
/// sequence entries begun on one line (`- - - x`), and indentation columns.
/// llvm::yaml recurses once per level; ~120 KB of '[' overflow a thread's stack.
std::string checkYamlNesting(llvm::StringRef Text, unsigned MaxNesting = 64);

/// The configuration files read per directory (.clang-tidy, .clang-format,
/// _clang-format) through Base, each bounded as above: a file that is not a
/// regular file, larger than 1 MiB or nested too deep is refused with one
/// warning per path (a .clang-tidy then reads as empty, a .clang-format
/// cannot be opened). For clang-tidy's FileOptionsProvider and
/// clang-format's getStyle, which take a file system.
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
makeConfigFileSystem(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> Base);

/// The limit on a configuration file (a .clang-tidy is a few KB).
constexpr uint64_t MaxConfigBytes = uint64_t(1) << 20;

/// Text from an input (a file name, a profile's strings) made safe for one
/// line of output: control characters, DEL and invalid UTF-8 bytes are written
/// as \n, \r, \t, \xHH. A newline in a file name must not start a line that a
/// CI runner parses (`::error file=...::`).
std::string printable(llvm::StringRef Text);

} // namespace torch_syncfree

#endif
