#include "CompileCommandSanitizer.h"
#include "InputFiles.h"
#include <functional>
#include "llvm/ADT/StringSwitch.h"
#include <optional>
#include <unistd.h>
#include "clang/Lex/PreprocessorOptions.h"

#include "clang/Options/Options.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Option/Arg.h"
#include "llvm/Option/ArgList.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdlib>
#include <mutex>
#include <set>

using namespace llvm;
using namespace clang;
namespace opts = clang::options;

#ifndef TORCH_SYNCFREE_CLANG_RESOURCE_DIR
#define TORCH_SYNCFREE_CLANG_RESOURCE_DIR ""
#endif
#ifndef TORCH_SYNCFREE_CLANG_BINDIR
#define TORCH_SYNCFREE_CLANG_BINDIR ""
#endif

namespace torch_syncfree {

ToolchainPaths &ToolchainPaths::get() {
  // Found by CMake (`clang++-22 -print-resource-dir`); overridable with
  // --resource-dir. The tool's own clang is not installed next to the
  // binary, so clang's "resource dir beside the executable" rule would miss
  // the builtin and cuda_wrappers headers.
  static ToolchainPaths Paths = [] {
    ToolchainPaths P;
    P.ResourceDir = TORCH_SYNCFREE_CLANG_RESOURCE_DIR;
    SmallString<256> Driver(StringRef(TORCH_SYNCFREE_CLANG_BINDIR));
    sys::path::append(Driver, "clang++");
    P.ClangDriver = std::string(Driver);
    return P;
  }();
  return Paths;
}

namespace {

constexpr const char *LoadsCode = "loads code";
constexpr const char *RawFrontend =
    "hands options to clang's frontend unchecked (they can load code or write files)";
constexpr const char *WritesFiles = "writes files";
constexpr const char *NamesConfig = "names a configuration file";
constexpr const char *RunsProgram = "runs a program";
constexpr const char *ReadsCompiled = "reads precompiled code";
constexpr const char *SpecialReader =
    "hands a file to one of clang's special readers (profiles, sanitizer and XRay lists, "
    "module files) or takes a value torch-syncfree does not know";
constexpr const char *LiftsBound = "lifts one of clang's bounds above its default";

/// The -f options with a value that are kept: they shape parsing and name no
/// file. An allow-list: any other -f option with a value (a profile, a
/// sanitizer or XRay list, a module file, one clang adds tomorrow) is dropped,
/// since a value can name a file that a special reader parses (and crashed or
/// printed from). Flags without a value (-fno-exceptions) are kept.
bool allowedValueOption(StringRef Name) {
  static const char *const Allowed[] = {
      "fconstexpr-depth=", "fconstexpr-steps=", "fconstexpr-backtrace-limit=",
      "ftemplate-depth=", "ftemplate-depth-", "ftemplate-backtrace-limit=", "fbracket-depth=",
      "fmacro-backtrace-limit=", "fspell-checking-limit=", "ferror-limit=", "fmessage-length=",
      "ftabstop=", "fvisibility=", "fms-compatibility-version=", "fmsc-version=",
      "fgnuc-version=", "ffp-contract=", "ffp-model=", "ffp-eval-method=", "fexcess-precision=",
      "fdenormal-fp-math=", "fcf-protection=", "fdiagnostics-color=", "fdiagnostics-format=",
      "fdiagnostics-show-category=", "fsanitize=", "fno-sanitize=", "fsanitize-recover=",
      "fno-sanitize-recover=", "fsanitize-trap=", "fno-sanitize-trap=", "fopenmp=",
      "fopenmp-version=", "fopenmp-targets=", "fpack-struct=", "fmax-type-align=",
      "fwchar-type=", "finput-charset=", "fexec-charset=", "fextend-arguments=",
      "fgpu-default-stream=", "fcomplex-arithmetic=",
      "fstrict-flex-arrays=", "fzero-call-used-regs=", "fms-runtime-lib=", "fdebug-prefix-map=",
      "fmacro-prefix-map=", "ffile-prefix-map=", "fcoverage-prefix-map=", "fvisibility-ms-compat",
      "fchar8_t", "fexperimental-relative-c++-abi-vtables", "fuse-ld=", "fembed-bitcode=",
      "fdebug-compilation-dir=", "ffp-exception-behavior=", "frounding-math",
      "fstack-protector", "ftrivial-auto-var-init=", "fpatchable-function-entry=",
      "fcf-runtime-abi=", "fsanitize-address-use-after-return=", "fsanitize-memory-track-origins=",
      "fprofile-update=", "falign-functions=", "fsplit-lto-unit", "flto=", "flto-jobs=",
      "fveclib=", "fsycl-targets="};
  for (const char *A : Allowed)
    if (Name == A)
      return true;
  return false;
}

/// clang's defaults for the bounds a repository could lift to make one TU
/// run for hours (-fconstexpr-steps=4294967295): lowering is fine.
std::optional<uint64_t> clangDefaultBound(StringRef Name) {
  return llvm::StringSwitch<std::optional<uint64_t>>(Name)
      .Case("fconstexpr-steps=", 1048576)
      .Case("fconstexpr-depth=", 512)
      .Cases({"ftemplate-depth=", "ftemplate-depth-"}, 1024)
      .Case("fbracket-depth=", 256)
      .Default(std::nullopt);
}

/// The include-path, macro and preprocessor options kept (by their unaliased
/// names): an allow-list over the driver's -I, -i and preprocessor groups, whose
/// other members read compiled or special files (-fmodule-file=, a committed
/// .pcm deserialised; -fprebuilt-module-path=; -ivfsoverlay, whose missing file
/// crashed clang; -iapinotes-modules, another YAML reader) or write files.
bool allowedSearchOption(StringRef Name) {
  static const char *const Allowed[] = {
      "I", "I-", "D", "U", "C", "CC", "P", "undef", "embed-dir=", "nobuiltininc", "nocudainc",
      "nogpuinc", "nohipwrapperinc", "nostdinc", "nostdinc++", "nostdlibinc", "include",
      "imacros", "isystem", "isystem-after", "idirafter", "iquote", "iprefix", "iwithprefix",
      "iwithprefixbefore", "iwithsysroot", "isysroot", "cxx-isystem", "stdlib++-isystem",
      "ibuiltininc", "iframework", "iframeworkwithsysroot", "system-header-prefix=",
      "no-system-header-prefix=", "offload-inc", "no-offload-inc"};
  for (const char *A : Allowed)
    if (Name == A)
      return true;
  return false;
}

/// -f flags without a value that make clang read module maps, module files or
/// API notes (YAML) from the repository's directories.
bool readsModulesOrApiNotes(StringRef Name) {
  return Name.starts_with("fmodule") || Name.starts_with("fcxx-modules") ||
         Name.starts_with("fimplicit-module-maps") || Name.starts_with("fbuiltin-module-map") ||
         Name.starts_with("fapinotes") || Name.starts_with("fprebuilt-");
}

/// The languages -x may name: source and header languages. Others make clang
/// read the input as a compiled file (`-x ast`, `-x ir`, `-x pcm`).
bool allowedLanguage(StringRef Language) {
  static const char *const Allowed[] = {
      "c", "c++", "cuda", "hip", "c-header", "c++-header", "c++-user-header",
      "c++-system-header", "objective-c", "objective-c++", "objective-c-header",
      "objective-c++-header", "cl", "cpp-output", "c++-cpp-output"};
  for (const char *A : Allowed)
    if (Language == A)
      return true;
  return false;
}

/// Why an option must not reach clang, or nullptr when it may (subject to
/// the keep list). Decided on the driver's own parse of the option.
const char *dangerOf(const opt::Option &O, const opt::Arg &A) {
  StringRef Name = O.getName();
  switch (O.getID()) {
  // Options handed to the frontend or LLVM unparsed can do anything.
  case opts::OPT_Xclang:
  case opts::OPT_mllvm:
  case opts::OPT_Xpreprocessor:
  case opts::OPT_Wp_COMMA:
    return RawFrontend;
  case opts::OPT_fplugin_EQ:
  case opts::OPT_fpass_plugin_EQ:
  case opts::OPT_fplugin_arg:
  case opts::OPT_add_plugin:
  case opts::OPT_load:
  case opts::OPT_hipspv_pass_plugin_EQ:
    return LoadsCode;
  case opts::OPT_config:
  case opts::OPT_config_system_dir_EQ:
  case opts::OPT_config_user_dir_EQ:
    return NamesConfig;
  case opts::OPT_ptxas_path_EQ:
  case opts::OPT_nvptx_arch_tool_EQ:
  case opts::OPT_amdgpu_arch_tool_EQ:
  case opts::OPT_B:
  case opts::OPT_ccc_:
  case opts::OPT_ccc_gcc_name:
  case opts::OPT_ccc_install_dir:
    return RunsProgram;
  case opts::OPT_offload_arch_EQ:
  case opts::OPT_cuda_gpu_arch_EQ:
    // "native" makes the driver run offload-arch / nvptx-arch to ask the GPU.
    for (const char *Value : A.getValues())
      if (StringRef(Value) == "native")
        return RunsProgram;
    return nullptr;
  case opts::OPT__serialize_diags:
  case opts::OPT_diagnostic_serialized_file:
  case opts::OPT_header_include_file:
  case opts::OPT_module_dependency_dir:
  case opts::OPT_dependency_file:
  case opts::OPT_dependency_dot:
  case opts::OPT_fcrash_diagnostics_dir:
  case opts::OPT_fmodules_cache_path:
  case opts::OPT_fmodules:
  case opts::OPT_fcxx_modules:
  case opts::OPT_fimplicit_modules:
  case opts::OPT_fbuild_session_file:
    return WritesFiles;
  case opts::OPT_include_pch:
    return ReadsCompiled;
  default:
    break;
  }
  if (O.matches(opts::OPT_M_Group))
    return WritesFiles;
  if ((O.matches(opts::OPT_I_Group) || O.matches(opts::OPT_clang_i_Group) ||
       O.matches(opts::OPT_i_Group) || O.matches(opts::OPT_Preprocessor_Group)) &&
      !allowedSearchOption(Name))
    return SpecialReader;
  if (O.getID() == opts::OPT_x && A.getNumValues() == 1 && !allowedLanguage(A.getValue()))
    return ReadsCompiled;
  if ((O.matches(opts::OPT_f_Group) || O.matches(opts::OPT_f_clang_Group)) &&
      O.getKind() == opt::Option::FlagClass && readsModulesOrApiNotes(Name))
    return SpecialReader;
  if (Name.starts_with("ftime-trace") || Name.starts_with("fsave-optimization-record") ||
      Name.starts_with("fproc-stat-report") || Name.starts_with("save-stats") ||
      Name.starts_with("stats-file") || Name.starts_with("save-temps") ||
      Name.starts_with("fcrash-diagnostics") || Name.starts_with("foptimization-record-file") ||
      Name.starts_with("fprofile-instr-generate") || Name.starts_with("fmodules-cache"))
    return WritesFiles;
  if (Name.starts_with("Xclang"))
    return RawFrontend;
  if (Name.starts_with("fplugin") || Name.starts_with("fpass-plugin"))
    return LoadsCode;
  // -f options with a value: an allow-list (allowedValueOption).
  if ((O.matches(opts::OPT_f_Group) || O.matches(opts::OPT_f_clang_Group)) &&
      O.getKind() != opt::Option::FlagClass) {
    if (!allowedValueOption(Name))
      return SpecialReader;
    if (std::optional<uint64_t> Default = clangDefaultBound(Name)) {
      uint64_t Value = 0;
      for (const char *V : A.getValues())
        if (StringRef(V).getAsInteger(10, Value) || Value > *Default)
          return LiftsBound;
    }
  }
  return nullptr;
}

/// Options kept: those that change how the source is preprocessed or parsed.
bool affectsParsing(const opt::Option &O) {
  switch (O.getID()) {
  case opts::OPT_INPUT:
  case opts::OPT__DASH_DASH: // "-- <inputs>" (clang's interpolated commands end so)
  case opts::OPT_x:
  case opts::OPT_target:
  case opts::OPT_target_legacy_spelling:
  case opts::OPT_isysroot:
  case opts::OPT__sysroot_EQ:
  case opts::OPT__sysroot:
  case opts::OPT_gcc_toolchain:
  case opts::OPT_gcc_install_dir_EQ:
  case opts::OPT_pthread:
  case opts::OPT_pthreads:
  case opts::OPT_stdlib_EQ:
  case opts::OPT_nostdinc:
  case opts::OPT_nostdlibinc:
  case opts::OPT_nostdincxx:
  case opts::OPT_w:
  case opts::OPT_pedantic:
  case opts::OPT_pedantic_errors:
  case opts::OPT_ansi:
  case opts::OPT_fopenmp:
    return true;
  default:
    break;
  }
  return O.matches(opts::OPT_Preprocessor_Group) || O.matches(opts::OPT_I_Group) ||
         O.matches(opts::OPT_clang_i_Group) || O.matches(opts::OPT_i_Group) ||
         O.matches(opts::OPT_W_Group) || O.matches(opts::OPT_f_Group) ||
         O.matches(opts::OPT_f_clang_Group) || O.matches(opts::OPT_m_Group) ||
         O.matches(opts::OPT_O_Group) || O.matches(opts::OPT_cuda_Group) ||
         O.matches(opts::OPT_offload_Group) || O.matches(opts::OPT_hip_Group) ||
         O.getID() == opts::OPT_std_EQ;
}

/// Driver mode of argv[0]: `clang` for C compilers, `clang++` otherwise.
std::string driverFor(StringRef Argv0) {
  std::string Driver = ToolchainPaths::get().ClangDriver;
  // gcc, cc, clang, gcc-12, clang-22, x86_64-linux-gnu-gcc-12: C drivers;
  // anything else (c++, g++, clang++, nvcc, "clang-tool") is C++.
  StringRef Base = sys::path::filename(Argv0);
  StringRef Stem = Base;
  while (!Stem.empty() && (llvm::isDigit(Stem.back()) || Stem.back() == '.' || Stem.back() == '-'))
    Stem = Stem.drop_back();
  bool IsCCompiler = Stem == "gcc" || Stem == "cc" || Stem == "clang" || Stem.ends_with("-gcc") ||
                     Stem.ends_with("-cc") || Stem.ends_with("-clang");
  if (IsCCompiler && StringRef(Driver).ends_with("clang++"))
    Driver.resize(Driver.size() - 2);
  return Driver;
}

std::vector<std::string> sanitizeArgs(ArrayRef<const char *> Args, SanitizerReport &Report,
                                      ArrayRef<std::string> ResponseFileOf = {}) {
  const opt::OptTable &Table = getDriverOptTable();
  unsigned MissingIndex = 0, MissingCount = 0;
  opt::InputArgList Parsed = Table.ParseArgs(Args, MissingIndex, MissingCount,
                                             llvm::opt::Visibility(opts::ClangOption));
  // What a response file contributes must be options the driver knows: a
  // repository can name any readable file as one (@/home/ci/.git-credentials),
  // and an input or unknown option taken from it would be quoted by clang's
  // diagnostics ("no such file or directory: '<its first token>'").
  auto FromResponseFile = [&](const opt::Arg *A) -> StringRef {
    unsigned Index = A->getIndex();
    return Index < ResponseFileOf.size() ? StringRef(ResponseFileOf[Index]) : StringRef();
  };
  for (const opt::Arg *A : Parsed) {
    StringRef File = FromResponseFile(A);
    unsigned ID = A->getOption().getID();
    if (!File.empty() && (ID == opts::OPT_INPUT || ID == opts::OPT_UNKNOWN)) {
      Report.Error = "the response file '" + printable(File) +
                     "' holds an argument that is not a compiler option (not shown)";
      return {};
    }
  }
  if (!ResponseFileOf.empty() && MissingCount && MissingIndex < ResponseFileOf.size() &&
      !ResponseFileOf[MissingIndex].empty()) {
    Report.Error = "the response file '" + printable(ResponseFileOf[MissingIndex]) +
                   "' ends with an option that lacks its value";
    return {};
  }
  std::set<std::string> KindsSeen;
  for (const auto &Entry : Report.Dropped)
    KindsSeen.insert(Entry.first);
  std::vector<std::string> Kept;
  for (const opt::Arg *A : Parsed) {
    const opt::Option O = A->getOption().getUnaliasedOption();
    if (const char *Kind = dangerOf(O, *A)) {
      // An option read from a response file is named, not quoted: its value is
      // a file's content.
      if (KindsSeen.insert(Kind).second)
        Report.Dropped.push_back(
            {Kind, FromResponseFile(A).empty()
                       ? printable(A->getAsString(Parsed))
                       : A->getSpelling().str() + "...' (from the response file '" +
                             printable(FromResponseFile(A))});
      continue;
    }
    if (!affectsParsing(O))
      continue; // outputs, linker and optimiser options: irrelevant to parsing
    if (O.getID() == opts::OPT__DASH_DASH &&
        llvm::none_of(A->getValues(), [](const char *V) { return V[0] == '-'; })) {
      // "-- <inputs>" as plain inputs: clang-tidy appends ExtraArgs at the very
      // end of the command, where "--" would make them file names.
      for (const char *V : A->getValues())
        Kept.emplace_back(V);
      continue;
    }
    opt::ArgStringList Rendered;
    A->render(Parsed, Rendered);
    // -D X -> -DX: the joined spelling users write (and --removed-arg names).
    if (O.getKind() == opt::Option::JoinedOrSeparateClass && Rendered.size() == 2) {
      Kept.push_back(std::string(Rendered[0]) + Rendered[1]);
      continue;
    }
    for (const char *S : Rendered)
      Kept.emplace_back(S);
  }
  return Kept;
}

/// Expands "@file" arguments (GNU quoting, relative to Directory, nested at
/// most 8 deep, at most 100000 arguments in all), recording for each
/// argument the response file it came from. Hand-written around
/// cl::TokenizeGNUCommandLine: cl::ExpansionContext reads any path (a FIFO
/// blocks, /dev/zero exhausts memory) and cannot say where an argument came from.
bool expandResponseFiles(ArrayRef<std::string> Args, StringRef Directory, StringSaver &Saver,
                         SmallVectorImpl<const char *> &Argv,
                         std::vector<std::string> &ResponseFileOf, SanitizerReport &Report) {
  constexpr unsigned MaxDepth = 8;
  constexpr size_t MaxArguments = 100000;
  std::function<bool(StringRef, StringRef, StringRef, unsigned)> Expand =
      [&](StringRef Arg, StringRef From, StringRef Base, unsigned Depth) -> bool {
    if (Argv.size() >= MaxArguments) {
      Report.Error = "the compile command has more than 100000 arguments";
      return false;
    }
    if (!Arg.starts_with("@") || Arg.size() == 1) {
      Argv.push_back(Saver.save(Arg).data());
      ResponseFileOf.push_back(From.str());
      return true;
    }
    if (Depth >= MaxDepth) {
      Report.Error = "response files nested more than 8 deep";
      return false;
    }
    SmallString<256> Path(Arg.drop_front());
    if (!sys::path::is_absolute(Path))
      sys::path::make_absolute(Base, Path);
    std::string Why;
    std::unique_ptr<MemoryBuffer> Buffer = readInputFile(Path, MaxConfigBytes, Why);
    if (!Buffer) {
      Report.Error = "cannot read the response file '" + printable(Path) + "': " + Why;
      return false;
    }
    SmallVector<const char *, 64> Tokens;
    cl::TokenizeGNUCommandLine(Buffer->getBuffer(), Saver, Tokens);
    // Nested response files are relative to the command's directory too.
    std::string Own = std::string(Path);
    for (const char *Token : Tokens)
      if (Token && !Expand(Token, Own, Base, Depth + 1))
        return false;
    return true;
  };
  for (const std::string &Arg : Args)
    if (!Expand(Arg, "", Directory, 0))
      return false;
  return true;
}

} // namespace

std::vector<std::string> sanitizeCommandLine(const std::vector<std::string> &CommandLine,
                                             StringRef Directory, SanitizerReport &Report) {
  if (CommandLine.empty()) {
    Report.Error = "empty compile command";
    return {};
  }
  // Response files are expanded here, relative to the command's directory, so
  // that what they contain goes through the same filter; each is read through
  // the bounded reader (InputFiles.h): a regular file of at most 1 MiB, so
  // @/dev/stdin, a FIFO or @/dev/zero is an error, never a read.
  BumpPtrAllocator Alloc;
  StringSaver Saver(Alloc);
  SmallVector<const char *, 64> Argv;
  std::vector<std::string> ResponseFileOf; // per Argv entry: the file it came from, or ""
  if (!expandResponseFiles(ArrayRef<std::string>(CommandLine).drop_front(), Directory, Saver,
                           Argv, ResponseFileOf, Report))
    return {};
  std::vector<std::string> Result;
  Result.push_back(driverFor(CommandLine.front()));
  // No clang++.cfg beside the driver or in the configuration directories.
  Result.push_back("--no-default-config");
  // Before the options: a command may end with "-- <inputs>".
  if (!ToolchainPaths::get().ResourceDir.empty())
    Result.push_back("-resource-dir=" + ToolchainPaths::get().ResourceDir);
  std::vector<std::string> Kept = sanitizeArgs(Argv, Report, ResponseFileOf);
  if (!Report.Error.empty())
    return {};
  for (std::string &Arg : Kept)
    Result.push_back(std::move(Arg));
  return Result;
}

std::vector<std::string> sanitizeExtraArgs(const std::vector<std::string> &Args,
                                           SanitizerReport &Report) {
  SmallVector<const char *, 16> Argv;
  for (const std::string &Arg : Args) {
    if (StringRef(Arg).starts_with("@")) { // no response files from configuration
      Report.Dropped.push_back({"names a response file", Arg});
      continue;
    }
    Argv.push_back(Arg.c_str());
  }
  return sanitizeArgs(Argv, Report);
}

void warnDropped(const SanitizerReport &Report, StringRef Origin) {
  // One warning per kind per run: a database repeats its flags in every entry.
  static std::mutex Mutex;
  static std::set<std::string> Warned;
  std::lock_guard<std::mutex> Lock(Mutex);
  for (const auto &[Kind, Option] : Report.Dropped)
    if (Warned.insert(Kind).second)
      errs() << "torch-syncfree: warning: dropped '" << Option << "' from " << Origin
             << ": it " << Kind << "; such options are never passed to clang (no further "
             << "warning for them)\n";
}

std::vector<tooling::CompileCommand> SanitizedDatabase::getCompileCommands(StringRef File) const {
  std::vector<tooling::CompileCommand> Commands = Inner->getCompileCommands(File);
  std::vector<tooling::CompileCommand> Usable;
  for (tooling::CompileCommand &Command : Commands) {
    SanitizerReport Report;
    if (!sys::fs::is_directory(Command.Directory))
      continue;
    Command.CommandLine = sanitizeCommandLine(Command.CommandLine, Command.Directory, Report);
    warnDropped(Report, "the compile command of " + File.str());
    if (!Report.Error.empty())
      continue;
    llvm::erase_if(Command.CommandLine, [&](const std::string &Arg) {
      return &Arg != &Command.CommandLine.front() && llvm::is_contained(RemovedArgs, Arg);
    });
    if (getenv("TORCH_SYNCFREE_SHOW_COMMANDS")) { // debugging aid: what clang is given
      errs() << "torch-syncfree: command for " << File << ":";
      for (const std::string &Arg : Command.CommandLine)
        errs() << " " << Arg;
      errs() << "\n";
    }
    Usable.push_back(std::move(Command));
  }
  return Usable;
}

std::vector<tooling::CompileCommand> SanitizedDatabase::getAllCompileCommands() const {
  std::vector<tooling::CompileCommand> All;
  for (const std::string &File : getAllFiles())
    for (tooling::CompileCommand &Command : getCompileCommands(File))
      All.push_back(std::move(Command));
  return All;
}

std::string SanitizedDatabase::commandError(StringRef File) const {
  std::vector<tooling::CompileCommand> Commands = Inner->getCompileCommands(File);
  if (Commands.empty())
    return "no compile command for " + File.str();
  for (const tooling::CompileCommand &Command : Commands) {
    if (!sys::fs::is_directory(Command.Directory))
      return "the directory of its compile command does not exist: '" + Command.Directory + "'";
    // ClangTool would chdir there and abort the process (LLVM ERROR) on failure.
    if (::access(Command.Directory.c_str(), X_OK) != 0)
      return "the directory of its compile command cannot be entered: '" + Command.Directory + "'";
    SanitizerReport Report;
    sanitizeCommandLine(Command.CommandLine, Command.Directory, Report);
    if (!Report.Error.empty())
      return Report.Error;
  }
  return "";
}

namespace {
class SanitizingOptionsProvider : public tidy::ClangTidyOptionsProvider {
public:
  SanitizingOptionsProvider(std::unique_ptr<tidy::ClangTidyOptionsProvider> Inner,
                            std::vector<std::string> RemovedArgs)
      : Inner(std::move(Inner)), RemovedArgs(std::move(RemovedArgs)) {}
  const tidy::ClangTidyGlobalOptions &getGlobalOptions() override {
    return Inner->getGlobalOptions();
  }
  std::vector<OptionsSource> getRawOptions(StringRef FileName) override {
    std::vector<OptionsSource> Sources = Inner->getRawOptions(FileName);
    for (OptionsSource &Source : Sources)
      for (std::optional<tidy::ClangTidyOptions::ArgList> *List :
           {&Source.first.ExtraArgs, &Source.first.ExtraArgsBefore})
        if (*List) {
          SanitizerReport Report;
          **List = sanitizeExtraArgs(**List, Report);
          llvm::erase_if(**List, [&](const std::string &Arg) {
            return llvm::is_contained(RemovedArgs, Arg);
          });
          warnDropped(Report, "the ExtraArgs of " + Source.second);
        }
    return Sources;
  }

private:
  std::unique_ptr<tidy::ClangTidyOptionsProvider> Inner;
  std::vector<std::string> RemovedArgs;
};
} // namespace

std::unique_ptr<tidy::ClangTidyOptionsProvider>
sanitizeOptionsProvider(std::unique_ptr<tidy::ClangTidyOptionsProvider> Inner,
                        std::vector<std::string> RemovedArgs) {
  return std::make_unique<SanitizingOptionsProvider>(std::move(Inner), std::move(RemovedArgs));
}

void scrubCompilerEnvironment() {
  for (const char *Name : {"CCC_OVERRIDE_OPTIONS", "CLANG_CONFIG_FILE_SYSTEM_DIR",
                           "CLANG_CONFIG_FILE_USER_DIR", "CC_PRINT_HEADERS_FILE",
                           "CC_LOG_DIAGNOSTICS_FILE", "CC_PRINT_OPTIONS_FILE",
                           "CC_PRINT_PROC_STAT_FILE", "CLANG_MODULE_CACHE_PATH"})
    if (const char *Value = getenv(Name)) {
      errs() << "torch-syncfree: warning: ignoring " << Name << "='" << Value
             << "' (the environment cannot change the analysed command)\n";
      unsetenv(Name);
    }
}

void includeHeaderInsteadOfProbedPch(clang::CompilerInvocation &Invocation) {
  clang::PreprocessorOptions &PP = Invocation.getPreprocessorOpts();
  if (PP.ImplicitPCHInclude.empty())
    return;
  llvm::StringRef Header = PP.ImplicitPCHInclude;
  // The driver probes only for the first -include, so X goes first.
  if (Header.consume_back(".pch") || Header.consume_back(".gch"))
    PP.Includes.insert(PP.Includes.begin(), Header.str());
  PP.ImplicitPCHInclude.clear();
}

} // namespace torch_syncfree
