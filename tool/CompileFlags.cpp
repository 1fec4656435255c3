#include "CompileFlags.h"

#include "JsonLimits.h"
#include "utils/Directives.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <algorithm>

using namespace llvm;
using namespace clang;

namespace torch_syncfree {

static bool hasDatabase(StringRef Dir) {
  SmallString<256> Json(Dir);
  sys::path::append(Json, "compile_commands.json");
  return sys::fs::is_regular_file(Json);
}

std::string findCompileCommandsDir(StringRef File) {
  SmallString<256> Absolute(File);
  sys::fs::make_absolute(Absolute);
  sys::path::remove_dots(Absolute, /*remove_dot_dot=*/true);
  for (StringRef Dir = sys::path::parent_path(Absolute); !Dir.empty();
       Dir = sys::path::parent_path(Dir)) {
    if (hasDatabase(Dir))
      return Dir.str();
    // build/ first, then other build*/ directories in name order (clangd
    // looks in build/ only; CMake presets make build-debug/ and the like common).
    std::vector<std::string> BuildDirs;
    std::error_code EC;
    for (sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC; It.increment(EC)) {
      StringRef Name = sys::path::filename(It->path());
      if (Name.starts_with("build") && sys::fs::is_directory(It->path()))
        BuildDirs.push_back(It->path());
    }
    std::sort(BuildDirs.begin(), BuildDirs.end(), [](const std::string &A, const std::string &B) {
      bool APlain = sys::path::filename(A) == "build", BPlain = sys::path::filename(B) == "build";
      return APlain != BPlain ? APlain : A < B;
    });
    for (const std::string &Build : BuildDirs)
      if (hasDatabase(Build))
        return Build;
    if (sys::path::parent_path(Dir) == Dir)
      break;
  }
  return "";
}

std::unique_ptr<SanitizedDatabase> loadCompileCommands(StringRef Dir, std::string &Error) {
  SmallString<256> Json(Dir);
  sys::path::append(Json, "compile_commands.json");
  if (auto Buffer = MemoryBuffer::getFile(Json)) {
    std::string Deep = checkJsonNesting((*Buffer)->getBuffer());
    if (!Deep.empty()) {
      Error = "cannot read " + std::string(Json) + ": " + Deep;
      return nullptr;
    }
  }
  std::unique_ptr<tooling::CompilationDatabase> Database =
      tooling::JSONCompilationDatabase::loadFromFile(Json, Error,
                                                     tooling::JSONCommandLineSyntax::AutoDetect);
  if (!Database) {
    Error = "cannot read " + std::string(Json) + ": " + StringRef(Error).trim().str();
    return nullptr;
  }
  return std::make_unique<SanitizedDatabase>(
      tooling::inferMissingCompileCommands(std::move(Database)));
}

std::string findIncludingFile(StringRef Header, const std::vector<std::string> &Candidates) {
  for (const std::string &Candidate : Candidates) {
    auto Buffer = MemoryBuffer::getFile(Candidate);
    if (!Buffer)
      continue;
    for (const SourceDirective &D : scanDirectives((*Buffer)->getBuffer())) {
      StringRef Named = D.Header;
      if (D.Kind != SourceDirective::Include || Named.empty())
        continue;
      // "util.h" matches /repo/include/util.h; "a/util.h" needs the a/.
      SmallString<256> Suffix("/");
      Suffix += Named;
      sys::path::remove_dots(Suffix, /*remove_dot_dot=*/false);
      if (Header.ends_with(Suffix))
        return Candidate;
    }
  }
  return "";
}

} // namespace torch_syncfree
