// What the fuzz targets share: a scratch directory per process and a writer of
// the files they hand to the readers under test.
#ifndef TORCH_SYNCFREE_FUZZFILES_H
#define TORCH_SYNCFREE_FUZZFILES_H

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include <string>

namespace torch_syncfree {

/// A new directory "<Prefix>-XXXXXX" under the system's temporary directory.
inline std::string fuzzScratchDirectory(llvm::StringRef Prefix) {
  llvm::SmallString<128> Dir;
  llvm::sys::fs::createUniqueDirectory(Prefix, Dir);
  return std::string(Dir);
}

/// Writes Bytes to Path (quietly: a failed write is a reader's missing file).
inline void writeFuzzFile(const std::string &Path, llvm::StringRef Bytes) {
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC);
  if (!EC)
    OS << Bytes;
}

} // namespace torch_syncfree

#endif
