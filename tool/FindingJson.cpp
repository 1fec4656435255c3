#include "FindingJson.h"

#include "clang/Basic/Diagnostic.h"
#include "llvm/ADT/StringExtras.h"
#include <limits>

using namespace clang;
using namespace clang::tidy;
namespace json = llvm::json;

namespace torch_syncfree {

json::Value bytesToJson(llvm::StringRef Bytes) {
  if (json::isUTF8(Bytes))
    return Bytes.str();
  return json::Object{{"hex", llvm::toHex(Bytes, /*LowerCase=*/true)}};
}

std::optional<std::string> bytesFromJson(const json::Value *Value) {
  if (!Value)
    return std::nullopt;
  if (auto Text = Value->getAsString())
    return Text->str();
  const json::Object *Object = Value->getAsObject();
  auto Hex = Object && Object->size() == 1 ? Object->getString("hex") : std::nullopt;
  std::string Bytes;
  if (!Hex || !llvm::tryGetFromHex(*Hex, Bytes))
    return std::nullopt;
  return Bytes;
}

namespace {

json::Object message(const tooling::DiagnosticMessage &M) {
  json::Array Fix, Ranges;
  for (const auto &[File, Replacements] : M.Fix)
    for (const tooling::Replacement &R : Replacements)
      Fix.push_back(json::Object{{"file", bytesToJson(R.getFilePath())},
                                 {"offset", R.getOffset()},
                                 {"length", R.getLength()},
                                 {"text", bytesToJson(R.getReplacementText())}});
  for (const tooling::FileByteRange &R : M.Ranges)
    Ranges.push_back(json::Object{{"file", bytesToJson(R.FilePath)}, {"offset", R.FileOffset}, {"length", R.Length}});
  return json::Object{{"message", bytesToJson(M.Message)},
                      {"file", bytesToJson(M.FilePath)},
                      {"offset", M.FileOffset},
                      {"fix", std::move(Fix)},
                      {"ranges", std::move(Ranges)}};
}

bool readMessage(const json::Object *O, tooling::DiagnosticMessage &M) {
  if (!O)
    return false;
  auto Text = bytesFromJson(O->get("message"));
  auto File = bytesFromJson(O->get("file"));
  auto Offset = O->getInteger("offset");
  const json::Array *Fix = O->getArray("fix");
  const json::Array *Ranges = O->getArray("ranges");
  if (!Text || !File || !Offset || !Fix || !Ranges)
    return false;
  M.Message = *Text;
  M.FilePath = *File;
  M.FileOffset = static_cast<unsigned>(*Offset);
  for (const json::Value &V : *Fix) {
    const json::Object *R = V.getAsObject();
    auto RFile = R ? bytesFromJson(R->get("file")) : std::nullopt;
    auto ROffset = R ? R->getInteger("offset") : std::nullopt;
    auto RLength = R ? R->getInteger("length") : std::nullopt;
    auto RText = R ? bytesFromJson(R->get("text")) : std::nullopt;
    if (!RFile || !ROffset || !RLength || !RText)
      return false;
    if (llvm::Error E = M.Fix[*RFile].add(tooling::Replacement(
            *RFile, static_cast<unsigned>(*ROffset), static_cast<unsigned>(*RLength), *RText))) {
      llvm::consumeError(std::move(E));
      return false;
    }
  }
  for (const json::Value &V : *Ranges) {
    const json::Object *R = V.getAsObject();
    auto RFile = R ? bytesFromJson(R->get("file")) : std::nullopt;
    auto ROffset = R ? R->getInteger("offset") : std::nullopt;
    auto RLength = R ? R->getInteger("length") : std::nullopt;
    if (!RFile || !ROffset || !RLength)
      return false;
    tooling::FileByteRange Range;
    Range.FilePath = *RFile;
    Range.FileOffset = static_cast<unsigned>(*ROffset);
    Range.Length = static_cast<unsigned>(*RLength);
    M.Ranges.push_back(std::move(Range));
  }
  return true;
}


} // namespace

json::Array findingsToJson(const std::vector<FindingRecord> &Errors) {
  json::Array Findings;
  for (const FindingRecord &E : Errors) {
    json::Array Notes;
    for (const tooling::DiagnosticMessage &Note : E.Notes)
      Notes.push_back(message(Note));
    json::Object Finding{{"check", E.DiagnosticName},
                         {"level", static_cast<int>(E.DiagLevel)},
                         {"buildDirectory", bytesToJson(E.BuildDirectory)},
                         {"warningAsError", E.IsWarningAsError},
                         {"message", message(E.Message)},
                         {"notes", std::move(Notes)}};
    if (std::optional<FindingFacts> Facts = E.Facts)
      Finding["facts"] = factsToJson(*Facts);
    Findings.push_back(std::move(Finding));
  }
  return Findings;
}

std::optional<std::vector<FindingRecord>> findingsFromJson(const json::Array &Findings) {
  std::vector<FindingRecord> Errors;
  for (const json::Value &V : Findings) {
    const json::Object *F = V.getAsObject();
    auto Name = F ? F->getString("check") : std::nullopt;
    auto Level = F ? F->getInteger("level") : std::nullopt;
    auto BuildDirectory = F ? bytesFromJson(F->get("buildDirectory")) : std::nullopt;
    auto AsError = F ? F->getBoolean("warningAsError") : std::nullopt;
    const json::Array *Notes = F ? F->getArray("notes") : nullptr;
    if (!Name || !Level || !BuildDirectory || !AsError || !Notes || *Level < 0 ||
        *Level > static_cast<int64_t>(DiagnosticsEngine::Fatal))
      return std::nullopt;
    FindingRecord E(ClangTidyError(Name->str(), static_cast<ClangTidyError::Level>(*Level),
                                   *BuildDirectory, *AsError));
    // A check's finding carries its facts; a compiler diagnostic has none.
    if (const json::Object *Facts = F->getObject("facts")) {
      E.Facts = factsFromJson(*Facts);
      if (!E.Facts)
        return std::nullopt;
    } else if (Name->starts_with("torch-sync-")) {
      return std::nullopt;
    }
    if (!readMessage(F->getObject("message"), E.Message))
      return std::nullopt;
    for (const json::Value &N : *Notes) {
      tooling::DiagnosticMessage Note;
      if (!readMessage(N.getAsObject(), Note))
        return std::nullopt;
      E.Notes.push_back(std::move(Note));
    }
    Errors.push_back(std::move(E));
  }
  return Errors;
}

} // namespace torch_syncfree
