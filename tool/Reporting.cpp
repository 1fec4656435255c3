#include "Reporting.h"
#include "TextEncoding.h"
#include <unistd.h>
#include "SyncCheck.h"

#include "CheckCatalog.h"
#include "FixApplier.h"
#include "JsonLimits.h"
#include "InputFiles.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/FileManager.h"
#include "clang/Basic/Sarif.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/xxhash.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include <map>

using namespace clang;

namespace torch_syncfree {

/// A file's text and the offsets its lines start at (one pass per file, then
/// a binary search per finding: counting newlines per finding was quadratic).
struct LoadedFile {
  std::unique_ptr<llvm::MemoryBuffer> Buffer;
  std::vector<size_t> LineStarts;
  /// Whitespace-free text per line start, made once per line (a generated
  /// line can hold thousands of findings).
  llvm::DenseMap<size_t, std::string> NormalisedLines;
};

static void locate(ReportedFinding &F, llvm::StringMap<LoadedFile> &Files) {
  LoadedFile &File = Files[F.File];
  if (!File.Buffer) {
    auto Loaded = llvm::MemoryBuffer::getFile(F.File);
    if (!Loaded)
      return;
    File.Buffer = std::move(*Loaded);
    StringRef Text = File.Buffer->getBuffer();
    File.LineStarts.push_back(0);
    for (size_t I = 0; I < Text.size(); ++I)
      if (Text[I] == '\n')
        File.LineStarts.push_back(I + 1);
  }
  StringRef All = File.Buffer->getBuffer();
  size_t Offset = std::min<size_t>(F.Offset, All.size());
  auto Next = std::upper_bound(File.LineStarts.begin(), File.LineStarts.end(), Offset);
  F.Line = Next - File.LineStarts.begin();
  size_t LineStart = *(Next - 1);
  F.Column = Offset - LineStart + 1;
  // Whitespace-normalised: reformatting does not resurrect a baselined finding.
  auto [It, Inserted] = File.NormalisedLines.try_emplace(LineStart);
  if (Inserted)
    for (char C : All.substr(LineStart).split('\n').first)
      if (!isspace(static_cast<unsigned char>(C)))
        It->second += C;
  F.SourceLine = It->second;
}

std::string quotableCompileError(StringRef Message) {
  Message = Message.split('\n').first;
  for (StringRef Assertion : {"static assertion failed", "static_assert failed"})
    if (Message.starts_with(Assertion))
      return (Assertion + " (its message is not shown)").str();
  constexpr size_t Limit = 240;
  if (Message.size() <= Limit)
    return Message.str();
  return (Message.take_front(Limit) + "...").str();
}

std::string fileLineColumn(StringRef File, unsigned Offset) {
  ReportedFinding Where;
  Where.File = File.str();
  Where.Offset = Offset;
  llvm::StringMap<LoadedFile> Files;
  locate(Where, Files);
  if (Where.Line == 0)
    return File.str(); // unreadable now: the path alone
  return File.str() + ":" + std::to_string(Where.Line) + ":" + std::to_string(Where.Column);
}

/// Makes the paths of a finding and of its fixes absolute (compile databases
/// name files relative to their build directory), so fixes and reports do not
/// depend on the directory torch-syncfree runs in.
std::vector<std::string> configProblems(const tidy::ClangTidyOptions &Options) {
  std::vector<std::string> Problems;
  if (Options.Checks)
    for (StringRef Glob : llvm::split(*Options.Checks, ',')) {
      Glob = Glob.trim();
      if (Glob.empty() || Glob.starts_with("-") || Glob.contains('*'))
        continue;
      if (!findCheck(Glob))
        Problems.push_back("unknown check '" + Glob.str() + "' (--list-checks shows them)");
    }
  for (const auto &Entry : Options.CheckOptions) {
    StringRef Key = Entry.getKey();
    StringRef Check = Key.rsplit('.').first;
    if (Check.starts_with("torch-sync-") && !findCheck(Check))
      Problems.push_back("option '" + Key.str() + "' names an unknown check");
  }
  return Problems;
}

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
collectFindings(const std::vector<FindingRecord> &Errors) {
  llvm::StringMap<LoadedFile> Files;
  std::vector<ReportedFinding> Findings;
  for (const FindingRecord &Error : Errors) {
    if (!StringRef(Error.DiagnosticName).starts_with("torch-sync-"))
      continue;
    ReportedFinding F;
    F.Check = Error.DiagnosticName;
    F.File = Error.Message.FilePath;
    F.Offset = Error.Message.FileOffset;
    locate(F, Files);
    F.Message = Error.Message.Message;
    F.WarningAsError = Error.IsWarningAsError;
    F.Level = Error.DiagLevel == tidy::ClangTidyError::Error || Error.IsWarningAsError ? "error"
              : Error.DiagLevel == tidy::ClangTidyError::Remark                        ? "note"
                                                                                        : "warning";
    for (const tooling::DiagnosticMessage &Note : Error.Notes)
      F.Notes.push_back({Note.FilePath, Note.FileOffset, Note.Message});
    F.Dependency = Error.Facts ? dependencyName(Error.Facts->Class) : "unknown";
    F.Facts = Error.Facts.value_or(FindingFacts());
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
  for (const ReportedFinding &F : Findings) {
    llvm::json::Object O{{"check", F.Check},
                         {"file", F.File},
                         {"line", F.Line},
                         {"column", F.Column},
                         {"message", F.Message},
                         {"dependency", F.Dependency},
                         {"fixable", F.Fixable}};
    addPublicFactsOrNull(F.Facts, O);
    // With --profile (ProfileJoin.h): what the program's run measured here.
    if (F.Profiled)
      O["measured"] = llvm::json::Object{{"count", static_cast<int64_t>(F.MeasuredCount)},
                                         {"per_step", F.MeasuredPerStep},
                                         {"wait_ms", F.MeasuredWaitMs},
                                         {"executed", F.MeasuredCount > 0}};
    Array.push_back(std::move(O));
  }
  OS << llvm::formatv("{0:2}", llvm::json::Value(std::move(Array))) << "\n";
}

/// Path relative to Dir when it lies under Dir, else nullopt.
static std::optional<StringRef> relativeUnder(StringRef Path, StringRef Dir) {
  if (Path.consume_front(Dir) && Path.consume_front("/"))
    return Path;
  return std::nullopt;
}

std::string checkDocsUrl(StringRef Check) {
  const CheckInfo *Info = findCheck(Check);
  if (!Info)
    return "";
  return ("https://github.com/torch-syncfree/torch-syncfree/blob/main/" + Info->DocPath).str();
}

/// The check pages, embedded at build time (tool/CMakeLists.txt).
static StringRef checkDoc(StringRef Check) {
  static const std::pair<StringRef, StringRef> Docs[] = {
#include "CheckDocs.inc"
  };
  for (const auto &[Name, Text] : Docs)
    if (Name == Check)
      return Text;
  return "";
}

/// "torch-sync-host-to-device" -> "TorchSyncHostToDevice": SARIF wants a
/// readable name distinct from the opaque id.
static std::string ruleName(StringRef Id) {
  std::string Name;
  bool Upper = true;
  for (char C : Id) {
    if (C == '-') {
      Upper = true;
      continue;
    }
    Name += Upper ? llvm::toUpper(C) : C;
    Upper = false;
  }
  return Name;
}

namespace {
/// Line and UTF-16 column (1-based) of byte offsets in one file's text, as
/// SARIF's "utf16CodeUnits" column kind (what GitHub reads). Offsets past the
/// end of a file that shrank since it was parsed are clamped.
struct TextPositions {
  StringRef Text;
  std::pair<unsigned, unsigned> at(size_t Offset) const {
    LinePosition P = positionOf(Text, Offset, ColumnUnit::Utf16CodeUnits);
    return {P.Line + 1, static_cast<unsigned>(P.Column) + 1};
  }
};
} // namespace

std::string sarifRootFor(StringRef Cwd) {
  // The repository root (the nearest directory with .git), else Cwd.
  for (StringRef Dir = Cwd; !Dir.empty(); Dir = llvm::sys::path::parent_path(Dir)) {
    SmallString<256> Git(Dir);
    llvm::sys::path::append(Git, ".git");
    if (llvm::sys::fs::exists(Git))
      return Dir.str();
    if (llvm::sys::path::parent_path(Dir) == Dir)
      break;
  }
  return Cwd.str();
}

/// A SARIF result's properties: the record's facts, and with --profile what
/// the program's run measured at the finding.
static llvm::json::Object findingProperties(const ReportedFinding &F) {
  llvm::json::Object P{{"dependency", F.Dependency}, {"fixable", F.Fixable}};
  addPublicFacts(F.Facts, P);
  if (F.Profiled) {
    P["measuredCount"] = static_cast<int64_t>(F.MeasuredCount);
    P["measuredWaitMs"] = F.MeasuredWaitMs;
    P["executed"] = F.MeasuredCount > 0;
  }
  return P;
}

void printSarif(const std::vector<ReportedFinding> &Findings, StringRef Root,
                StringRef ToolVersion, llvm::raw_ostream &OS, llvm::ArrayRef<ConfigNotice> Notices) {
  // Hand-written on llvm::json: clang's SarifDocumentWriter has no
  // uriBaseId/originalUriBaseIds, partialFingerprints, rule help or fixes,
  // and it needs a live SourceManager over files that may have changed.
  namespace json = llvm::json;
  SmallString<256> RootDir(Root);
  llvm::sys::path::remove_dots(RootDir, true);
  std::string RootUri = uriFromPath(RootDir);
  if (!StringRef(RootUri).ends_with("/"))
    RootUri += "/";

  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> Texts;
  auto TextOf = [&](StringRef File) -> TextPositions {
    auto &Buffer = Texts[File];
    if (!Buffer)
      if (auto Loaded = llvm::MemoryBuffer::getFile(File))
        Buffer = std::move(*Loaded);
    return TextPositions{Buffer ? Buffer->getBuffer() : StringRef()};
  };
  std::vector<std::string> ArtifactPaths;
  llvm::StringMap<unsigned> ArtifactIndex;
  auto Location = [&](StringRef File) {
    auto [It, Inserted] = ArtifactIndex.try_emplace(File, ArtifactPaths.size());
    if (Inserted)
      ArtifactPaths.push_back(File.str());
    json::Object L;
    if (std::optional<StringRef> Rel = relativeUnder(File, RootDir)) {
      L["uri"] = percentEncodePath(*Rel);
      L["uriBaseId"] = "%SRCROOT%";
    } else {
      L["uri"] = uriFromPath(File);
    }
    L["index"] = It->second;
    return L;
  };
  auto Region = [&](StringRef File, size_t Offset, size_t Length) {
    TextPositions Text = TextOf(File);
    auto [StartLine, StartColumn] = Text.at(Offset);
    auto [EndLine, EndColumn] = Text.at(Offset + Length);
    return json::Object{{"startLine", StartLine}, {"startColumn", StartColumn},
                        {"endLine", EndLine}, {"endColumn", EndColumn}};
  };

  json::Array Rules;
  llvm::StringMap<unsigned> RuleIndex;
  for (const CheckInfo &Info : checkCatalog()) {
    RuleIndex[Info.Name] = Rules.size();
    std::string HelpUri = checkDocsUrl(Info.Name);
    StringRef Doc = checkDoc(Info.Name);
    std::string Markdown = Doc.empty() ? ("See " + HelpUri) : Doc.str();
    std::string Level = Info.DefaultLevel.str();
    Rules.push_back(json::Object{
        {"id", Info.Name},
        {"name", ruleName(Info.Name)},
        {"shortDescription", json::Object{{"text", Info.Summary}}},
        {"fullDescription", json::Object{{"text", Info.Summary.str() +
                                                      ". Host-device synchronisation in LibTorch "
                                                      "code: the CPU waits for the GPU."}}},
        {"help", json::Object{{"text", Markdown}, {"markdown", Markdown}}},
        {"helpUri", HelpUri},
        {"defaultConfiguration", json::Object{{"level", Level}}},
        {"properties", json::Object{{"tags", json::Array{"performance", "libtorch", "cuda",
                                                         "synchronization"}},
                                    {"precision", "high"},
                                    {"problem.severity", Level == "error" ? "error" : "warning"}}}});
  }

  // Fingerprints: the baseline's key (check, file, whitespace-free line
  // text) and its occurrence number, so they survive unrelated edits.
  std::map<std::tuple<std::string, std::string, std::string>, unsigned> Occurrences;
  json::Array Results;
  for (const ReportedFinding &F : Findings) {
    auto Rule = RuleIndex.find(F.Check);
    if (Rule == RuleIndex.end())
      continue;
    StringRef Rel = relativeUnder(F.File, RootDir).value_or(F.File);
    unsigned Occurrence = Occurrences[{F.Check, Rel.str(), F.SourceLine}]++;
    std::string Key = F.Check + "\n" + Rel.str() + "\n" + F.SourceLine + "\n" +
                      std::to_string(Occurrence);
    json::Object Result{
        {"ruleId", F.Check},
        {"ruleIndex", Rule->second},
        {"level", F.Level},
        {"message", json::Object{{"text", F.Message}}},
        {"locations",
         json::Array{json::Object{
             {"physicalLocation",
              json::Object{{"artifactLocation", Location(F.File)},
                           {"region", Region(F.File, F.Offset, 0)}}}}}},
        {"partialFingerprints",
         json::Object{{"torchSyncfreeFinding/v1", llvm::utohexstr(llvm::xxh3_64bits(Key))}}},
        {"properties", findingProperties(F)}};
    json::Array Related;
    for (const ReportedNote &N : F.Notes) {
      if (N.File.empty())
        continue;
      Related.push_back(json::Object{
          {"id", Related.size()},
          {"message", json::Object{{"text", "The repository's " +
                                                 llvm::sys::path::filename(N.File).str() +
                                                 " " + N.Message}}},
          {"physicalLocation", json::Object{{"artifactLocation", Location(N.File)},
                                            {"region", Region(N.File, N.Offset, 0)}}}});
    }
    if (!Related.empty())
      Result["relatedLocations"] = std::move(Related);
    if (!F.Fix.empty()) {
      // One artifactChange per file, its replacements in file order.
      std::map<std::string, json::Array> PerFile;
      for (const ReportedReplacement &R : F.Fix)
        PerFile[R.File].push_back(json::Object{
            {"deletedRegion", Region(R.File, R.Offset, R.Length)},
            {"insertedContent", json::Object{{"text", R.Text}}}});
      json::Array Changes;
      for (auto &[File, Replacements] : PerFile)
        Changes.push_back(json::Object{{"artifactLocation", Location(File)},
                                       {"replacements", std::move(Replacements)}});
      Result["fixes"] = json::Array{json::Object{
          {"description", json::Object{{"text", "torch-syncfree fix for " + F.Check}}},
          {"artifactChanges", std::move(Changes)}}};
    }
    Results.push_back(std::move(Result));
  }

  // What the repository's configuration did to the checks (issue 23): CI sees it.
  json::Array Notifications;
  for (const ConfigNotice &N : Notices) {
    json::Object Where{{"artifactLocation", Location(N.File)}};
    Notifications.push_back(json::Object{
        {"level", "warning"},
        {"message", json::Object{{"text", "The repository's " +
                                                 llvm::sys::path::filename(N.File).str() +
                                                 " " + N.Message}}},
        {"locations", json::Array{json::Object{{"physicalLocation", std::move(Where)}}}}});
  }
  json::Array Artifacts;
  for (const std::string &Path : ArtifactPaths) {
    json::Object L = Location(Path);
    L.erase("index");
    StringRef Ext = llvm::sys::path::extension(Path);
    if (llvm::sys::path::filename(Path) == ".clang-tidy") {
      Artifacts.push_back(json::Object{{"location", std::move(L)},
                                       {"roles", json::Array{"userSpecifiedConfiguration"}}});
      continue;
    }
    Artifacts.push_back(json::Object{
        {"location", std::move(L)},
        {"roles", json::Array{"analysisTarget"}},
        {"sourceLanguage", Ext == ".cu" || Ext == ".cuh" ? "cuda" : "cplusplus"}});
  }
  json::Object Run{
      {"tool", json::Object{{"driver",
                             json::Object{{"name", "torch-syncfree"},
                                          {"version", ToolVersion},
                                          {"informationUri",
                                           "https://github.com/torch-syncfree/torch-syncfree"},
                                          {"rules", std::move(Rules)}}}}},
      {"originalUriBaseIds",
       json::Object{{"%SRCROOT%", json::Object{{"uri", RootUri}}}}},
      {"artifacts", std::move(Artifacts)},
      {"columnKind", "utf16CodeUnits"},
      {"results", std::move(Results)}};
  if (!Notifications.empty())
    Run["invocations"] = json::Array{json::Object{
        {"executionSuccessful", true},
        {"toolConfigurationNotifications", std::move(Notifications)}}};
  json::Object Document{{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
                        {"version", "2.1.0"},
                        {"runs", json::Array{std::move(Run)}}};
  OS << llvm::formatv("{0:2}", json::Value(std::move(Document))) << "\n";
}

static std::string relativeToCwd(StringRef Path) {
  SmallString<256> Cwd;
  llvm::sys::fs::current_path(Cwd);
  return relativeUnder(Path, Cwd).value_or(Path).str();
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

namespace {
using BaselineEntries = std::map<std::tuple<std::string, std::string, std::string>, unsigned>;

/// The entries of a baseline's text (a multiset: two identical lines in a file
/// need two entries), or an error message.
std::string parseBaseline(StringRef Text, StringRef Path, BaselineEntries &Known) {
  std::string Deep = checkJsonNesting(Text);
  if (!Deep.empty())
    return "baseline '" + printable(Path) + "' is not a torch-syncfree baseline: " + Deep;
  llvm::Expected<llvm::json::Value> Parsed = llvm::json::parse(Text);
  if (!Parsed) {
    std::string Message = llvm::toString(Parsed.takeError());
    return "baseline '" + printable(Path) + "' is not JSON: " + Message;
  }
  const llvm::json::Object *Root = Parsed->getAsObject();
  const llvm::json::Array *Entries = Root ? Root->getArray("findings") : nullptr;
  if (!Root || !Root->getInteger("torch-syncfree-baseline") || !Entries)
    return "baseline '" + printable(Path) +
           "' is not a torch-syncfree baseline (write one with --write-baseline)";
  for (const llvm::json::Value &Entry : *Entries) {
    const llvm::json::Object *E = Entry.getAsObject();
    auto Check = E ? E->getString("check") : std::nullopt;
    auto File = E ? E->getString("file") : std::nullopt;
    auto Line = E ? E->getString("line") : std::nullopt;
    if (!Check || !File || !Line)
      return "baseline '" + printable(Path) + "' has an entry without check, file and line";
    ++Known[{Check->str(), File->str(), Line->str()}];
  }
  return "";
}
} // namespace

std::string applyBaseline(std::vector<ReportedFinding> &Findings, StringRef Path,
                          unsigned &Suppressed, const std::optional<std::string> &BaseText,
                          std::vector<std::string> *Gained) {
  // The bounded reader: a baseline linked to /dev/zero or /dev/stdin is refused.
  std::string Why;
  std::unique_ptr<llvm::MemoryBuffer> Buffer = readInputFile(Path, uint64_t(64) << 20, Why);
  if (!Buffer)
    return "cannot read baseline '" + printable(Path) + "': " + Why;
  BaselineEntries Known, Before;
  if (std::string Error = parseBaseline(Buffer->getBuffer(), Path, Known); !Error.empty())
    return Error;
  // The baseline at the ref under review; unreadable there counts as empty.
  if (BaseText && !BaseText->empty() && !parseBaseline(*BaseText, Path, Before).empty())
    Before.clear();
  std::vector<ReportedFinding> Kept;
  for (ReportedFinding &F : Findings) {
    auto Key = std::make_tuple(F.Check, relativeToCwd(F.File), F.SourceLine);
    auto It = Known.find(Key);
    if (It != Known.end() && It->second > 0) {
      --It->second;
      ++Suppressed;
      if (BaseText && Gained) {
        auto Old = Before.find(Key);
        if (Old != Before.end() && Old->second > 0)
          --Old->second;
        else
          Gained->push_back(printable(relativeToCwd(F.File)) + ":" + std::to_string(F.Line) +
                            " [" + F.Check + "]");
      }
      continue;
    }
    Kept.push_back(std::move(F));
  }
  Findings = std::move(Kept);
  return "";
}

StdoutToStderr::StdoutToStderr() {
  llvm::outs().flush();
  Saved = ::dup(1);
  if (Saved >= 0)
    ::dup2(2, 1);
}

StdoutToStderr::~StdoutToStderr() {
  llvm::outs().flush();
  if (Saved >= 0) {
    ::dup2(Saved, 1);
    ::close(Saved);
  }
}

} // namespace torch_syncfree
