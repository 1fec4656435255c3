// Where a file's compile flags come from, as clangd finds them: the nearest
// compile_commands.json in the file's directory or a parent, or in a build/
// (or build*/) directory beside one; files without an entry (headers) borrow
// the flags of the closest entry (clang's own interpolation, as in clangd).
#ifndef TORCH_SYNCFREE_COMPILEFLAGS_H
#define TORCH_SYNCFREE_COMPILEFLAGS_H

#include "CompileCommandSanitizer.h"
#include "llvm/ADT/StringRef.h"
#include <memory>
#include <string>

namespace torch_syncfree {

/// The directory holding the compile_commands.json for File, or "".
std::string findCompileCommandsDir(llvm::StringRef File);

/// <Dir>/compile_commands.json, interpolated for files without an entry and
/// sanitised; nullptr with Error set when it cannot be read.
std::unique_ptr<SanitizedDatabase> loadCompileCommands(llvm::StringRef Dir, std::string &Error);

/// The first of Candidates whose #include lines name Header (by a path that
/// Header ends with), or "". A textual look, no preprocessing: a header
/// reached only through other headers is not found (the caller falls back
/// to interpolated flags).
std::string findIncludingFile(llvm::StringRef Header, const std::vector<std::string> &Candidates);

} // namespace torch_syncfree

#endif
