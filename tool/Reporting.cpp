#include "Reporting.h"
#include "SyncCheck.h"

#include "CheckCatalog.h"
#include "FixApplier.h"
#include "JsonLimits.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/FileManager.h"
#include "clang/Basic/Sarif.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace clang;

namespace torch_syncfree {

/// Line, column (1-based) and the normalised text of the line of a byte offset.
static void locate(ReportedFinding &F,
                   llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> &Files) {
  auto &Buffer = Files[F.File];
  if (!Buffer) {
    auto Loaded = llvm::MemoryBuffer::getFile(F.File);
    if (!Loaded)
      return;
    Buffer = std::move(*Loaded);
  }
  StringRef All = Buffer->getBuffer();
  StringRef Text = All.take_front(F.Offset);
  F.Line = 1 + Text.count('\n');
  size_t LastNewline = Text.rfind('\n');
  size_t LineStart = LastNewline == StringRef::npos ? 0 : LastNewline + 1;
  F.Column = F.Offset - LineStart + 1;
  StringRef LineText = All.substr(LineStart).split('\n').first;
  // Whitespace-normalised: reformatting does not resurrect a baselined finding.
  std::string Normalised;
  for (char C : LineText)
    if (!isspace(static_cast<unsigned char>(C)))
      Normalised += C;
  F.SourceLine = Normalised;
}

/// Makes the paths of a finding and of its fixes absolute (compile databases
/// name files relative to their build directory), so fixes and reports do not
/// depend on the directory torch-syncfree runs in.
void makePathsAbsolute(tidy::ClangTidyError &Error) {
  auto Absolute = [&](StringRef Path) -> std::string {
    if (Path.empty())
      return Path.str();
    llvm::SmallString<256> Joined(Error.BuildDirectory);
    if (llvm::sys::path::is_absolute(Path))
      Joined = Path;
    else
      llvm::sys::path::append(Joined, Path);
    llvm::sys::path::remove_dots(Joined, /*remove_dot_dot=*/true);
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

std::vector<ReportedFinding>
collectFindings(const std::vector<tidy::ClangTidyError> &Errors) {
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> Files;
  std::vector<ReportedFinding> Findings;
  for (const tidy::ClangTidyError &Error : Errors) {
    if (!StringRef(Error.DiagnosticName).starts_with("torch-sync-"))
      continue;
    ReportedFinding F;
    F.Check = Error.DiagnosticName;
    F.File = Error.Message.FilePath;
    F.Offset = Error.Message.FileOffset;
    locate(F, Files);
    F.Message = Error.Message.Message;
    F.Dependency = dependencyName(dependencyFromMessage(F.Message).value_or(Dependency::True));
    for (const auto &Entry : Error.Message.Fix)
      for (const tooling::Replacement &R : Entry.second) {
        F.Fixable = true;
        F.Fix.push_back({R.getFilePath().str(), R.getOffset(), R.getLength(),
                         R.getReplacementText().str()});
      }
    Findings.push_back(std::move(F));
  }
  return Findings;
}

void printJson(const std::vector<ReportedFinding> &Findings, llvm::raw_ostream &OS) {
  llvm::json::Array Array;
  for (const ReportedFinding &F : Findings)
    Array.push_back(llvm::json::Object{{"check", F.Check},
                                       {"file", F.File},
                                       {"line", F.Line},
                                       {"column", F.Column},
                                       {"message", F.Message},
                                       {"dependency", F.Dependency},
                                       {"fixable", F.Fixable}});
  OS << llvm::formatv("{0:2}", llvm::json::Value(std::move(Array))) << "\n";
}

static constexpr const char *DocsBase =
    "https://github.com/torch-syncfree/torch-syncfree/blob/main/";

void printSarif(const std::vector<ReportedFinding> &Findings, llvm::raw_ostream &OS) {
  // A SourceManager over the files with findings, for clang's SARIF writer.
  FileManager Files{FileSystemOptions()};
  DiagnosticOptions DiagOpts;
  DiagnosticsEngine Diags(DiagnosticIDs::create(), DiagOpts);
  SourceManager SM(Diags, Files);
  llvm::StringMap<FileID> IDs;
  SarifDocumentWriter Writer(SM);
  Writer.createRun("torch-syncfree", "torch-syncfree: host-device synchronisations in LibTorch code",
                   "0.1");
  llvm::StringMap<size_t> RuleIndex;
  for (const CheckInfo &Info : checkCatalog())
    RuleIndex[Info.Name] = Writer.createRule(SarifRule::create()
                                                 .setRuleId(Info.Name)
                                                 .setName(Info.Name)
                                                 .setDescription(Info.Summary)
                                                 .setHelpURI((DocsBase + Info.DocPath).str()));
  for (const ReportedFinding &F : Findings) {
    auto Rule = RuleIndex.find(F.Check);
    if (Rule == RuleIndex.end())
      continue;
    FileID &ID = IDs[F.File];
    if (ID.isInvalid())
      if (auto Entry = Files.getOptionalFileRef(F.File))
        ID = SM.createFileID(*Entry, SourceLocation(), SrcMgr::C_User);
    SarifResult Result = SarifResult::create(Rule->second)
                             .setRuleId(F.Check)
                             .setDiagnosticMessage(F.Message)
                             .setDiagnosticLevel(SarifResultLevel::Warning);
    if (ID.isValid()) {
      SourceLocation Loc = SM.getLocForStartOfFile(ID).getLocWithOffset(F.Offset);
      Result = Result.addLocations({CharSourceRange::getCharRange(Loc, Loc.getLocWithOffset(1))});
    }
    Writer.appendResult(Result);
  }
  Writer.endRun();
  llvm::json::Object Document = Writer.createDocument();
  // clang's writer has no fixes: add them to each result as SARIF `fix` objects,
  // with regions given as character offsets.
  if (auto *Runs = Document.getArray("runs"))
    if (!Runs->empty())
      if (auto *Results = (*Runs)[0].getAsObject()->getArray("results")) {
        size_t Index = 0;
        for (const ReportedFinding &F : Findings) {
          if (RuleIndex.find(F.Check) == RuleIndex.end())
            continue;
          llvm::json::Object *Result = (*Results)[Index++].getAsObject();
          if (F.Fix.empty() || !Result)
            continue;
          llvm::json::Array Changes;
          for (const ReportedReplacement &R : F.Fix) {
            SmallString<256> URI("file://");
            URI += R.File;
            Changes.push_back(llvm::json::Object{
                {"artifactLocation", llvm::json::Object{{"uri", std::string(URI)}}},
                {"replacements",
                 llvm::json::Array{llvm::json::Object{
                     {"deletedRegion", llvm::json::Object{{"charOffset", R.Offset},
                                                          {"charLength", R.Length}}},
                     {"insertedContent", llvm::json::Object{{"text", R.Text}}}}}}});
          }
          Result->try_emplace(
              "fixes", llvm::json::Array{llvm::json::Object{
                           {"description", llvm::json::Object{{"text", "torch-syncfree fix-it"}}},
                           {"artifactChanges", std::move(Changes)}}});
        }
      }
  OS << llvm::formatv("{0:2}", llvm::json::Value(std::move(Document))) << "\n";
}

static std::string relativeToCwd(StringRef Path) {
  SmallString<256> Cwd;
  llvm::sys::fs::current_path(Cwd);
  StringRef Rel = Path;
  if (Rel.consume_front(Cwd) && Rel.consume_front("/"))
    return Rel.str();
  return Path.str();
}

std::string writeBaseline(const std::vector<ReportedFinding> &Findings, StringRef Path) {
  llvm::json::Array Entries;
  for (const ReportedFinding &F : Findings)
    Entries.push_back(llvm::json::Object{{"check", F.Check},
                                         {"file", relativeToCwd(F.File)},
                                         {"line", F.SourceLine}});
  llvm::json::Object Root{{"torch-syncfree-baseline", 1}, {"findings", std::move(Entries)}};
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  OS << llvm::formatv("{0:2}", llvm::json::Value(std::move(Root))) << "\n";
  return writeFileAtomically(Path, Text);
}

std::string applyBaseline(std::vector<ReportedFinding> &Findings, StringRef Path,
                          unsigned &Suppressed) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  if (!Buffer)
    return "cannot read baseline '" + Path.str() + "': " + Buffer.getError().message();
  std::string Deep = checkJsonNesting((*Buffer)->getBuffer());
  if (!Deep.empty())
    return "baseline '" + Path.str() + "' is not a torch-syncfree baseline: " + Deep;
  llvm::Expected<llvm::json::Value> Parsed = llvm::json::parse((*Buffer)->getBuffer());
  if (!Parsed) {
    std::string Message = llvm::toString(Parsed.takeError());
    return "baseline '" + Path.str() + "' is not JSON: " + Message;
  }
  const llvm::json::Object *Root = Parsed->getAsObject();
  const llvm::json::Array *Entries = Root ? Root->getArray("findings") : nullptr;
  if (!Root || !Root->getInteger("torch-syncfree-baseline") || !Entries)
    return "baseline '" + Path.str() + "' is not a torch-syncfree baseline (write one with "
                                       "--write-baseline)";
  // A multiset: two identical lines in a file need two baseline entries.
  std::map<std::tuple<std::string, std::string, std::string>, unsigned> Known;
  for (const llvm::json::Value &Entry : *Entries) {
    const llvm::json::Object *E = Entry.getAsObject();
    auto Check = E ? E->getString("check") : std::nullopt;
    auto File = E ? E->getString("file") : std::nullopt;
    auto Line = E ? E->getString("line") : std::nullopt;
    if (!Check || !File || !Line)
      return "baseline '" + Path.str() + "' has an entry without check, file and line";
    ++Known[{Check->str(), File->str(), Line->str()}];
  }
  std::vector<ReportedFinding> Kept;
  for (ReportedFinding &F : Findings) {
    auto It = Known.find({F.Check, relativeToCwd(F.File), F.SourceLine});
    if (It != Known.end() && It->second > 0) {
      --It->second;
      ++Suppressed;
      continue;
    }
    Kept.push_back(std::move(F));
  }
  Findings = std::move(Kept);
  return "";
}

} // namespace torch_syncfree
