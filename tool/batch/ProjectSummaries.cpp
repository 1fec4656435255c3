// Issue 42: facts across the units of one batch run. torch-sync-call-in-loop,
// run with `ProjectSummaries` (Config.cpp sets it for batch runs), says as
// remarks what each externally visible function of its main file waits for
// ("define") and which calls in loops go to functions with no body in the unit
// ("call"). Here, after every unit (workers and the results cache carry the
// remarks like any finding), each call is joined with the definition's summary
// into the finding the check would have made had both been in one unit; the
// remarks are then removed. A NOLINT at the call suppresses its remark, so the
// finding too. Deterministic: units are read in file order, the first
// definition of a name wins.
#include "SyncCheck.h"
#include "batch/Batch.h"

#include "llvm/Support/JSON.h"
#include <map>

using namespace clang;
using namespace llvm;

namespace torch_syncfree {

namespace {

struct CallRecord {
  size_t Unit;
  FindingRecord Remark;
  json::Object Record;
};
} // namespace

/// The record a summary remark carries; nullopt for any other finding.
static std::optional<json::Object> summaryRecord(const FindingRecord &E) {
  if (E.DiagLevel != tidy::ClangTidyError::Remark || E.DiagnosticName != ProjectSummaryCheck ||
      !StringRef(E.Message.Message).starts_with(ProjectSummaryPrefix))
    return std::nullopt;
  Expected<json::Value> Parsed =
      json::parse(StringRef(E.Message.Message).drop_front(ProjectSummaryPrefix.size()));
  if (!Parsed) {
    consumeError(Parsed.takeError());
    return std::nullopt;
  }
  if (json::Object *Object = Parsed->getAsObject())
    return std::move(*Object);
  return std::nullopt;
}

/// The finding at a call of a function another unit defines.
static std::optional<FindingRecord> joinedFinding(const CallRecord &Call, const json::Object &Wait) {
  auto What = Wait.getString("what");
  auto File = Wait.getString("file");
  auto Offset = Wait.getInteger("offset");
  auto Class = Wait.getString("class");
  auto Reason = Wait.getString("reason");
  auto Name = Call.Record.getString("name");
  const json::Object *Remedies = Wait.getObject("remedy");
  std::optional<Dependency> Kind = Class ? dependencyNamed(*Class) : std::nullopt;
  if (!What || !File || !Offset || !Kind || !Reason || !Name || !Remedies)
    return std::nullopt;
  Finding F;
  F.What = "the call to `" + Name->str() + "` makes the host wait for the GPU (" + What->str() +
           ", in another translation unit)";
  F.Use.Kind = *Kind;
  F.Use.Reason = Reason->str();
  // The caller decides what the callee returns (the check's own rule when both
  // are in one unit: a value the callee only accumulates may come back).
  auto CallerClass = Call.Record.getString("callerClass");
  auto CallerReason = Call.Record.getString("callerReason");
  std::optional<Dependency> Caller = CallerClass ? dependencyNamed(*CallerClass) : std::nullopt;
  if (Caller && CallerReason) {
    if (Wait.getBoolean("returned").value_or(false)) {
      F.Use.Kind = *Caller;
      F.Use.Reason = "the callee returns the value, and here " + CallerReason->str();
    } else if (*Kind == Dependency::False && *Caller == Dependency::True) {
      F.Use.Kind = Dependency::True;
      F.Use.Reason = "the callee's result carries the value back: " + CallerReason->str();
    }
  }
  F.Use.LoopLine = static_cast<unsigned>(Call.Record.getInteger("loopLine").value_or(0));
  if (auto Remedy = Remedies->getString(dependencyName(F.Use.Kind)))
    F.Remedy = Remedy->str();
  FindingRecord E = Call.Remark;
  E.DiagLevel = tidy::ClangTidyError::Warning;
  E.Message.Message = formatMessage(F);
  FindingFacts Facts;
  Facts.Class = F.Use.Kind;
  Facts.LoopLine = F.Use.LoopLine;
  E.Facts = Facts;
  tooling::DiagnosticMessage Note;
  Note.Message = "the host waits here";
  Note.FilePath = File->str();
  Note.FileOffset = static_cast<unsigned>(*Offset);
  E.Notes.push_back(std::move(Note));
  return E;
}

void joinProjectSummaries(Batch &B) {
  std::map<std::string, json::Object> Waits; // by linkage name
  std::vector<CallRecord> Calls;
  for (size_t I = 0; I < B.Units.size(); ++I) {
    std::vector<FindingRecord> &Findings = B.Units[I].Findings;
    std::vector<FindingRecord> Kept;
    for (FindingRecord &E : Findings) {
      std::optional<json::Object> Record = summaryRecord(E);
      if (!Record) {
        Kept.push_back(std::move(E));
        continue;
      }
      if (auto Defined = Record->getString("define")) {
        if (const json::Object *Wait = Record->getObject("wait"))
          Waits.try_emplace(Defined->str(), *Wait);
      } else if (Record->getString("call")) {
        Calls.push_back({I, E, std::move(*Record)});
      }
    }
    Findings = std::move(Kept);
  }
  for (const CallRecord &Call : Calls) {
    std::optional<StringRef> Callee = Call.Record.getString("call");
    auto Found = Callee ? Waits.find(Callee->str()) : Waits.end();
    if (Found == Waits.end())
      continue;
    if (std::optional<FindingRecord> E = joinedFinding(Call, Found->second))
      B.Units[Call.Unit].Findings.push_back(std::move(*E));
  }
}

} // namespace torch_syncfree
