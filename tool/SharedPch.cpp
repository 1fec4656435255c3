#include "SharedPch.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "CompileCommandSanitizer.h"
#include "TextEncoding.h"
#include "CacheAuth.h"

#include "SafeFileSystem.h"

#include "clang/Basic/Version.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Frontend/Utils.h"
#include "clang/Lex/DependencyDirectivesScanner.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include <set>
#include <thread>
#include <unistd.h>

using namespace clang;
using namespace clang::tooling;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace torch_syncfree {

/// Whether Text holds only blanks and comments (clang's raw lexer finds no token).
static bool onlyBlanksAndComments(StringRef Text) {
  std::string Copy = Text.str(); // the lexer reads up to a terminating NUL
  LangOptions Lang;
  Lang.CPlusPlus = Lang.CPlusPlus17 = Lang.LineComment = true;
  Lexer Raw(SourceLocation(), Lang, Copy.data(), Copy.data(), Copy.data() + Copy.size());
  Token First;
  Raw.LexFromRawLexer(First);
  return First.is(tok::eof);
}

/// The leading #include block of Text (a main file, or with InHeader a project
/// header it includes first), appended to Block. The directives and their
/// offsets are clang's dependency-directives scanner's; it drops the code
/// between directives, so the raw lexer says whether anything but blanks and
/// comments lies between two of them (the block ends there). A quoted include
/// is followed into the file clang would open: beside its includer, else in
/// the -iquote, then the -I directories (\p QuoteDirs, in order); its own
/// leading block continues the PCH's (the common layout: `model.cpp` includes
/// "model.h" first, which includes <torch/torch.h>); the block ends there,
/// since what follows is the project's own code. In a header, `#pragma once`
/// or an include guard (`#ifndef X` + `#define X`) may come first: a guard
/// macro is the only definition before the shared headers, and no library
/// tests a project's guard name.
static void appendLeadingIncludes(StringRef Text, StringRef FileDir, ArrayRef<std::string> QuoteDirs,
                                  bool InHeader, unsigned Depth, std::string &Block) {
  using namespace clang::dependency_directives_scan;
  SmallVector<dependency_directives_scan::Token, 64> Tokens;
  SmallVector<Directive, 16> Directives;
  if (scanSourceForDependencyDirectives(Text, Tokens, Directives))
    return; // the scanner could not read it: nothing to share
  // A directive's tokens without its end-of-directive token, and where it ends.
  auto Spelled = [](const Directive &D) {
    ArrayRef<dependency_directives_scan::Token> T = D.Tokens;
    while (!T.empty() && T.back().is(tok::eod))
      T = T.drop_back();
    return T;
  };
  auto EndOf = [&](const Directive &D) {
    ArrayRef<dependency_directives_scan::Token> T = Spelled(D);
    return T.empty() ? 0u : T.back().getEnd();
  };
  auto Word = [&](const dependency_directives_scan::Token &T) { return Text.substr(T.Offset, T.Length); };
  size_t Next = 0, ReadUpTo = 0;
  // Directive Next follows what was read with only blanks and comments between.
  auto Adjacent = [&]() {
    return Next < Directives.size() && !Spelled(Directives[Next]).empty() &&
           onlyBlanksAndComments(Text.slice(ReadUpTo, Spelled(Directives[Next]).front().Offset));
  };
  if (InHeader && Adjacent()) {
    const Directive &First = Directives[Next];
    if (First.Kind == pp_pragma_once) {
      ReadUpTo = EndOf(First), ++Next;
    } else if (First.Kind == pp_ifndef && Spelled(First).size() == 3) {
      StringRef Guard = Word(Spelled(First)[2]);
      ReadUpTo = EndOf(First), ++Next;
      if (!Adjacent() || Directives[Next].Kind != pp_define || Spelled(Directives[Next]).size() != 3 ||
          Word(Spelled(Directives[Next])[2]) != Guard)
        return;
      ReadUpTo = EndOf(Directives[Next]), ++Next;
    }
  }
  for (; Adjacent() && Directives[Next].Kind == pp_include; ReadUpTo = EndOf(Directives[Next]), ++Next) {
    // `# include <name>` or `"name"`, and nothing after it on the line.
    ArrayRef<dependency_directives_scan::Token> T = Spelled(Directives[Next]);
    if (T.size() < 3)
      break;
    StringRef Written = Text.slice(T[1].getEnd(), T.back().getEnd()).trim();
    if (Written.size() < 2 ||
        !((Written.front() == '<' && Written.back() == '>') ||
          (Written.front() == '"' && Written.back() == '"')) ||
        Written.drop_front().drop_back().find_first_of("<>\"\n") != StringRef::npos)
      break;
    StringRef Name = Written.drop_front().drop_back();
    if (Written.front() == '"') {
      // A project header (beside its includer, or on the quote and -I search
      // path): its own leading block, then stop.
      SmallString<256> Header;
      if (Depth < 4 && !path::is_absolute(Name))
        for (size_t D = 0; D <= QuoteDirs.size() && Header.empty(); ++D) {
          SmallString<256> Candidate(D == 0 ? FileDir : StringRef(QuoteDirs[D - 1]));
          if (Candidate.empty())
            continue;
          path::append(Candidate, Name);
          if (fs::is_regular_file(Candidate))
            Header = Candidate;
        }
      if (Header.empty())
        break;
      if (auto Buffer = llvm::MemoryBuffer::getFile(Header))
        appendLeadingIncludes((*Buffer)->getBuffer(), path::parent_path(Header), QuoteDirs,
                              /*InHeader=*/true, Depth + 1, Block);
      break;
    }
    Block += "#include <" + Name.str() + ">\n";
  }
}

std::optional<std::string> leadingIncludeBlock(StringRef Text, StringRef FileDir,
                                               ArrayRef<std::string> QuoteDirs) {
  std::string Block;
  appendLeadingIncludes(Text, FileDir, QuoteDirs, /*InHeader=*/false, 0, Block);
  if (Block.empty())
    return std::nullopt;
  return Block;
}

std::vector<std::string> quoteSearchDirs(const CompileCommand &Command) {
  std::vector<std::string> Quote, Angled, System;
  const std::vector<std::string> &Args = Command.CommandLine;
  for (size_t I = 1; I < Args.size(); ++I) {
    StringRef Arg = Args[I];
    std::vector<std::string> *Into = nullptr;
    StringRef Dir;
    // -isystem before -I in the list: "-isystem" must not read as "-i" + "system".
    for (auto [Flag, List] : {std::pair<StringRef, std::vector<std::string> *>{"-iquote", &Quote},
                              {"-isystem", &System},
                              {"-I", &Angled}}) {
      if (Arg == Flag && I + 1 < Args.size())
        Into = List, Dir = Args[++I];
      else if (Arg.starts_with(Flag) && Arg.size() > Flag.size())
        Into = List, Dir = Arg.drop_front(Flag.size());
      if (Into)
        break;
    }
    if (!Into || Dir.empty())
      continue;
    SmallString<256> Absolute(Dir);
    if (!path::is_absolute(Absolute)) {
      Absolute = Command.Directory;
      path::append(Absolute, Dir);
    }
    path::remove_dots(Absolute, /*remove_dot_dot=*/true);
    Into->push_back(std::string(Absolute));
  }
  // clang's order: -iquote, -I, -isystem; then its built-in directories and
  // -idirafter, which are left out: a header found only there ends the block.
  Quote.insert(Quote.end(), Angled.begin(), Angled.end());
  Quote.insert(Quote.end(), System.begin(), System.end());
  return Quote;
}

std::string defaultCacheDirectory(StringRef BuildPath) {
  SmallString<256> Dir;
  if (!BuildPath.empty()) {
    Dir = BuildPath;
    fs::make_absolute(Dir);
    path::append(Dir, ".torch-syncfree-cache");
    return std::string(Dir);
  }
  if (const char *Xdg = ::getenv("XDG_CACHE_HOME"); Xdg && *Xdg && path::is_absolute(Xdg)) {
    Dir = Xdg;
  } else if (!path::home_directory(Dir)) {
    return "";
  } else {
    path::append(Dir, ".cache");
  }
  path::append(Dir, "torch-syncfree");
  return std::string(Dir);
}

namespace {

/// The command line of File without the file and outputs, with the ExtraArgs
/// of its .clang-tidy, as the analysis will see it.
std::optional<CompileCommand> effectiveCommand(const CompilationDatabase &Database,
                                               clang::tidy::ClangTidyOptionsProvider &Options,
                                               const std::string &File) {
  std::vector<CompileCommand> Commands = Database.getCompileCommands(File);
  if (Commands.empty())
    return std::nullopt;
  CompileCommand Command = Commands.front();
  std::vector<std::string> Args;
  const std::vector<std::string> &In = Command.CommandLine;
  bool SawFile = false;
  for (size_t I = 0; I < In.size(); ++I) {
    StringRef Arg = In[I];
    if (I > 0 && !Arg.starts_with("-")) {
      SmallString<256> Absolute(Arg);
      path::make_absolute(Command.Directory, Absolute);
      path::remove_dots(Absolute, /*remove_dot_dot=*/true);
      if (Absolute == File || Arg == Command.Filename) {
        SawFile = true;
        continue;
      }
    }
    if (Arg == "-c")
      continue;
    if (Arg == "-o") {
      ++I;
      continue;
    }
    if (Arg == "-x" || Arg.starts_with("-x")) {
      // C++ and CUDA (host code) are shared; any other language is not.
      StringRef Language = Arg == "-x" ? (I + 1 < In.size() ? StringRef(In[++I]) : "") : Arg.drop_front(2);
      if (Language != "c++" && Language != "cuda")
        return std::nullopt;
      Args.push_back("-x");
      Args.push_back(Language.str());
      continue;
    }
    if (Arg.starts_with("-o"))
      return std::nullopt; // -ofile is rare
    Args.push_back(In[I]);
  }
  if (!SawFile || Args.empty())
    return std::nullopt;
  clang::tidy::ClangTidyOptions Opts = Options.getOptions(File);
  if (Opts.ExtraArgsBefore)
    Args.insert(Args.begin() + 1, Opts.ExtraArgsBefore->begin(), Opts.ExtraArgsBefore->end());
  if (Opts.ExtraArgs)
    Args.insert(Args.end(), Opts.ExtraArgs->begin(), Opts.ExtraArgs->end());
  Command.CommandLine = std::move(Args);
  return Command;
}

/// The language the unit's PCH is built in (clang's -x name: "c++-header",
/// or "cuda" for CUDA host code, which has no header type), "" for a unit no
/// PCH is built for (C, Objective-C, ...). An explicit -x wins over the name.
std::string pchLanguage(StringRef File, const CompileCommand &Command) {
  const std::vector<std::string> &Args = Command.CommandLine;
  for (size_t I = 0; I + 1 < Args.size(); ++I)
    if (Args[I] == "-x")
      return Args[I + 1] == "cuda" ? "cuda" : "c++-header";
  StringRef Ext = path::extension(File);
  if (Ext == ".cu")
    return "cuda";
  if (Ext == ".cpp" || Ext == ".cc" || Ext == ".cxx" || Ext == ".C" || Ext == ".c++")
    return "c++-header";
  return "";
}

/// A one-command database: the PCH's build.
class SingleCommand : public CompilationDatabase {
public:
  explicit SingleCommand(CompileCommand Command) : Command(std::move(Command)) {}
  std::vector<CompileCommand> getCompileCommands(StringRef) const override { return {Command}; }

private:
  CompileCommand Command;
};

/// Every file the PCH read, and whether one was not a system header.
class HeaderCollector : public DependencyCollector {
public:
  bool needSystemDependencies() override { return true; }
  bool sawDependency(StringRef Filename, bool FromModule, bool IsSystem, bool IsModuleFile,
                     bool IsMissing) override {
    if (!IsSystem && Filename != MainHeader)
      SawUserHeader = true;
    return DependencyCollector::sawDependency(Filename, FromModule, IsSystem, IsModuleFile,
                                              IsMissing);
  }
  std::string MainHeader;
  bool SawUserHeader = false;
};

class BuildPch : public FrontendActionFactory {
public:
  BuildPch(std::string Output, std::shared_ptr<HeaderCollector> Collector)
      : Output(std::move(Output)), Collector(std::move(Collector)) {}
  std::unique_ptr<FrontendAction> create() override { return std::make_unique<GeneratePCHAction>(); }
  bool runInvocation(std::shared_ptr<CompilerInvocation> Invocation, FileManager *Files,
                     std::shared_ptr<PCHContainerOperations> PCHContainerOps,
                     DiagnosticConsumer *DiagConsumer) override {
    includeHeaderInsteadOfProbedPch(*Invocation); // before any PCH of ours
    // As the analysis (CheckRunner): the PCH must match its macros exactly.
    Invocation->getPreprocessorOpts().SetUpStaticAnalyzer = true;
    Invocation->getDiagnosticOpts().ShowCarets = false; // no "N errors generated." on stderr
    Invocation->getFrontendOpts().OutputFile = Output;
    // Output is our own temporary already: without clang's second one
    // ("<Output>-XXXXXXXX.tmp"), a failed write leaves nothing behind but it.
    Invocation->getFrontendOpts().UseTemporary = false;
    Invocation->getFrontendOpts().ProgramAction = frontend::GeneratePCH;
    // The instantiations the headers request for themselves are performed
    // here, once, and serialized (clang's -fpch-instantiate-templates): a unit
    // using the PCH no longer performs them at its end (1.5 s of a
    // <torch/torch.h> unit even when the analysis skips what it can).
    Invocation->getLangOpts().PCHInstantiateTemplates = true;
    CompilerInstance Compiler(std::move(Invocation), std::move(PCHContainerOps));
    Compiler.setFileManager(IntrusiveRefCntPtr<FileManager>(Files));
    Compiler.createDiagnostics(DiagConsumer, /*ShouldOwnClient=*/false);
    if (!Compiler.hasDiagnostics())
      return false;
    Compiler.createSourceManager();
    Compiler.addDependencyCollector(Collector);
    std::unique_ptr<FrontendAction> Action = create();
    return Compiler.ExecuteAction(*Action) && !Compiler.getDiagnostics().hasErrorOccurred();
  }

private:
  std::string Output;
  std::shared_ptr<HeaderCollector> Collector;
};


/// Keeps the first error that has no source location: clang's "unable to open
/// output file" (the PCH could not be written), as opposed to an error in the
/// headers, which has one.
class OutputErrorRecorder : public DiagnosticConsumer {
public:
  void HandleDiagnostic(DiagnosticsEngine::Level Level, const clang::Diagnostic &Info) override {
    DiagnosticConsumer::HandleDiagnostic(Level, Info);
    if (Level < DiagnosticsEngine::Error || Info.getLocation().isValid() || !First.empty())
      return;
    SmallString<256> Text;
    Info.FormatDiagnostic(Text);
    First = std::string(Text);
  }
  std::string First;
};

constexpr llvm::StringLiteral ManifestHeader = "torch-syncfree shared PCH v3";
/// A manifest line naming a path the build's header search did not find.
constexpr llvm::StringLiteral AbsentPrefix = "absent ";

/// The lines after the header and the PCH's digest line: dependencies
/// ("size mtime path") and misses ("absent path").
SmallVector<StringRef, 0> manifestBody(StringRef Manifest) {
  SmallVector<StringRef, 0> Lines;
  Manifest.split(Lines, '\n', -1, /*KeepEmpty=*/false);
  if (Lines.size() < 2 || Lines[0] != ManifestHeader || !Lines[1].starts_with("pch "))
    return {};
  Lines.erase(Lines.begin(), Lines.begin() + 2);
  return Lines;
}

/// The dependency lines ("size mtime path") of a manifest.
SmallVector<StringRef, 0> dependencyLines(StringRef Manifest) {
  SmallVector<StringRef, 0> Lines = manifestBody(Manifest);
  llvm::erase_if(Lines, [](StringRef Line) { return Line.starts_with(AbsentPrefix); });
  return Lines;
}

/// The paths the build looked for and did not find.
std::vector<std::string> absentPaths(StringRef Manifest) {
  std::vector<std::string> Paths;
  for (StringRef Line : manifestBody(Manifest))
    if (Line.consume_front(AbsentPrefix))
      Paths.push_back(Line.str());
  return Paths;
}

/// Every file still has the size and modification time it had, and nothing
/// has appeared where the header search found nothing (a header added earlier
/// on the search path would shadow one in the PCH).
bool depsStillMatch(StringRef Manifest) {
  SmallVector<StringRef, 0> Lines = dependencyLines(Manifest);
  if (Lines.empty())
    return false;
  for (StringRef Line : Lines) {
    auto [Size, Rest] = Line.split(' ');
    auto [Time, File] = Rest.split(' ');
    fs::file_status Status;
    if (fs::status(File, Status) || std::to_string(Status.getSize()) != Size ||
        std::to_string(Status.getLastModificationTime().time_since_epoch().count()) != Time)
      return false;
  }
  return llvm::all_of(absentPaths(Manifest), [](const std::string &P) { return stillAbsent(P); });
}

/// The verified manifest text of PchPath's cache entry (read after plan()
/// verified it), without its MAC line.
std::optional<std::string> manifestOf(StringRef PchPath) {
  StringRef Base = PchPath;
  Base.consume_back(".pch");
  std::unique_ptr<llvm::MemoryBuffer> Buffer = readCacheFile((Base + ".deps").str(), 64 << 20);
  if (!Buffer)
    return std::nullopt;
  StringRef Text = Buffer->getBuffer();
  if (size_t Mac = Text.rfind("\nmac "); Mac != StringRef::npos)
    Text = Text.take_front(Mac);
  return Text.str();
}

} // namespace

std::vector<std::string> pchInputs(StringRef PchPath) {
  std::vector<std::string> Files;
  std::optional<std::string> Manifest = manifestOf(PchPath);
  if (!Manifest)
    return Files;
  for (StringRef Line : dependencyLines(*Manifest))
    Files.push_back(Line.split(' ').second.split(' ').second.str());
  return Files;
}

std::vector<std::string> pchAbsentInputs(StringRef PchPath) {
  std::optional<std::string> Manifest = manifestOf(PchPath);
  return Manifest ? absentPaths(*Manifest) : std::vector<std::string>();
}

SharedPchCache::SharedPchCache(std::string Directory, const CompilationDatabase &Database,
                               clang::tidy::ClangTidyOptionsProvider &Options,
                               CacheAuthenticator Auth)
    : Directory(std::move(Directory)), Database(Database), Options(Options), Auth(Auth) {}

PchTrust checkPch(StringRef Base, const CacheAuthenticator &Auth, bool CheckDigest) {
  std::unique_ptr<llvm::MemoryBuffer> Buffer = readCacheFile((Base + ".deps").str(), 64 << 20);
  if (!Buffer)
    return PchTrust::Missing;
  std::optional<std::string> Manifest = Auth.verify(Buffer->getBuffer());
  if (!Manifest)
    return PchTrust::Untrusted; // committed, forged, or written by another user's tool
  SmallVector<StringRef, 4> Lines;
  StringRef(*Manifest).split(Lines, '\n', 2, /*KeepEmpty=*/false);
  if (!depsStillMatch(*Manifest))
    return PchTrust::Stale;
  // The PCH must be the one the manifest was written for: a damaged or
  // swapped file is a miss, never loaded (clang can crash on a bad PCH).
  if (Lines.size() < 2 || !Lines[1].starts_with("pch ") ||
      (CheckDigest && fileDigest((Base + ".pch").str()) != Lines[1].drop_front(4)))
    return PchTrust::Untrusted;
  return PchTrust::Trusted;
}

bool SharedPchCache::trusted(StringRef Base) {
  PchTrust Trust = checkPch(Base, Auth);
  if (Trust == PchTrust::Untrusted)
    ++Counts.Untrusted;
  return Trust == PchTrust::Trusted;
}

std::optional<PchRequest> pchRequestFor(const CompilationDatabase &Database,
                                        clang::tidy::ClangTidyOptionsProvider &Options,
                                        const std::string &File, StringRef Text, std::string &WhyNot) {
  std::optional<CompileCommand> Command = effectiveCommand(Database, Options, File);
  std::string Language = Command ? pchLanguage(File, *Command) : "";
  if (!Command || Language.empty()) {
    WhyNot = "not C++ or CUDA, or a compile command that names no file or -o<file>";
    return std::nullopt;
  }
  std::optional<std::string> Block =
      leadingIncludeBlock(Text, path::parent_path(File), quoteSearchDirs(*Command));
  if (!Block) {
    WhyNot = "no #include block to share at the top (a macro or code before the "
             "includes, or a quoted include not found on the -iquote, -I or -isystem path)";
    return std::nullopt;
  }
  PchRequest R;
  SmallVector<StringRef, 8> Lines;
  StringRef(*Block).split(Lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef Line : Lines)
    R.Lines.push_back(Line.str());
  R.FlagsIdentity = getClangFullVersion() + '\0' + Command->Directory + '\0' + Language;
  for (const std::string &Arg : Command->CommandLine)
    R.FlagsIdentity += '\0' + Arg;
  R.Identity = R.FlagsIdentity + '\0' + R.Lines[0];
  R.Command = std::move(*Command);
  R.Language = std::move(Language);
  return R;
}

std::string pchHeader(const PchRequest &R, size_t Lines) {
  std::string Header;
  for (size_t I = 0; I < Lines && I < R.Lines.size(); ++I)
    Header += R.Lines[I] + "\n";
  return Header;
}

std::string pchKey(const PchRequest &R, size_t Lines) {
  return hex64(llvm::xxh3_64bits(R.Identity + '\0' + pchHeader(R, Lines)));
}

void SharedPchCache::plan(const std::vector<std::string> &Files) {
  std::lock_guard<std::mutex> Lock(Mutex);
  // Units with the same command and the same first #include share the PCH of
  // the longest block of #includes they all begin with.
  struct Candidate {
    std::string File;
    PchRequest Request;
  };
  std::map<std::string, std::vector<Candidate>> ByCommand;
  for (const std::string &File : Files) {
    if (GroupOf.count(File))
      continue;
    auto Text = llvm::MemoryBuffer::getFile(File);
    std::string WhyNot = "its source cannot be read";
    std::optional<PchRequest> Request =
        Text ? pchRequestFor(Database, Options, File, (*Text)->getBuffer(), WhyNot) : std::nullopt;
    if (!Request) {
      ++Counts.NotShared[WhyNot];
      continue;
    }
    std::string Identity = Request->Identity;
    ByCommand[Identity].push_back(Candidate{File, std::move(*Request)});
  }
  for (auto &[Identity, Members] : ByCommand) {
    const PchRequest &First = Members.front().Request;
    size_t Common = First.Lines.size();
    for (const Candidate &C : Members) {
      size_t Same = 0;
      while (Same < Common && Same < C.Request.Lines.size() && C.Request.Lines[Same] == First.Lines[Same])
        ++Same;
      Common = Same;
    }
    std::string Key = pchKey(First, Common);
    Group &G = Groups[Key];
    G.Key = Key;
    G.Header = pchHeader(First, Common);
    G.Command = First.Command;
    G.Language = First.Language;
    for (const Candidate &C : Members) {
      G.Units.push_back(C.File);
      GroupOf[C.File] = Key;
    }
  }
  // A cached PCH whose headers are unchanged is ready before any worker
  // starts. A group of one gets its PCH too: the cache persists, so the
  // build a cold run pays once (about one parse of the headers) makes every
  // later analysis of that unit cheap in time and memory (issue 24: the
  // real-layout benchmark's lone .cu was its warm run's largest worker).
  for (auto &[Key, G] : Groups) {
    if (G.State != Group::Unbuilt)
      continue;
    SmallString<256> Base(Directory);
    path::append(Base, Key);
    if (fs::exists(Base + ".pch") && trusted(Base)) {
      G.State = Group::Ready;
      G.Pch = (Base + ".pch").str();
      ++Counts.Reused;
    }
    ++Counts.Groups;
  }
}

std::string SharedPchCache::pchFor(const std::string &File) {
  std::unique_lock<std::mutex> Lock(Mutex);
  auto It = GroupOf.find(File);
  if (It == GroupOf.end())
    return "";
  Group &G = Groups[It->second];
  if (G.State == Group::Unbuilt && Counts.WriteFailure.empty()) {
    G.State = Group::Building;
    Lock.unlock();
    // A crash in an in-process build is recovered here, so the group never
    // stays "building" with its other units waiting for it (issue 38).
    bool Ok = false;
    llvm::CrashRecoveryContext Recovery;
    if (!Recovery.RunSafely([&] { Ok = build(G); }))
      Ok = false;
    Lock.lock();
    G.State = Ok ? Group::Ready : Group::Failed;
    BuildFinished.notify_all();
  }
  // A unit whose group's PCH another thread is building waits for it: the
  // build started first, so it ends no later than a full parse started now
  // would, and the unit then costs a PCH load instead of a header parse
  // (issue 24: at -j2, 2-4 units of 24 were parsed in full cold).
  BuildFinished.wait(Lock, [&] { return G.State != Group::Building; });
  // Every unit without a PCH is counted under one reason.
  if (G.State == Group::Ready) {
    ++Counts.UnitsWithPch;
    return G.Pch;
  }
  if (!Counts.WriteFailure.empty())
    ++Counts.NotShared["the cache cannot be written"];
  else
    ++Counts.NotShared["its group's PCH did not build (its headers do not compile alone)"];
  return "";
}

std::vector<size_t> SharedPchCache::schedule(const std::vector<std::string> &Files) const {
  std::lock_guard<std::mutex> Lock(Mutex);
  std::vector<size_t> Order, Rest;
  std::set<std::string> Led;
  for (size_t I = 0; I < Files.size(); ++I) {
    auto It = GroupOf.find(Files[I]);
    bool Leads = It != GroupOf.end() && Groups.at(It->second).State == Group::Unbuilt &&
                 Led.insert(It->second).second;
    (Leads ? Order : Rest).push_back(I);
  }
  Order.insert(Order.end(), Rest.begin(), Rest.end());
  return Order;
}

PchCompileResult compilePch(const CompileCommand &Command, const std::string &Header,
                            const std::string &Output) {
  PchCompileResult Result;
  SingleCommand One(Command);
  // The analyses' file system: regular files only (a first include of
  // </dev/stdin> or a FIFO is an error, not a read that blocks), and a
  // physical file system of its own (ClangTool sets its working directory;
  // the real one would share the process's across threads).
  auto Misses = std::make_shared<LookupMisses>();
  ClangTool Tool(One, {Header}, std::make_shared<PCHContainerOperations>(),
                 makeSafeFileSystem(llvm::vfs::createPhysicalFileSystem(), Misses));
  Tool.clearArgumentsAdjusters(); // the command is already the effective one
  OutputErrorRecorder Quiet;
  Tool.setDiagnosticConsumer(&Quiet);
  Tool.setPrintErrorMessage(false); // the summary says what failed
  auto Collector = std::make_shared<HeaderCollector>();
  Collector->MainHeader = Header;
  BuildPch Factory(Output, Collector);
  Result.Built = Tool.run(&Factory) == 0;
  Result.OutputError = Quiet.First;
  Result.SawUserHeader = Collector->SawUserHeader;
  Result.Dependencies = Collector->getDependencies();
  Result.Misses = Misses->paths();
  return Result;
}

PchBuildResult buildPch(const std::string &Directory, const std::string &Key, const std::string &HeaderText,
                        const CompileCommand &EffectiveCommand, const std::string &Language,
                        const CacheAuthenticator &Auth, const PchBuilderProcess *Isolation) {
  PchBuildResult Result;
  SmallString<256> Base(Directory);
  path::append(Base, Key);
  std::string Pch = (Base + ".pch").str(), Deps = (Base + ".deps").str(),
              Header = (Base + ".h").str();
  auto Fail = [&] { return Result; };
  // A cache that cannot be written (a full disk, a read-only directory) is
  // no cache: the caller parses in full and attempts no other PCH.
  auto Unwritable = [&](std::string Why) {
    Result.WriteFailure = std::move(Why);
    return Result;
  };
  std::string WriteError;
  if (std::error_code EC = fs::create_directories(Directory))
    return Unwritable("cannot create '" + Directory + "': " + EC.message());
  if (!writeCacheFile(Header, HeaderText, &WriteError))
    return Unwritable(WriteError);
  CompileCommand Command = EffectiveCommand;
  Command.Filename = Header;
  Command.CommandLine.insert(Command.CommandLine.end(), {"-fsyntax-only", "-x", Language, Header});
  std::string Temp = Pch + ".tmp-" + std::to_string(::getpid()) + "-" +
                     std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  // Created here with O_EXCL (mode 0600), so clang writes into a file of ours
  // and never through a link planted under this name in a committed cache.
  {
    int FD = -1;
    if (std::error_code EC = fs::openFileForWrite(Temp, FD, fs::CD_CreateNew))
      return Unwritable("cannot create '" + Temp + "': " + EC.message());
    ::close(FD);
  }
  // The compile runs in a worker process under --tu-timeout when the caller
  // gives one (issue 38: a header that crashes clang left the group
  // "building" and the run waiting forever; a slow one ignored the limit).
  PchCompileResult Compiled =
      Isolation ? Isolation->Run(Command, Header, Temp) : compilePch(Command, Header, Temp);
  if (!Compiled.Built && !Compiled.OutputError.empty()) {
    fs::remove(Temp);
    return Unwritable(Compiled.OutputError);
  }
  // A PCH holding user headers would hide their text from the fix writer:
  // only system headers are shared.
  if (!Compiled.Built || Compiled.SawUserHeader) {
    fs::remove(Temp);
    Result.Failure = std::move(Compiled.Failure);
    return Fail();
  }
  std::string Digest = fileDigest(Temp);
  if (Digest.empty()) {
    fs::remove(Temp);
    return Fail();
  }
  std::string Manifest = (ManifestHeader + "\npch " + Digest + "\n").str();
  // The manifest is line-based: a path with a line break cannot be recorded.
  auto HasLineBreak = [](const std::string &P) { return P.find_first_of("\r\n") != std::string::npos; };
  if (llvm::any_of(Compiled.Dependencies, HasLineBreak) || llvm::any_of(Compiled.Misses, HasLineBreak)) {
    fs::remove(Temp);
    return Fail();
  }
  for (const std::string &Dependency : Compiled.Dependencies) {
    SmallString<256> Absolute(Dependency);
    path::make_absolute(Command.Directory, Absolute);
    fs::file_status Status;
    if (fs::status(Absolute, Status)) {
      fs::remove(Temp);
      return Fail();
    }
    Manifest += std::to_string(Status.getSize()) + " " +
                std::to_string(Status.getLastModificationTime().time_since_epoch().count()) +
                " " + std::string(Absolute) + "\n";
  }
  for (const std::string &Absent : Compiled.Misses)
    Manifest += (AbsentPrefix + Absent + "\n").str();
  // The manifest first: a reader that sees the new PCH sees its manifest.
  if (!writeCacheFile(Deps, Auth.sign(Manifest), &WriteError)) {
    fs::remove(Temp);
    return Unwritable(WriteError);
  }
  if (fs::rename(Temp, Pch)) {
    fs::remove(Temp);
    return Fail();
  }
  Result.Pch = Pch;
  return Result;
}

bool SharedPchCache::build(Group &G) {
  PchBuildResult Built = buildPch(Directory, G.Key, G.Header, G.Command, G.Language, Auth,
                                  Isolation ? &*Isolation : nullptr);
  std::lock_guard<std::mutex> Lock(Mutex);
  if (!Built.WriteFailure.empty()) {
    if (Counts.WriteFailure.empty())
      Counts.WriteFailure = std::move(Built.WriteFailure);
    return false;
  }
  if (Built.Pch.empty()) {
    ++Counts.Failed;
    if (!Built.Failure.empty() && Counts.FirstFailure.empty())
      Counts.FirstFailure = Built.Failure;
    return false;
  }
  G.Pch = Built.Pch;
  ++Counts.Built;
  return true;
}

SharedPchCache::Stats SharedPchCache::stats() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return Counts;
}

} // namespace torch_syncfree
