#include "CheckRunner.h"

#include "CompileCommandSanitizer.h"
#include "clang-tidy/ClangTidy.h"
#include "clang-tidy/ClangTidyModule.h"
#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/ASTMatchers/ASTMatchersInternal.h"
#include "clang/Basic/DiagnosticFrontend.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Frontend/MultiplexConsumer.h"
#include "clang/Frontend/PrecompiledPreamble.h"
#include "clang/Frontend/Utils.h"
#include "clang/Lex/HeaderSearchOptions.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "clang/Sema/ExternalSemaSource.h"
#include "clang/Sema/Sema.h"
#include "clang/Sema/SemaConsumer.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <optional>

using namespace clang;
using namespace clang::tidy;
using namespace clang::tooling;

namespace torch_syncfree {

struct PreambleSlot::State {
  std::optional<PrecompiledPreamble> Preamble;
  std::string Flags; ///< the -cc1 command line it was built with
};

PreambleSlot::PreambleSlot(std::string StorageDir) : StorageDir(std::move(StorageDir)) {}
PreambleSlot::~PreambleSlot() = default;
bool PreambleSlot::hasPreamble() const { return Impl && Impl->Preamble.has_value(); }

namespace {

/// Focuses the work on user code; first in the multiplexer, so the match
/// finder runs after it.
///  * Template instantiations that system headers requested for themselves
///    (LibTorch's inline code using its own templates: a system template, its
///    point of instantiation in a system header) are not performed: they cost
///    more than the rest of the analysis (4-5 s of a <torch/torch.h> TU with a
///    preamble) and the checks never look into LibTorch's bodies. Those the
///    user's code requests, and all they request in turn, are performed as
///    usual. With a preamble they come from its list; in a full parse they
///    are pending when the main file's first declaration is complete.
///  * Likewise the vtables system code uses of system classes are not
///    defined (defining one instantiates every virtual member: 1.3 s at the end
///    of an empty <torch/torch.h> unit with a PCH).
///  * The checks traverse only the top-level declarations outside system headers.
class UserCodeFocus : public SemaConsumer {
public:
  UserCodeFocus(bool SkipSystemInstantiations, const std::atomic<bool> *Cancelled)
      : SkipSystemInstantiations(SkipSystemInstantiations), Cancelled(Cancelled) {}
  void InitializeSema(Sema &S) override {
    Actions = &S;
    if (!SkipSystemInstantiations)
      return;
    auto *External = dyn_cast_or_null<ExternalSemaSource>(S.getASTContext().getExternalSource());
    if (!External)
      return;
    // The reader hands its list over once; Sema would read it at the end.
    SmallVector<Sema::PendingImplicitInstantiation, 64> FromPreamble;
    External->ReadPendingInstantiations(FromPreamble);
    for (const Sema::PendingImplicitInstantiation &Pending : FromPreamble) {
      if (requestedForSystemCode(Pending))
        continue;
      if (auto *Function = dyn_cast<FunctionDecl>(Pending.first))
        Function->setInstantiationIsPending(true);
      S.PendingInstantiations.push_back(Pending);
    }
    // The same for the vtables the preamble's code used: Sema would load and
    // define them at the end (LoadExternalVTableUses); the reader hands them
    // over once too.
    SmallVector<ExternalVTableUse, 64> Used;
    External->ReadUsedVTables(Used);
    for (const ExternalVTableUse &Use : Used) {
      if (usedBySystemCode(Use.Record, Use.Location))
        continue;
      if (S.VTablesUsed.try_emplace(Use.Record, Use.DefinitionRequired).second)
        S.VTableUses.push_back({Use.Record, Use.Location});
    }
  }
  void ForgetSema() override { Actions = nullptr; }

  bool HandleTopLevelDecl(DeclGroupRef Group) override {
    // False stops clang's parse (ParseAST) after this declaration.
    if (Cancelled && Cancelled->load(std::memory_order_relaxed))
      return false;
    if (!SkipSystemInstantiations || PrunedHeaderRequests || !Actions ||
        Group.begin() == Group.end())
      return true;
    const SourceManager &SM = Actions->getSourceManager();
    if (!SM.isWrittenInMainFile(SM.getExpansionLoc((*Group.begin())->getLocation())))
      return true;
    PrunedHeaderRequests = true;
    std::deque<Sema::PendingImplicitInstantiation> Kept;
    for (const Sema::PendingImplicitInstantiation &Pending : Actions->PendingInstantiations) {
      if (!requestedForSystemCode(Pending)) {
        Kept.push_back(Pending);
        continue;
      }
      if (auto *Function = dyn_cast<FunctionDecl>(Pending.first))
        Function->setInstantiationIsPending(false);
    }
    Actions->PendingInstantiations.swap(Kept);
    // Vtables the headers used (a full parse): forgotten, so that a use from
    // user code records them again.
    llvm::erase_if(Actions->VTableUses, [&](const Sema::VTableUse &Use) {
      if (!usedBySystemCode(Use.first, Use.second))
        return false;
      Actions->VTablesUsed.erase(Use.first);
      return true;
    });
    return true;
  }

  void HandleTranslationUnit(ASTContext &Ctx) override {
    const SourceManager &SM = Ctx.getSourceManager();
    std::vector<Decl *> Scope;
    if (Cancelled && Cancelled->load(std::memory_order_relaxed)) {
      Ctx.setTraversalScope(Scope); // nothing to match: the result is dropped
      return;
    }
    // Lists the top-level declarations; from a preamble this deserializes the
    // declarations themselves (namespaces, mostly), never their members.
    for (Decl *D : Ctx.getTranslationUnitDecl()->decls()) {
      SourceLocation Loc = D->getLocation();
      if (Loc.isValid() && SM.isInSystemHeader(SM.getExpansionLoc(Loc)))
        continue;
      Scope.push_back(D);
    }
    Ctx.setTraversalScope(Scope);
  }

private:
  bool requestedForSystemCode(const Sema::PendingImplicitInstantiation &Pending) const {
    // A function or variable that no other TU can define (internal linkage, or
    // a type without linkage such as a lambda's: c10::fmap over a lambda in
    // <torch/script.h>) is "used but not defined" at the end of the TU if its
    // instantiation is skipped, and clang makes that an error: always performed.
    if (const auto *Value = dyn_cast<ValueDecl>(Pending.first))
      if (!Value->isExternallyVisible() || Actions->isExternalWithNoLinkageType(Value))
        return false;
    const Decl *Pattern = Pending.first;
    if (const auto *Function = dyn_cast<FunctionDecl>(Pending.first)) {
      if (const FunctionDecl *From = Function->getTemplateInstantiationPattern())
        Pattern = From;
    } else if (const auto *Variable = dyn_cast<VarDecl>(Pending.first)) {
      if (const VarDecl *From = Variable->getTemplateInstantiationPattern())
        Pattern = From;
    }
    return inSystemHeader(Pending.second) && inSystemHeader(Pattern->getLocation());
  }
  bool usedBySystemCode(const CXXRecordDecl *Record, SourceLocation Use) const {
    return inSystemHeader(Use) && inSystemHeader(Record->getLocation());
  }
  bool inSystemHeader(SourceLocation Loc) const {
    const SourceManager &SM = Actions->getSourceManager();
    return Loc.isValid() && SM.isInSystemHeader(SM.getExpansionLoc(Loc));
  }

  bool SkipSystemInstantiations;
  const std::atomic<bool> *Cancelled;
  Sema *Actions = nullptr;
  bool PrunedHeaderRequests = false;
};

std::string ccOneFlags(const CompilerInvocation &Invocation) {
  std::string Flags;
  Invocation.generateCC1CommandLine([&](const llvm::Twine &Arg) {
    Flags += Arg.str();
    Flags += '\0';
  });
  return Flags;
}

/// Every file the analysis read, system headers included.
class ReadFilesCollector : public DependencyCollector {
public:
  bool needSystemDependencies() override { return true; }
};

/// #embed puts a file's bytes into the program, and clang's messages can print
/// them (a static_assert's message, an undefined template's argument list): a
/// repository could make a CI log show any file the user can read. An embedded
/// file is accepted only when it is a regular file of at most 64 MiB under one
/// of the roots the user's run names (UnitRunOptions::EmbedRoots: the checkout
/// around the working directory, -p and the files on the command line; never
/// the repository's own -I, --embed-dir or directory), outside version-control
/// metadata (.git/config holds a CI checkout's token), symbolic links resolved.
/// Any other directive is a fatal error: clang reports nothing after it, so the
/// bytes reach no output. A unit that embeds anything has clang's messages
/// withheld (runChecksOnce). Clang has read the bytes by the time this callback
/// runs (it cannot be made to skip the read; replacing the buffer then would
/// leave clang a dangling one), and the safe file system bounds every read
/// (SafeFileSystem.h). __has_embed only asks whether a file exists and is empty.
class EmbedPolicy : public PPCallbacks {
public:
  static constexpr uint64_t MaxBytes = 64ull << 20;

  EmbedPolicy(CompilerInstance &Compiler, StringRef MainFile,
              const std::vector<std::string> &UserRoots, std::atomic<bool> &Embedded)
      : Compiler(Compiler), Embedded(Embedded) {
    llvm::vfs::FileSystem &FS = Compiler.getFileManager().getVirtualFileSystem();
    std::vector<std::string> Dirs = UserRoots;
    if (Dirs.empty()) {
      // No run named any (a caller that does not know): the work tree around
      // the main file, or its directory.
      SmallString<256> Main(MainFile);
      FS.makeAbsolute(Main);
      Dirs.push_back(workTreeRoot(llvm::sys::path::parent_path(Main)));
    }
    for (const std::string &Dir : Dirs) {
      SmallString<256> Real;
      if (!Dir.empty() && !FS.getRealPath(Dir, Real))
        Roots.push_back(std::string(Real));
    }
  }

  void EmbedDirective(SourceLocation HashLoc, StringRef FileName, bool IsAngled,
                      OptionalFileEntryRef File, const LexEmbedParametersResult &) override {
    if (!File)
      return;
    Embedded = true;
    SmallString<256> Real;
    llvm::vfs::FileSystem &FS = Compiler.getFileManager().getVirtualFileSystem();
    bool Allowed = !FS.getRealPath(File->getName(), Real) &&
                   static_cast<uint64_t>(File->getSize()) <= MaxBytes && !inVersionControlMetadata(Real) &&
                   llvm::any_of(Roots, [&](const std::string &Root) {
                     return Real.str().starts_with(Root) &&
                            (Real.size() == Root.size() ||
                             llvm::sys::path::is_separator(Real[Root.size()]));
                   });
    if (Allowed)
      return;
    // A built-in diagnostic: clang-tidy's consumer names custom IDs through
    // its own DiagnosticIDs, which do not know the compiler's.
    Compiler.getDiagnostics().Report(HashLoc, diag::err_cannot_open_file)
        << FileName
        << "torch-syncfree embeds only regular files of at most 64 MiB under the checkout, "
           "the build directory or the files named on its command line, outside .git";
  }

private:
  CompilerInstance &Compiler;
  std::atomic<bool> &Embedded;
  std::vector<std::string> Roots;
};

/// PreambleCallbacks' defaults: nothing recorded, no body skipped.
class KeepEverything : public PreambleCallbacks {};

} // namespace

/// clang-tidy's ActionFactory (ClangTidy.cpp) plus the traversal scope and
/// the preamble; written here because runClangTidy offers no hook for either.
class PreambleAwareFactory : public FrontendActionFactory {
public:
  PreambleAwareFactory(ClangTidyContext &Context, IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> FileSystem,
                       const UnitRunOptions &Options)
      : Context(Context), ConsumerFactory(Context, std::move(FileSystem)), Options(Options) {}

  std::unique_ptr<FrontendAction> create() override {
    return std::make_unique<Action>(ConsumerFactory, Context, Options.EmbedRoots, Embedded,
                                    Options.SkipSystemInstantiations,
                                    Options.Cancelled);
  }

  bool runInvocation(std::shared_ptr<CompilerInvocation> Invocation, FileManager *Files,
                     std::shared_ptr<PCHContainerOperations> PCHContainerOps,
                     DiagnosticConsumer *DiagConsumer) override {
    includeHeaderInsteadOfProbedPch(*Invocation); // before any PCH of ours
    // As clang-tidy: __clang_analyzer__ is defined, carets are not printed.
    Invocation->getPreprocessorOpts().SetUpStaticAnalyzer = true;
    Invocation->getDiagnosticOpts().ShowCarets = false;
    IntrusiveRefCntPtr<FileManager> FileMgr(Files);
    if (!Options.SharedPch.empty())
      Invocation->getPreprocessorOpts().ImplicitPCHInclude = Options.SharedPch;
    else if (Options.Preamble)
      usePreamble(*Options.Preamble, *Invocation, FileMgr, PCHContainerOps);
    if (Options.PreambleOnly)
      return true;
    CompilerInstance Compiler(std::move(Invocation), std::move(PCHContainerOps));
    Compiler.setFileManager(FileMgr);
    // Destroyed before the compiler, which the action's consumers point into.
    std::unique_ptr<FrontendAction> ScopedAction = create();
    Compiler.createDiagnostics(DiagConsumer, /*ShouldOwnClient=*/false);
    if (!Compiler.hasDiagnostics())
      return false;
    Compiler.createSourceManager();
    std::shared_ptr<ReadFilesCollector> Reads;
    if (Options.ReadFiles) {
      Reads = std::make_shared<ReadFilesCollector>();
      Compiler.addDependencyCollector(Reads);
    }
    bool Success = Compiler.ExecuteAction(*ScopedAction);
    if (Reads) {
      auto WorkingDirectory = FileMgr->getVirtualFileSystem().getCurrentWorkingDirectory();
      for (const std::string &File : Reads->getDependencies()) {
        SmallString<256> Absolute(File);
        if (WorkingDirectory)
          llvm::sys::path::make_absolute(*WorkingDirectory, Absolute);
        llvm::sys::path::remove_dots(Absolute, /*remove_dot_dot=*/true);
        Options.ReadFiles->push_back(std::string(Absolute));
      }
    }
    return Success;
  }

private:
  /// Builds the preamble when there is none or it cannot be reused, then
  /// points the invocation at it. A preamble whose headers do not compile is
  /// not kept: the full parse then reports the error at its place.
  void usePreamble(PreambleSlot &Slot, CompilerInvocation &Invocation,
                   IntrusiveRefCntPtr<FileManager> &FileMgr,
                   const std::shared_ptr<PCHContainerOperations> &PCHContainerOps) {
    if (Invocation.getFrontendOpts().Inputs.size() != 1)
      return;
    std::string MainPath = Invocation.getFrontendOpts().Inputs[0].getFile().str();
    IntrusiveRefCntPtr<llvm::vfs::FileSystem> VFS = FileMgr->getVirtualFileSystemPtr();
    auto Buffer = VFS->getBufferForFile(MainPath);
    if (!Buffer)
      return;
    PreambleBounds Bounds =
        ComputePreambleBounds(Invocation.getLangOpts(), (*Buffer)->getMemBufferRef(), 0);
    if (Bounds.Size == 0)
      return;
    if (!Slot.Impl)
      Slot.Impl = std::make_unique<PreambleSlot::State>();
    PreambleSlot::State &State = *Slot.Impl;
    std::string Flags = ccOneFlags(Invocation);
    if (State.Preamble && State.Flags == Flags &&
        State.Preamble->CanReuse(Invocation, (*Buffer)->getMemBufferRef(), Bounds, *VFS)) {
      ++Slot.Reuses;
    } else {
      State.Preamble.reset();
      DiagnosticOptions DiagOpts;
      IgnoringDiagConsumer Ignore;
      IntrusiveRefCntPtr<DiagnosticsEngine> Diags =
          CompilerInstance::createDiagnostics(*VFS, DiagOpts, &Ignore, /*ShouldOwnClient=*/false);
      KeepEverything Callbacks;
      // The headers' own instantiations are performed once, in the preamble
      // (as the shared PCH does: SharedPch.cpp), not at the end of every run.
      CompilerInvocation ForPreamble(Invocation);
      ForPreamble.getLangOpts().PCHInstantiateTemplates = true;
      auto Built = PrecompiledPreamble::Build(ForPreamble, Buffer->get(), Bounds, Diags, VFS,
                                              PCHContainerOps, /*StoreInMemory=*/false,
                                              Slot.StorageDir, Callbacks);
      ++Slot.Builds;
      if (!Built || Diags->hasErrorOccurred())
        return;
      State.Preamble.emplace(std::move(*Built));
      State.Flags = std::move(Flags);
    }
    IntrusiveRefCntPtr<llvm::vfs::FileSystem> Before = VFS;
    // The invocation now owns the buffer as the remapped main file.
    State.Preamble->AddImplicitPreamble(Invocation, VFS, Buffer->release());
    if (VFS != Before)
      FileMgr = llvm::makeIntrusiveRefCnt<FileManager>(FileMgr->getFileSystemOpts(), VFS);
  }

  class Action : public ASTFrontendAction {
  public:
    Action(ClangTidyASTConsumerFactory &Factory, ClangTidyContext &Context,
           const std::vector<std::string> &EmbedRoots, std::atomic<bool> &Embedded,
           bool SkipSystemInstantiations, const std::atomic<bool> *Cancelled)
        : Factory(Factory), Context(Context), EmbedRoots(EmbedRoots), Embedded(Embedded),
          SkipSystemInstantiations(SkipSystemInstantiations), Cancelled(Cancelled) {}
    std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &Compiler,
                                                   StringRef File) override {
      Compiler.getPreprocessor().addPPCallbacks(
          std::make_unique<EmbedPolicy>(Compiler, File, EmbedRoots, Embedded));
      std::vector<std::unique_ptr<ASTConsumer>> Consumers;
      // Findings wanted in system headers (SystemHeaders): traverse everything.
      if (!Context.getOptionsForFile(File).SystemHeaders.value_or(false))
        Consumers.push_back(std::make_unique<UserCodeFocus>(SkipSystemInstantiations, Cancelled));
      Consumers.push_back(Factory.createASTConsumer(Compiler, File));
      return std::make_unique<MultiplexConsumer>(std::move(Consumers));
    }

  private:
    ClangTidyASTConsumerFactory &Factory;
    ClangTidyContext &Context;
    const std::vector<std::string> &EmbedRoots;
    std::atomic<bool> &Embedded;
    bool SkipSystemInstantiations;
    const std::atomic<bool> *Cancelled;
  };

public:
  /// Whether any unit this factory parsed met an #embed directive.
  bool embedded() const { return Embedded; }

private:
  ClangTidyContext &Context;
  ClangTidyASTConsumerFactory ConsumerFactory;
  const UnitRunOptions &Options;
  std::atomic<bool> Embedded{false};
};

bool inVersionControlMetadata(StringRef Path) {
  for (auto It = llvm::sys::path::begin(Path), End = llvm::sys::path::end(Path); It != End; ++It)
    if (*It == ".git" || *It == ".hg" || *It == ".svn")
      return true;
  return false;
}

std::string workTreeRoot(StringRef Dir) {
  SmallString<256> Here(Dir);
  for (StringRef At = Here; !At.empty(); At = llvm::sys::path::parent_path(At)) {
    SmallString<256> Git(At);
    llvm::sys::path::append(Git, ".git");
    if (llvm::sys::fs::exists(Git))
      return At.str();
  }
  return Dir.str();
}

bool isCompileError(const ClangTidyError &E) {
  return E.DiagLevel == ClangTidyError::Error &&
         StringRef(E.DiagnosticName).starts_with("clang-diagnostic");
}

bool hasCompileError(llvm::ArrayRef<FindingRecord> Errors) {
  return llvm::any_of(Errors, [](const FindingRecord &E) { return isCompileError(E); });
}

namespace {
/// Passes every diagnostic on to clang-tidy's consumer (NOLINT, the header
/// filter, fix merging) and keeps the facts the checks attached to theirs
/// (FindingFacts.h), to be joined with the errors clang-tidy's consumer keeps.
class FactsRecorder : public DiagnosticConsumer {
public:
  FactsRecorder(ClangTidyContext &Context, ClangTidyDiagnosticConsumer &Inner)
      : Context(Context), Inner(Inner) {}

  void BeginSourceFile(const LangOptions &LangOpts, const Preprocessor *PP) override {
    Inner.BeginSourceFile(LangOpts, PP);
  }
  void EndSourceFile() override { Inner.EndSourceFile(); }
  void finish() override { Inner.finish(); }
  bool IncludeInDiagnosticCounts() const override { return Inner.IncludeInDiagnosticCounts(); }
  void HandleDiagnostic(DiagnosticsEngine::Level Level, const clang::Diagnostic &Info) override {
    DiagnosticConsumer::HandleDiagnostic(Level, Info);
    if (std::optional<FindingFacts> Facts = factsOf(Info)) {
      SmallString<256> Formatted;
      Info.FormatDiagnostic(Formatted);
      // As clang-tidy's consumer keeps it: without the " [check-name]" its
      // diag() appends to the format.
      StringRef Message = Formatted;
      Message.consume_back(" [" + Context.getCheckName(Info.getID()) + "]");
      Entry Recording{{}, 0, *Facts};
      // Resolved now: the source manager ends with the TU. The location as
      // clang-tidy's renderer records it (the file location of a macro's).
      if (Info.hasSourceManager() && Info.getLocation().isValid()) {
        const SourceManager &SM = Info.getSourceManager();
        SourceLocation FileLoc = SM.getFileLoc(Info.getLocation());
        Recording.File = SM.getFilename(FileLoc).str();
        Recording.Offset = SM.getFileOffset(FileLoc);
      }
      Recorded[Message].push_back(std::move(Recording));
    }
    Inner.HandleDiagnostic(Level, Info);
  }

  /// clang-tidy's errors with the facts of each check's finding: matched by
  /// message and location (the same message at one location has the same facts).
  std::vector<FindingRecord> take() {
    std::vector<FindingRecord> Records;
    for (ClangTidyError &Error : Inner.take()) {
      std::optional<FindingFacts> Facts;
      auto Found = Recorded.find(Error.Message.Message);
      if (Found != Recorded.end()) {
        Facts = Found->second.front().Facts;
        for (const Entry &E : Found->second)
          if (E.Offset == Error.Message.FileOffset && E.File == Error.Message.FilePath)
            Facts = E.Facts;
      }
      Records.emplace_back(std::move(Error), Facts);
    }
    Recorded.clear();
    return Records;
  }

private:
  struct Entry {
    std::string File;
    unsigned Offset;
    FindingFacts Facts;
  };
  ClangTidyContext &Context;
  ClangTidyDiagnosticConsumer &Inner;
  llvm::StringMap<SmallVector<Entry, 1>> Recorded; // by rendered message
};
} // namespace

static std::vector<FindingRecord>
runChecksOnce(ClangTidyContext &Context, const CompilationDatabase &Compilations,
              llvm::ArrayRef<std::string> Files,
              const IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> &FileSystem,
              const UnitRunOptions &Options, const IntrusiveRefCntPtr<DiagnosticIDs> &IDs);

void prepareClangForThreads() {
  (void)clang::ast_matchers::internal::DynTypedMatcher::trueMatcher(
      clang::ASTNodeKind::getFromNodeKind<clang::Stmt>());
}

std::vector<FindingRecord> runChecks(ClangTidyContext &Context, const CompilationDatabase &Compilations,
                                     llvm::ArrayRef<std::string> Files,
                                     const IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> &FileSystem,
                                     const UnitRunOptions &Options) {
  // One set of diagnostic IDs for both parses: the context maps each check's
  // custom diagnostic ID to its name once, so a second parse numbering them
  // afresh would name a finding after the check that said something first in
  // the first parse.
  IntrusiveRefCntPtr<DiagnosticIDs> IDs = DiagnosticIDs::create();
  std::vector<FindingRecord> Errors = runChecksOnce(Context, Compilations, Files, FileSystem, Options, IDs);
  if (Options.PreambleOnly || (Options.Cancelled && Options.Cancelled->load()))
    return {};
  bool Shortcuts = !Options.SharedPch.empty() || Options.Preamble || Options.SkipSystemInstantiations;
  if (!Shortcuts || !hasCompileError(Errors))
    return Errors;
  if (!Options.ConfirmErrorsInMainFile && Files.size() == 1) {
    SmallString<256> Main(Files.front());
    llvm::sys::path::remove_dots(Main, true);
    for (const FindingRecord &E : Errors)
      if (isCompileError(E)) {
        SmallString<256> At(E.Message.FilePath);
        llvm::sys::path::remove_dots(At, true);
        if (At == Main)
          return Errors;
      }
  }
  // The shortcuts (a shared PCH, a preamble, skipped system instantiations)
  // must never change what compiles: a failure with them is confirmed by a
  // plain parse, as clang++ -fsyntax-only would do it (a header without
  // include guards read twice, a diagnostic only the skipping causes).
  UnitRunOptions Plain = Options;
  Plain.SharedPch.clear();
  Plain.Preamble = nullptr;
  Plain.SkipSystemInstantiations = false;
  if (Options.ReadFiles)
    Options.ReadFiles->clear();
  std::vector<FindingRecord> Confirmed = runChecksOnce(Context, Compilations, Files, FileSystem, Plain, IDs);
  if (!hasCompileError(Confirmed) && Options.ParsedPlainly)
    *Options.ParsedPlainly = true;
  return Confirmed;
}

static std::vector<FindingRecord>
runChecksOnce(ClangTidyContext &Context, const CompilationDatabase &Compilations,
              llvm::ArrayRef<std::string> Files,
              const IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> &FileSystem,
              const UnitRunOptions &Options, const IntrusiveRefCntPtr<DiagnosticIDs> &IDs) {
  ClangTool Tool(Compilations, Files, std::make_shared<PCHContainerOperations>(), FileSystem);
  // The ExtraArgs(Before) of the file's .clang-tidy, as clang-tidy adds them.
  Tool.appendArgumentsAdjuster([&Context](const CommandLineArguments &Args, StringRef File) {
    ClangTidyOptions Opts = Context.getOptionsForFile(File);
    CommandLineArguments Adjusted = Args;
    if (Opts.ExtraArgsBefore) {
      auto At = Adjusted.begin();
      if (At != Adjusted.end() && !StringRef(*At).starts_with("-"))
        ++At; // after the compiler's name
      Adjusted.insert(At, Opts.ExtraArgsBefore->begin(), Opts.ExtraArgsBefore->end());
    }
    if (Opts.ExtraArgs)
      Adjusted.insert(Adjusted.end(), Opts.ExtraArgs->begin(), Opts.ExtraArgs->end());
    return Adjusted;
  });
  Tool.appendArgumentsAdjuster(getStripPluginsAdjuster());
  Context.setEnableProfiling(Options.EnableCheckProfile);
  Context.setProfileStoragePrefix("");

  ClangTidyDiagnosticConsumer DiagConsumer(Context, nullptr, /*RemoveIncompatibleErrors=*/true,
                                           /*GetFixesFromNotes=*/false);
  FactsRecorder Recorder(Context, DiagConsumer);
  auto DiagOpts = std::make_unique<DiagnosticOptions>();
  DiagnosticsEngine Engine(IDs, *DiagOpts, &Recorder,
                           /*ShouldOwnClient=*/false);
  Context.setDiagnosticsEngine(std::move(DiagOpts), &Engine);
  Tool.setDiagnosticConsumer(&Recorder);
  PreambleAwareFactory Factory(Context, FileSystem, Options);
  // A failure with the shortcuts is not the user's until the plain parse confirms it.
  Tool.setPrintErrorMessage(Options.SharedPch.empty() && !Options.Preamble &&
                            !Options.SkipSystemInstantiations);
  Tool.run(&Factory);
  std::vector<FindingRecord> Errors = Recorder.take();
  // A unit that embeds a file: clang's messages can print its bytes (an
  // undefined template's argument list, a constexpr note), so none is quoted.
  if (Factory.embedded())
    for (FindingRecord &E : Errors)
      if (isCompileError(E)) {
        E.Message.Message = "clang's message is not shown: the unit embeds a file (#embed)";
        E.Notes.clear();
      }
  return Errors;
}

} // namespace torch_syncfree
