// The run's inputs: the compilation database, the files and the TU parsed for
// each, the file system a unit is parsed through, the project the user names.
#include "CheckRunner.h"
#include "CompileFlags.h"
#include "batch/Batch.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <set>
#include <tuple>

using namespace clang;
using namespace llvm;

namespace torch_syncfree {

std::optional<int> loadDatabase(const RunOptions &Options,
                                std::unique_ptr<tooling::CompilationDatabase> Fixed, Batch &B) {
  auto &Compilations = B.Compilations;
  // Files a database does not list (headers from pre-commit, new sources) get
  // the flags clang interpolates from the closest entry, as in clangd; flags
  // after `--` apply to every file as given.
  bool FromDashDash = false;
  if (!Options.BuildPath.empty()) {
    SmallString<256> JsonPath(Options.BuildPath);
    sys::path::append(JsonPath, "compile_commands.json");
    if (!sys::fs::exists(JsonPath))
      return usageError("no compile_commands.json in '" + Options.BuildPath + "'");
    std::string Error;
    Compilations = loadCompileCommands(Options.BuildPath, Error);
    if (!Compilations)
      return usageError(Error);
  } else if (Fixed) {
    Compilations = std::make_unique<SanitizedDatabase>(std::move(Fixed));
    FromDashDash = true;
  } else {
    if (Options.Sources.empty())
      return usageError("no input files (give sources, or -p <build dir>)");
    std::string Error;
    std::unique_ptr<tooling::CompilationDatabase> Detected =
        tooling::CompilationDatabase::autoDetectFromSource(Options.Sources.front(), Error);
    if (!Detected)
      return usageError("no compile command for '" + Options.Sources.front() +
                        "': give flags after '--' or a build directory with -p");
    Compilations =
        std::make_unique<SanitizedDatabase>(tooling::inferMissingCompileCommands(std::move(Detected)));
  }
  B.Interpolate = !FromDashDash;
  Compilations->setRemovedArgs(Options.RemovedArgs);
  return std::nullopt;
}

std::optional<int> loadInputs(const RunOptions &Options, std::unique_ptr<tooling::CompilationDatabase> Fixed,
                              Batch &B) {
  if (std::optional<int> Exit = loadDatabase(Options, std::move(Fixed), B))
    return Exit;
  auto &Compilations = B.Compilations;
  auto &Files = B.Files;
  auto &ParseFiles = B.ParseFiles;
  auto &Interpolate = B.Interpolate;
  // Files the database lists itself; the others are analysed through a TU that
  // includes them, or with interpolated flags.
  std::vector<std::string> Listed = Compilations->getAllFiles();
  std::set<std::string> ListedSet;
  for (std::string &File : Listed) {
    SmallString<256> Absolute(File);
    std::ignore = sys::fs::make_absolute(Absolute);
    sys::path::remove_dots(Absolute, /*remove_dot_dot=*/true);
    File = std::string(Absolute);
    ListedSet.insert(File);
  }
  // In path order (the set's): the database's own order is a hash table's (it
  // changed with the checkout's directory), and the report follows this order.
  Listed.assign(ListedSet.begin(), ListedSet.end());

  Files.assign(Options.Sources.begin(), Options.Sources.end());
  if (Files.empty())
    Files = Listed;
  if (!Options.Shard.empty()) {
    // Every N-th file in path order: deterministic whatever order the database
    // lists them in, so N CI jobs cover every TU exactly once.
    unsigned K = 0, N = 0;
    auto [KText, NText] = StringRef(Options.Shard).split('/');
    if (KText.getAsInteger(10, K) || NText.getAsInteger(10, N) || N == 0 || K == 0 || K > N)
      return usageError("--shard expects K/N with 1 <= K <= N, not '" + Options.Shard + "'");
    llvm::sort(Files);
    Files.erase(std::unique(Files.begin(), Files.end()), Files.end());
    std::vector<std::string> Selected;
    for (size_t I = K - 1; I < Files.size(); I += N)
      Selected.push_back(Files[I]);
    Files = std::move(Selected);
    if (Files.empty()) {
      if (!Options.Quiet)
        errs() << "torch-syncfree: shard " << Options.Shard << " has no translation unit\n";
      B.Formatter->finish({}, {}, outs());
      return ExitClean;
    }
  }
  if (Files.empty())
    return usageError("the compilation database lists no files");
  for (std::string &File : Files) {
    if (!sys::fs::exists(File))
      return usageError("no such file: '" + File + "'");
    if (!sys::fs::is_regular_file(File))
      return usageError("not a regular file: '" + File + "'");
    SmallString<256> Absolute(File);
    std::ignore = sys::fs::make_absolute(Absolute);
    sys::path::remove_dots(Absolute, /*remove_dot_dot=*/true);
    File = std::string(Absolute);
  }
  // Per requested file, the TU to parse (itself, or one that includes it).
  ParseFiles = Files;
  if (Interpolate)
    for (size_t I = 0; I < Files.size(); ++I) {
      if (ListedSet.count(Files[I]))
        continue;
      std::string Includer = findIncludingFile(Files[I], Listed);
      if (!Includer.empty())
        ParseFiles[I] = Includer;
      if (!Options.Quiet)
        errs() << "torch-syncfree: note: " << Files[I] << " has no compile command; "
               << (Includer.empty() ? std::string("analysed with the flags of the closest entry")
                                    : "analysed through " + Includer + ", which includes it")
               << "\n";
    }
  return std::nullopt;
}

IntrusiveRefCntPtr<vfs::OverlayFileSystem> makeUnitFileSystem(const RunOptions &Options, std::string &Error,
                                                              std::shared_ptr<LookupMisses> Misses) {
  // ClangTool sets the working directory of its file system to each compile
  // command's directory: each unit gets a physical file system of its own
  // (the real one shares the process's working directory across threads).
  auto SafeFS = makeSafeFileSystem(vfs::createPhysicalFileSystem(), std::move(Misses));
  auto UnitFS = makeIntrusiveRefCnt<vfs::OverlayFileSystem>(SafeFS);
  if (!Options.VfsOverlay.empty()) {
    auto Buffer = SafeFS->getBufferForFile(Options.VfsOverlay);
    IntrusiveRefCntPtr<vfs::FileSystem> Redirecting =
        Buffer ? vfs::getVFSFromYAML(std::move(*Buffer), nullptr, Options.VfsOverlay, nullptr, SafeFS)
               : nullptr;
    if (!Redirecting) {
      Error = "invalid --vfsoverlay file '" + Options.VfsOverlay + "'";
      return nullptr;
    }
    UnitFS->pushOverlay(Redirecting);
  }
  return UnitFS;
}

/// The project as the user's run names it: the work trees around the working
/// directory, -p and the sources on the command line; never a directory the
/// repository's flags name. #embed reads only under it (UnitRunOptions::EmbedRoots)
/// and --fix writes only under it (a header of a sibling checkout named by -I
/// is not rewritten).
std::vector<std::string> userProjectRoots(const RunOptions &Options) {
  std::vector<std::string> Roots;
  auto Add = [&](StringRef Dir) {
    SmallString<256> Absolute(Dir);
    if (Absolute.empty() || sys::fs::make_absolute(Absolute))
      return;
    sys::path::remove_dots(Absolute, /*remove_dot_dot=*/true);
    std::string Root = workTreeRoot(Absolute);
    if (!llvm::is_contained(Roots, Root))
      Roots.push_back(Root);
  };
  SmallString<256> Cwd;
  if (!sys::fs::current_path(Cwd))
    Add(Cwd);
  if (!Options.BuildPath.empty())
    Add(Options.BuildPath);
  for (const std::string &Source : Options.Sources)
    Add(sys::path::parent_path(Source).empty() ? StringRef(".") : sys::path::parent_path(Source));
  return Roots;
}

} // namespace torch_syncfree
