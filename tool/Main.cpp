// torch-syncfree: the standalone front end, shaped like clang-tidy.
//   torch-syncfree [options] <source>... [-- <compiler flags>]
//   torch-syncfree [options] -p <build dir> [<source>...]
// It drives the same check classes as the plugin through clang-tidy's own
// driver (runClangTidy), so NOLINT, .clang-tidy files and system-header
// filtering behave exactly as in clang-tidy.
#include "CheckCatalog.h"
#include "FixApplier.h"
#include "Reporting.h"

#include "clang-tidy/ClangTidy.h"
#include "clang-tidy/ClangTidyDiagnosticConsumer.h"
#include "clang-tidy/ClangTidyOptions.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"

using namespace clang;
using namespace clang::tidy;
using namespace llvm;

namespace {

cl::OptionCategory Category("torch-syncfree options");

cl::list<std::string> Sources(cl::Positional, cl::desc("<source>..."), cl::cat(Category));
cl::opt<std::string> BuildPath("p", cl::desc("Build directory holding compile_commands.json"),
                               cl::value_desc("build dir"), cl::cat(Category));
cl::opt<std::string> ChecksGlobs("checks",
                                 cl::desc("Comma-separated globs of checks to run "
                                          "(default: torch-sync-*, or the .clang-tidy Checks)"),
                                 cl::cat(Category));
cl::opt<bool> ListChecks("list-checks", cl::desc("List the enabled checks and exit"),
                         cl::cat(Category));
cl::opt<bool> ApplyFixes("fix", cl::desc("Apply the suggested fixes to the files"),
                         cl::cat(Category));
cl::opt<bool> DryRun("dry-run", cl::desc("With --fix: print a unified diff, write nothing"),
                     cl::cat(Category));
cl::opt<bool> FixErrors("fix-errors",
                        cl::desc("Apply fixes even to translation units that do not compile"),
                        cl::cat(Category));
cl::opt<std::string> ExportFixes("export-fixes",
                                 cl::desc("Write the fixes as clang-apply-replacements YAML"),
                                 cl::value_desc("file.yaml"), cl::cat(Category));
cl::opt<std::string> Format("format", cl::desc("Output format: text (clang-style) or json"),
                           cl::init("text"), cl::cat(Category));
cl::opt<std::string> Config("config", cl::desc("A .clang-tidy configuration as YAML text"),
                            cl::cat(Category));

constexpr int ExitClean = 0, ExitFindings = 1, ExitUsage = 2;

int usageError(const Twine &Message) {
  errs() << "torch-syncfree: error: " << Message << "\n";
  return ExitUsage;
}

/// Drops compile options that would load code named by an untrusted repository.
tooling::ArgumentsAdjuster dropCodeLoadingFlags() {
  return [](const tooling::CommandLineArguments &Args, StringRef File) {
    tooling::CommandLineArguments Kept;
    for (size_t I = 0; I < Args.size(); ++I) {
      StringRef Arg = Args[I];
      bool LoadsCode = Arg.starts_with("-fplugin=") || Arg.starts_with("-fpass-plugin=") ||
                       Arg == "-load" || Arg == "-fplugin" || Arg == "-fpass-plugin";
      bool XclangLoad = Arg == "-Xclang" && I + 1 < Args.size() &&
                        (Args[I + 1] == "-load" || StringRef(Args[I + 1]).starts_with("-fplugin"));
      if (XclangLoad) {
        errs() << "torch-syncfree: warning: dropped '-Xclang " << Args[I + 1]
               << "' from the compile command of " << File << "\n";
        I += (Args[I + 1] == "-load" && I + 3 < Args.size() && Args[I + 2] == "-Xclang") ? 3 : 1;
        continue;
      }
      if (LoadsCode) {
        errs() << "torch-syncfree: warning: dropped '" << Arg
               << "' from the compile command of " << File << "\n";
        if ((Arg == "-load" || Arg == "-fplugin" || Arg == "-fpass-plugin") && I + 1 < Args.size())
          ++I;
        continue;
      }
      Kept.push_back(Args[I]);
    }
    return Kept;
  };
}

/// Compilation database with the code-loading flags removed.
class SanitizedDatabase : public tooling::CompilationDatabase {
public:
  explicit SanitizedDatabase(std::unique_ptr<tooling::CompilationDatabase> Inner)
      : Inner(std::move(Inner)) {}
  std::vector<tooling::CompileCommand> getCompileCommands(StringRef File) const override {
    auto Commands = Inner->getCompileCommands(File);
    for (auto &Command : Commands)
      Command.CommandLine = dropCodeLoadingFlags()(Command.CommandLine, File);
    return Commands;
  }
  std::vector<std::string> getAllFiles() const override { return Inner->getAllFiles(); }
  std::vector<tooling::CompileCommand> getAllCompileCommands() const override {
    return Inner->getAllCompileCommands();
  }

private:
  std::unique_ptr<tooling::CompilationDatabase> Inner;
};

std::unique_ptr<ClangTidyOptionsProvider> makeOptionsProvider() {
  ClangTidyGlobalOptions Global;
  ClangTidyOptions Defaults = ClangTidyOptions::getDefaults();
  Defaults.Checks = "-*,torch-sync-*";
  Defaults.HeaderFilterRegex = ".*"; // user headers too; system headers never
  Defaults.SystemHeaders = false;
  ClangTidyOptions Overrides;
  if (!ChecksGlobs.empty())
    Overrides.Checks = "-*," + ChecksGlobs;
  if (!Config.empty()) {
    auto Parsed = parseConfiguration(MemoryBufferRef(Config, "--config"));
    if (!Parsed) {
      errs() << "torch-syncfree: error: invalid --config: " << Parsed.getError().message()
             << "\n";
      exit(ExitUsage);
    }
    return std::make_unique<ConfigOptionsProvider>(Global, Defaults, *Parsed, Overrides);
  }
  return std::make_unique<FileOptionsProvider>(Global, Defaults, Overrides);
}

/// Makes the paths of a finding and of its fixes absolute (compile databases
/// name files relative to their build directory), so fixes and reports do not
/// depend on the directory torch-syncfree runs in.
void makePathsAbsolute(ClangTidyError &Error) {
  auto Absolute = [&](StringRef Path) -> std::string {
    if (Path.empty() || sys::path::is_absolute(Path))
      return Path.str();
    SmallString<256> Joined(Error.BuildDirectory);
    sys::path::append(Joined, Path);
    sys::path::remove_dots(Joined, /*remove_dot_dot=*/true);
    return std::string(Joined);
  };
  Error.Message.FilePath = Absolute(Error.Message.FilePath);
  llvm::StringMap<tooling::Replacements> Fixes;
  for (const auto &Entry : Error.Message.Fix) {
    tooling::Replacements &Target = Fixes[Absolute(Entry.first())];
    for (const tooling::Replacement &R : Entry.second)
      llvm::consumeError(Target.add(tooling::Replacement(
          Absolute(R.getFilePath()), R.getOffset(), R.getLength(), R.getReplacementText())));
  }
  Error.Message.Fix = std::move(Fixes);
  for (tooling::DiagnosticMessage &Note : Error.Notes)
    Note.FilePath = Absolute(Note.FilePath);
}

} // namespace

int main(int argc, const char **argv) {
  InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(Category);

  // Everything after `--` is the compile command for the listed sources.
  std::string FixedError;
  std::unique_ptr<tooling::CompilationDatabase> Fixed =
      tooling::FixedCompilationDatabase::loadFromCommandLine(argc, argv, FixedError);
  std::string ParseErrors;
  raw_string_ostream ParseErrorStream(ParseErrors);
  if (!cl::ParseCommandLineOptions(argc, argv, "torch-syncfree: find and fix host-device "
                                   "synchronisations in LibTorch code\n",
                                   &ParseErrorStream)) {
    StringRef First = StringRef(ParseErrors).split('\n').first;
    First.consume_front(argv[0]);
    First = First.ltrim(": ");
    return usageError(First.empty() ? "invalid command line" : First);
  }

  if (Format != "text" && Format != "json")
    return usageError("unknown --format '" + Format + "' (expected text or json)");

  if (ListChecks) {
    auto Provider = makeOptionsProvider();
    ClangTidyOptions Options = Provider->getOptions(Sources.empty() ? "." : Sources.front());
    std::vector<std::string> Enabled = getCheckNames(Options, false, false);
    outs() << "Enabled checks:\n";
    for (const std::string &Name : Enabled)
      if (const auto *Info = torch_syncfree::findCheck(Name))
        outs() << "    " << Info->Name << "  " << Info->Summary << "\n";
    return ExitClean;
  }

  std::unique_ptr<tooling::CompilationDatabase> Database;
  if (!BuildPath.empty()) {
    std::string Error;
    SmallString<256> JsonPath(BuildPath);
    sys::path::append(JsonPath, "compile_commands.json");
    if (!sys::fs::exists(JsonPath))
      return usageError("no compile_commands.json in '" + BuildPath + "'");
    Database = tooling::JSONCompilationDatabase::loadFromFile(
        JsonPath, Error, tooling::JSONCommandLineSyntax::AutoDetect);
    if (!Database)
      return usageError("cannot read " + JsonPath + ": " + StringRef(Error).trim());
  } else if (Fixed) {
    Database = std::move(Fixed);
  } else {
    if (Sources.empty())
      return usageError("no input files (give sources, or -p <build dir>)");
    std::string Error;
    Database = tooling::CompilationDatabase::autoDetectFromSource(Sources.front(), Error);
    if (!Database)
      return usageError("no compile command for '" + Sources.front() +
                        "': give flags after '--' or a build directory with -p");
  }
  auto Compilations = std::make_unique<SanitizedDatabase>(std::move(Database));

  std::vector<std::string> Files(Sources.begin(), Sources.end());
  if (Files.empty())
    Files = Compilations->getAllFiles();
  if (Files.empty())
    return usageError("the compilation database lists no files");
  for (std::string &File : Files) {
    if (!sys::fs::exists(File))
      return usageError("no such file: '" + File + "'");
    SmallString<256> Absolute(File);
    sys::fs::make_absolute(Absolute);
    sys::path::remove_dots(Absolute, /*remove_dot_dot=*/true);
    File = std::string(Absolute);
  }

  auto Started = std::chrono::system_clock::now();
  auto BaseFS = makeIntrusiveRefCnt<vfs::OverlayFileSystem>(vfs::getRealFileSystem());
  std::vector<ClangTidyError> AllFindings;
  bool CompileFailed = false;
  std::set<std::tuple<std::string, unsigned, std::string>> Seen;
  for (const std::string &File : Files) {
    ClangTidyContext Context(makeOptionsProvider());
    std::vector<ClangTidyError> Errors =
        runClangTidy(Context, *Compilations, {File}, BaseFS, /*ApplyAnyFix=*/false,
                     /*EnableCheckProfile=*/false, "", /*Quiet=*/true);
    std::vector<ClangTidyError> TUFindings;
    bool TUFailed = false;
    for (ClangTidyError &Error : Errors) {
      makePathsAbsolute(Error);
      if (Error.DiagLevel == ClangTidyError::Error &&
          StringRef(Error.DiagnosticName).starts_with("clang-diagnostic")) {
        if (!TUFailed)
          errs() << "torch-syncfree: error: " << File
                 << " does not compile: " << Error.Message.FilePath << ": "
                 << Error.Message.Message << "\n";
        TUFailed = true;
        continue;
      }
      if (!StringRef(Error.DiagnosticName).starts_with("torch-sync-"))
        continue;
      // A header seen from many translation units is reported once.
      if (!Seen.insert({Error.Message.FilePath, Error.Message.FileOffset,
                        Error.DiagnosticName})
               .second)
        continue;
      TUFindings.push_back(std::move(Error));
    }
    llvm::stable_sort(TUFindings, [](const ClangTidyError &A, const ClangTidyError &B) {
      return std::tie(A.Message.FilePath, A.Message.FileOffset) <
             std::tie(B.Message.FilePath, B.Message.FileOffset);
    });
    CompileFailed |= TUFailed;
    if (TUFailed && !FixErrors)
      for (ClangTidyError &Error : TUFindings)
        Error.Message.Fix.clear();
    if (Format == "text" && !TUFindings.empty()) {
      unsigned WarningsAsErrors = 0;
      handleErrors(TUFindings, Context, FB_NoFix, WarningsAsErrors, BaseFS);
    }
    for (ClangTidyError &Error : TUFindings)
      AllFindings.push_back(std::move(Error));
  }

  llvm::stable_sort(AllFindings, [](const ClangTidyError &A, const ClangTidyError &B) {
    return std::tie(A.Message.FilePath, A.Message.FileOffset) <
           std::tie(B.Message.FilePath, B.Message.FileOffset);
  });
  if (Format == "json")
    torch_syncfree::printJson(torch_syncfree::collectFindings(AllFindings), outs());

  if (!ExportFixes.empty()) {
    std::string YAML;
    raw_string_ostream OS(YAML);
    exportReplacements(Files.size() == 1 ? Files.front() : "", AllFindings, OS);
    std::string Failure = torch_syncfree::writeFileAtomically(ExportFixes, YAML);
    if (!Failure.empty())
      return usageError(Failure);
  }

  if (ApplyFixes) {
    auto Summary = torch_syncfree::applyFixes(AllFindings, Started, DryRun, outs(), errs());
    errs() << "torch-syncfree: " << (DryRun ? "would apply " : "applied ") << Summary.Applied
           << " fix(es) to " << Summary.FilesChanged << " file(s)";
    if (Summary.Skipped)
      errs() << ", skipped " << Summary.Skipped;
    errs() << "\n";
    if (Summary.WriteFailed)
      return ExitUsage;
  }

  if (CompileFailed)
    return ExitUsage;
  return AllFindings.empty() ? ExitClean : ExitFindings;
}
