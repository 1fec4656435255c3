// Issue 42: facts across the units of one batch run. torch-sync-call-in-loop,
// run with `ProjectSummaries` (Config.cpp sets it for batch runs), says as
// remarks, once per unit, which functions its main file defines (what each
// waits for, where its body is) and every call of and reference to a function
// of the project (with how the caller uses a returned value); and at each call
// in a loop to a function with no body in the unit, that call. Every check
// says, beside a finding whose value a function returns to callers the unit
// does not show, which function. Here, after every unit (workers and the
// results cache carry the remarks like any finding):
//   - each call in a loop is joined with the callee's summary into the finding
//     the check would have made had both been in one unit;
//   - over the whole database only: a finding on a tensor its unit could not
//     place is dropped when the other units show it on the CPU (what every
//     caller passes, what the callee returns, what every unit stores into the
//     field: issue 43), a returned value takes its class from the project's
//     callers, and a finding in a function nothing reachable calls is marked
//     `uncalled` (issue 43, item 13);
// then the remarks are removed. A NOLINT at a call suppresses its loop remark,
// so the finding too. Deterministic: units are read in file order, the first
// definition of a name wins.
#include "batch/ProjectSummaries.h"
#include "FixApplier.h"
#include "InputFiles.h"
#include "JsonLimits.h"
#include "SyncCheck.h"
#include "batch/Batch.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include <map>
#include <set>

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
  if (E.DiagLevel != tidy::ClangTidyError::Remark ||
      !StringRef(E.DiagnosticName).starts_with("torch-sync-") ||
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
  // A kernel of an operator this unit registers waits in this very file.
  bool Here = Call.Remark.Message.FilePath == *File;
  F.What = "the call to `" + Name->str() + "` makes the host wait for the GPU (" + What->str() +
           (Here ? ")" : ", in another translation unit)");
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

namespace {
/// Everything the units said about the project, in unit order.
struct ProjectRecords {
  /// Per unit (then per unit of a summaries file), its one record of what it
  /// defines, calls and references; nullopt when the unit said none.
  std::vector<std::optional<json::Object>> Units;
  std::vector<CallRecord> LoopCalls; ///< calls in loops to functions with no body in their unit
  std::vector<CallRecord> Returned;  ///< findings whose value a function returns
  std::vector<CallRecord> CpuIf;     ///< findings on tensors other units may put on the CPU
};

/// The name a function has across the project: a function with internal
/// linkage is its unit's own.
std::string functionKey(size_t Unit, StringRef Name, bool Internal) {
  return Internal ? std::to_string(Unit) + "#" + Name.str() : Name.str();
}

/// Where a call or a definition is, as "file:line" for messages.
std::string placeOf(const json::Object &Call) {
  return sys::path::filename(Call.getString("file").value_or("")).str() + ":" +
         std::to_string(Call.getInteger("line").value_or(0));
}
} // namespace

/// A list of a unit's record; null when the unit said none.
static const json::Array *unitList(const std::optional<json::Object> &Unit, StringRef Field) {
  return Unit ? Unit->getArray(Field) : nullptr;
}

/// Each object of the list \p Field of every unit's record, in unit order,
/// with its unit.
static void forEachListed(const ProjectRecords &R, StringRef Field,
                          function_ref<void(size_t Unit, const json::Object &Entry)> Each) {
  for (size_t U = 0; U < R.Units.size(); ++U)
    if (const json::Array *List = unitList(R.Units[U], Field))
      for (const json::Value &V : *List)
        if (const json::Object *Entry = V.getAsObject())
          Each(U, *Entry);
}

/// The remarks of every unit, taken out of their findings.
static ProjectRecords takeRecords(Batch &B) {
  ProjectRecords R;
  R.Units.resize(B.Units.size());
  for (size_t I = 0; I < B.Units.size(); ++I) {
    std::vector<FindingRecord> &Findings = B.Units[I].Findings;
    std::vector<FindingRecord> Kept;
    for (FindingRecord &E : Findings) {
      std::optional<json::Object> Record = summaryRecord(E);
      if (!Record) {
        Kept.push_back(std::move(E));
        continue;
      }
      if (Record->getBoolean("unit").value_or(false))
        R.Units[I] = std::move(*Record);
      else if (Record->getString("call"))
        R.LoopCalls.push_back({I, E, std::move(*Record)});
      else if (Record->getString("returnedBy"))
        R.Returned.push_back({I, E, std::move(*Record)});
      else if (Record->getArray("cpuIf"))
        R.CpuIf.push_back({I, E, std::move(*Record)});
    }
    Findings = std::move(Kept);
  }
  return R;
}

/// Calls in loops joined with what the callee, defined in another unit, waits
/// for; those on lines the run's line filter names.
static void joinLoopCalls(Batch &B, const ProjectRecords &R, ChangedLines &Shown) {
  std::map<std::string, json::Object> Waits; // by linkage name; the first definition wins
  forEachListed(R, "defines", [&](size_t, const json::Object &Define) {
    auto Name = Define.getString("define");
    const json::Object *Wait = Define.getObject("wait");
    if (Name && Wait && !Define.getBoolean("internal").value_or(true))
      Waits.try_emplace(Name->str(), *Wait);
  });
  // Project operators (issue 42): a dispatcher call waits where a kernel
  // registered for it does (the first in unit order that may run on the GPU
  // and waits), and so does a function that waits only through such a call.
  std::map<std::string, json::Object> OperatorWaits;
  forEachListed(R, "operators", [&](size_t, const json::Object &Kernel) {
    auto Operator = Kernel.getString("operator");
    const json::Object *Wait = Kernel.getObject("wait");
    if (!Operator || !Wait)
      return;
    json::Object Through = *Wait;
    Through["what"] = Wait->getString("what").value_or("").str() + ", in a kernel of the operator `" +
                      Operator->str() + "`";
    OperatorWaits.try_emplace("operator:" + Operator->str(), std::move(Through));
  });
  forEachListed(R, "defines", [&](size_t, const json::Object &Define) {
    auto Name = Define.getString("define");
    const json::Array *Operators = Define.getArray("operators");
    if (!Name || !Operators || Define.getBoolean("internal").value_or(true))
      return;
    for (const json::Value &Operator : *Operators)
      if (auto Found = OperatorWaits.find("operator:" + Operator.getAsString().value_or("").str());
          Found != OperatorWaits.end()) {
        Waits.try_emplace(Name->str(), Found->second);
        break;
      }
  });
  for (auto &[Operator, Wait] : OperatorWaits)
    Waits.try_emplace(Operator, std::move(Wait));
  for (const CallRecord &Call : R.LoopCalls) {
    std::optional<StringRef> Callee = Call.Record.getString("call");
    auto Found = Callee ? Waits.find(Callee->str()) : Waits.end();
    if (Found == Waits.end())
      continue;
    if (std::optional<FindingRecord> E = joinedFinding(Call, Found->second);
        E && Shown.shows(E->Message.FilePath, E->Message.FileOffset))
      B.Units[Call.Unit].Findings.push_back(std::move(*E));
  }
}

namespace {
/// The project's call graph as the units' records say it.
struct CallGraph {
  struct Definition {
    size_t Unit;
    const json::Object *Record;
  };
  std::map<std::string, std::vector<Definition>> Judged; ///< functions whose callers can be judged
  /// Per function, its calls: the calling unit and the call's record.
  std::map<std::string, std::vector<std::pair<size_t, const json::Object *>>> CallsOf;
  std::set<std::string> Reached;      ///< called from code that runs, or whose address is taken
  std::set<std::string> AddressTaken; ///< referenced other than as a callee: callers no unit shows

  explicit CallGraph(const ProjectRecords &R) {
    for (size_t U = 0; U < R.Units.size(); ++U)
      if (const json::Array *Defines = unitList(R.Units[U], "defines"))
        for (const json::Value &V : *Defines)
          if (const json::Object *Define = V.getAsObject();
              Define && Define->getBoolean("judged").value_or(false))
            Judged[functionKey(U, Define->getString("define").value_or(""),
                               Define->getBoolean("internal").value_or(true))]
                .push_back({U, Define});
    // A call from a function whose callers cannot be judged (main, a method
    // called through a base, code outside any function) runs: its callee is
    // reached, and what a reached function calls is reached in turn.
    std::map<std::string, std::vector<std::string>> Edges;
    std::vector<std::string> Work;
    for (size_t U = 0; U < R.Units.size(); ++U) {
      auto Uses = [&](StringRef Field, bool Calls) {
        if (const json::Array *List = unitList(R.Units[U], Field))
          for (const json::Value &V : *List) {
            const json::Object *Use = V.getAsObject();
            if (!Use)
              continue;
            std::string Target = functionKey(U, Use->getString("target").value_or(""),
                                             Use->getBoolean("internal").value_or(true));
            if (Calls)
              CallsOf[Target].push_back({U, Use});
            std::optional<StringRef> From = Use->getString("from");
            std::string FromKey =
                From ? functionKey(U, *From, Use->getBoolean("fromInternal").value_or(true)) : std::string();
            if (!Calls)
              AddressTaken.insert(Target);
            // An address taken in a function that never runs is never taken
            // (a thread a never-constructed class would start).
            if (!From || !Judged.count(FromKey))
              Work.push_back(Target);
            else
              Edges[FromKey].push_back(Target);
          }
      };
      Uses("calls", true);
      Uses("addresses", false);
    }
    // A kernel of a project operator runs when the dispatcher calls it (its
    // registration may name it by a template argument: TORCH_FN(f)).
    forEachListed(R, "operators", [&](size_t U, const json::Object &Kernel) {
      Work.push_back(functionKey(U, Kernel.getString("kernel").value_or(""),
                                 Kernel.getBoolean("internal").value_or(true)));
    });
    // A constructor runs when its class is constructed: wherever a unit names
    // the class outside its own members (issue 43).
    std::set<std::string> Named;
    for (const std::optional<json::Object> &Unit : R.Units)
      if (const json::Array *Names = unitList(Unit, "names"))
        for (const json::Value &V : *Names)
          if (auto Name = V.getAsString())
            Named.insert(Name->str());
    for (const auto &[Key, Definitions] : Judged)
      for (const Definition &D : Definitions)
        if (auto Class = D.Record->getString("constructs"); Class && Named.count(Class->str()))
          Work.push_back(Key);
    while (!Work.empty()) {
      std::string Next = std::move(Work.back());
      Work.pop_back();
      if (!Reached.insert(Next).second)
        continue;
      for (const std::string &Callee : Edges[Next])
        Work.push_back(Callee);
    }
  }
};
} // namespace

/// The innermost of the definitions whose body holds the finding E.
static const json::Object *innermostDefinition(ArrayRef<const json::Object *> Definitions,
                                               const FindingRecord &E) {
  const json::Object *Innermost = nullptr;
  for (const json::Object *Define : Definitions) {
    int64_t Begin = Define->getInteger("begin").value_or(-1), End = Define->getInteger("end").value_or(-1);
    if (Define->getString("file").value_or("") != E.Message.FilePath || E.Message.FileOffset < Begin ||
        E.Message.FileOffset > End)
      continue;
    if (!Innermost || Begin > Innermost->getInteger("begin").value_or(-1))
      Innermost = Define;
  }
  return Innermost;
}

/// Issue 43, item 13: a finding in a function nothing in the project calls
/// says so (`uncalled`), so that CI can tell unused code apart.
static void markUncalled(Batch &B, const CallGraph &Graph) {
  for (size_t U = 0; U < B.Units.size(); ++U) {
    // This unit's judged functions, by the range of their definitions.
    std::vector<const json::Object *> Ranges;
    for (const auto &[Key, Definitions] : Graph.Judged)
      for (const CallGraph::Definition &D : Definitions)
        if (D.Unit == U && !Graph.Reached.count(Key))
          Ranges.push_back(D.Record);
    if (Ranges.empty())
      continue;
    for (FindingRecord &E : B.Units[U].Findings) {
      const json::Object *Innermost = innermostDefinition(Ranges, E);
      if (!Innermost || !E.Facts || E.DiagLevel == tidy::ClangTidyError::Remark)
        continue;
      E.Facts->Uncalled = true;
      tooling::DiagnosticMessage Note;
      if (auto Class = Innermost->getString("constructs"))
        Note.Message = "nothing in the compile database's code names `" + Class->str() +
                       "` outside its own members: nothing constructs one (unused, or constructed only "
                       "from outside the project)";
      else
        Note.Message = "nothing the compile database's code reaches calls `" +
                       Innermost->getString("name").value_or("").str() +
                       "` (unused, or called only from outside the project)";
      Note.FilePath = E.Message.FilePath;
      Note.FileOffset = static_cast<unsigned>(Innermost->getInteger("offset").value_or(0));
      E.Notes.push_back(std::move(Note));
    }
  }
}

namespace {
/// How the project's callers of one function use the value it returns.
struct CallersVerdict {
  const json::Object *Deciding = nullptr; ///< the first caller that needs it
  const json::Object *FirstFalse = nullptr;
  std::string FirstFalseReason;
  size_t Counted = 0;
};
} // namespace

/// The callers' verdict on what the function \p Key returns; nullopt when a
/// caller no unit shows may exist (its address is taken, nothing reached calls
/// it). A caller that returns the value again is judged by its own callers (up
/// to four functions deep).
static std::optional<CallersVerdict> callersVerdict(const std::string &Key, const CallGraph &Graph,
                                                    unsigned Depth, std::set<std::string> &Visited) {
  auto Calls = Graph.CallsOf.find(Key);
  if (Graph.AddressTaken.count(Key) || !Graph.Reached.count(Key) || Calls == Graph.CallsOf.end())
    return std::nullopt;
  CallersVerdict V;
  for (const auto &[Unit, Call] : Calls->second) {
    auto Class = Call->getString("class");
    std::optional<Dependency> Kind = Class ? dependencyNamed(*Class) : std::nullopt;
    if (!Kind || !Call->getString("reason"))
      continue; // a caller of the function's void overload: none
    ++V.Counted;
    std::string Reason = Call->getString("reason").value_or("").str();
    if (*Kind == Dependency::True && Call->getBoolean("returned").value_or(false) && Depth < 4) {
      // Returned again by the caller: its own callers decide.
      std::optional<StringRef> From = Call->getString("from");
      std::string FromKey =
          From ? functionKey(Unit, *From, Call->getBoolean("fromInternal").value_or(true)) : std::string();
      std::optional<CallersVerdict> Outer;
      if (From && Visited.insert(FromKey).second)
        Outer = callersVerdict(FromKey, Graph, Depth + 1, Visited);
      if (Outer && !Outer->Deciding && Outer->Counted) {
        if (!V.FirstFalse) {
          V.FirstFalse = Call;
          V.FirstFalseReason = "it returns the value to callers that do not need it on the host (" +
                               placeOf(*Outer->FirstFalse) + ": " + Outer->FirstFalseReason + ")";
        }
        continue;
      }
    }
    if (*Kind == Dependency::True) {
      V.Deciding = Call;
      break;
    }
    if (!V.FirstFalse) {
      V.FirstFalse = Call;
      V.FirstFalseReason = Reason;
    }
  }
  return V;
}

/// A value a function returns, classified by how the project's callers use
/// it (issue 42): false when every caller that runs uses it as a metric or a
/// log, true (naming the caller) when one needs it. Functions whose address
/// is taken or that nothing calls keep the unit's verdict.
static void classifyReturnedValues(Batch &B, const ProjectRecords &R, const CallGraph &Graph) {
  for (const CallRecord &Returned : R.Returned) {
    std::string Key = functionKey(Returned.Unit, Returned.Record.getString("returnedBy").value_or(""),
                                  Returned.Record.getBoolean("internal").value_or(true));
    std::set<std::string> Visited{Key};
    std::optional<CallersVerdict> Verdict = callersVerdict(Key, Graph, 0, Visited);
    if (!Verdict || !Verdict->Counted)
      continue;
    const json::Object *Deciding = Verdict->Deciding, *FirstFalse = Verdict->FirstFalse;
    size_t Counted = Verdict->Counted;
    // The finding the record stands beside: same check, same place.
    for (FindingRecord &E : B.Units[Returned.Unit].Findings) {
      if (E.DiagnosticName != Returned.Remark.DiagnosticName || !E.Facts ||
          E.Message.FilePath != Returned.Remark.Message.FilePath ||
          E.Message.FileOffset != Returned.Remark.Message.FileOffset ||
          E.DiagLevel == tidy::ClangTidyError::Remark)
        continue;
      std::string Name = Returned.Record.getString("name").value_or("").str();
      const json::Object *Caller = Deciding ? Deciding : FirstFalse;
      Finding F;
      F.What = Returned.Record.getString("what").value_or("").str();
      F.Use.LoopLine = static_cast<unsigned>(Returned.Record.getInteger("loopLine").value_or(0));
      std::string CallerReason =
          Deciding ? Caller->getString("reason").value_or("").str() : Verdict->FirstFalseReason;
      if (Deciding) {
        F.Use.Kind = Dependency::True;
        F.Use.Reason = "the value is returned by `" + Name + "`, and its caller at ";
        F.Use.Reason += placeOf(*Caller) + " needs it: " + CallerReason;
        F.Remedy = "decide on the device instead, or read the value less often";
      } else {
        F.Use.Kind = Dependency::False;
        F.Use.Reason = "the value is returned by `" + Name + "`, and ";
        F.Use.Reason += Counted == 1 ? std::string("its one caller in the project")
                                     : "each of its " + std::to_string(Counted) + " callers in the project";
        F.Use.Reason += " does not need it on the host (" + placeOf(*Caller) + ": " + CallerReason + ")";
        F.Remedy = "return the device tensor and let the callers read it where the host needs it (after "
                   "their loop, at a log interval)";
      }
      E.Message.Message = formatMessage(F);
      E.Facts->Class = F.Use.Kind;
      tooling::DiagnosticMessage Note;
      Note.Message =
          Deciding ? "the caller that needs the value" : "a caller that does not need it on the host";
      Note.FilePath = Caller->getString("file").value_or("").str();
      Note.FileOffset = static_cast<unsigned>(Caller->getInteger("offset").value_or(0));
      E.Notes.push_back(std::move(Note));
      break;
    }
  }
}

namespace {
/// Issue 43: where the tensors of origins in other units are ("param:<i>:<f>",
/// "return:<f>", "field:<C>::<f>"; DeviceInference.h), from every unit's
/// record. Each origin's contributions are conditions {cpu, origins}: a call's
/// argument, a definition's returned value, a unit's stores into a field.
class ProjectOrigins {
public:
  ProjectOrigins(const ProjectRecords &R, const CallGraph &Graph) : Graph(Graph) {
    for (size_t U = 0; U < R.Units.size(); ++U) {
      if (const json::Array *Defines = unitList(R.Units[U], "defines"))
        for (const json::Value &V : *Defines)
          if (const json::Object *Define = V.getAsObject();
              Define && !Define->getBoolean("internal").value_or(true))
            if (const json::Object *Returns = Define->getObject("returns"))
              Returned[Define->getString("define").value_or("").str()].push_back(Returns);
      if (const json::Array *Fields = unitList(R.Units[U], "fields"))
        for (const json::Value &V : *Fields)
          if (const json::Object *Field = V.getAsObject())
            Stored[Field->getString("field").value_or("").str()].push_back(Field);
    }
  }

  /// Whether every origin of \p Origins holds CPU tensors only.
  bool allOnCpu(const json::Array &Origins) {
    std::vector<std::string> Keys;
    for (const json::Value &V : Origins)
      if (auto Key = V.getAsString())
        Keys.push_back(Key->str());
      else
        return false;
    resolve(Keys);
    return !Keys.empty() && llvm::none_of(Keys, [&](const std::string &K) { return OffCpu.count(K) != 0; });
  }

private:
  /// The conditions that decide \p Origin; nullopt when no record can (a
  /// function some caller outside the project may call, a field no unit
  /// stores into, a call that passes nothing for the parameter).
  std::optional<std::vector<const json::Object *>> contributions(StringRef Origin) {
    std::vector<const json::Object *> Found;
    if (Origin.consume_front("param:")) {
      unsigned Index = 0;
      if (Origin.consumeInteger(10, Index) || !Origin.consume_front(":"))
        return std::nullopt;
      std::string Function = Origin.str();
      auto Calls = Graph.CallsOf.find(Function);
      if (!Graph.Judged.count(Function) || Graph.AddressTaken.count(Function) ||
          !Graph.Reached.count(Function) || Calls == Graph.CallsOf.end())
        return std::nullopt;
      for (const auto &[Unit, Call] : Calls->second) {
        const json::Object *Passed = nullptr;
        if (const json::Array *Args = Call->getArray("args"))
          for (const json::Value &A : *Args)
            if (const json::Object *Arg = A.getAsObject(); Arg && Arg->getInteger("index") == Index)
              Passed = Arg;
        if (!Passed)
          return std::nullopt;
        Found.push_back(Passed);
      }
      return Found;
    }
    const std::map<std::string, std::vector<const json::Object *>> &Table =
        Origin.starts_with("field:") ? Stored : Returned;
    auto Listed = Table.find(Origin.starts_with("field:") ? Origin.str() : Origin.drop_front(7).str());
    if (!Origin.starts_with("field:") && !Origin.starts_with("return:"))
      return std::nullopt;
    if (Listed == Table.end())
      return std::nullopt;
    return Listed->second;
  }

  /// Decides every origin reachable from \p Keys: off the CPU when a
  /// contribution may be off it or depends on an origin that is (the least
  /// fixpoint: an origin that only feeds itself stays on the CPU).
  void resolve(ArrayRef<std::string> Keys) {
    std::vector<std::string> Work(Keys.begin(), Keys.end());
    while (!Work.empty()) {
      std::string Key = std::move(Work.back());
      Work.pop_back();
      if (!Decided.insert(Key).second)
        continue;
      std::optional<std::vector<const json::Object *>> Conditions = contributions(Key);
      if (!Conditions) {
        Seeds.push_back(Key);
        continue;
      }
      for (const json::Object *Condition : *Conditions) {
        if (!Condition->getBoolean("cpu").value_or(false)) {
          Seeds.push_back(Key);
          continue;
        }
        if (const json::Array *Origins = Condition->getArray("origins"))
          for (const json::Value &V : *Origins)
            if (auto Needed = V.getAsString()) {
              if (OffCpu.count(Needed->str())) // decided by an earlier question
                Seeds.push_back(Key);
              Dependents[Needed->str()].push_back(Key);
              Work.push_back(Needed->str());
            }
      }
    }
    while (!Seeds.empty()) {
      std::string Key = std::move(Seeds.back());
      Seeds.pop_back();
      if (!OffCpu.insert(Key).second)
        continue;
      for (const std::string &Dependent : Dependents[Key])
        Seeds.push_back(Dependent);
    }
  }

  const CallGraph &Graph;
  std::map<std::string, std::vector<const json::Object *>> Returned, Stored;
  std::set<std::string> Decided, OffCpu;
  std::vector<std::string> Seeds;
  std::map<std::string, std::vector<std::string>> Dependents;
};
} // namespace

/// Issue 43: a finding on a tensor the unit could not place is dropped when
/// the project's other units show that it is on the CPU (what every caller
/// passes, what the callee returns, what every unit stores into the field):
/// no sync happens there.
static void dropFindingsOnCpu(Batch &B, const ProjectRecords &R, const CallGraph &Graph) {
  ProjectOrigins Origins(R, Graph);
  for (const CallRecord &OnCpu : R.CpuIf) {
    const json::Array *Keys = OnCpu.Record.getArray("cpuIf");
    if (!Keys || !Origins.allOnCpu(*Keys))
      continue;
    std::vector<FindingRecord> &Findings = B.Units[OnCpu.Unit].Findings;
    llvm::erase_if(Findings, [&](const FindingRecord &E) {
      return E.DiagnosticName == OnCpu.Remark.DiagnosticName && E.DiagLevel != tidy::ClangTidyError::Remark &&
             E.Message.FilePath == OnCpu.Remark.Message.FilePath &&
             E.Message.FileOffset == OnCpu.Remark.Message.FileOffset;
    });
  }
}

/// --summaries in a run over the whole database: every unit's record.
static std::string writeSummaries(StringRef Path, const Batch &B, const ProjectRecords &R, bool Complete) {
  json::Array Units;
  for (size_t U = 0; U < B.Units.size(); ++U)
    if (const std::optional<json::Object> &Record = R.Units[U])
      Units.push_back(json::Object{{"file", B.ParseFiles[U]}, {"record", json::Object(*Record)}});
  std::string Text;
  raw_string_ostream(Text) << json::Value(
      json::Object{{"torch-syncfree-summaries", 1}, {"complete", Complete}, {"units", std::move(Units)}});
  return writeFileAtomically(Path, Text + "\n");
}

/// --summaries in a run over part of the database (a shard, --diff, listed
/// files): the records of the units it did not analyse (or that said nothing)
/// are added to R; whether the file was written by a run over the whole
/// database that names every unit of this one.
static std::optional<bool> readSummaries(StringRef Path, const Batch &B, ProjectRecords &R,
                                         std::string &Error) {
  std::string Why;
  std::unique_ptr<MemoryBuffer> Buffer = readInputFile(Path, uint64_t(512) << 20, Why);
  if (!Buffer) {
    Error = Why;
    return std::nullopt;
  }
  if (std::string Deep = checkJsonNesting(Buffer->getBuffer()); !Deep.empty()) {
    Error = Deep;
    return std::nullopt;
  }
  Expected<json::Value> Parsed = json::parse(Buffer->getBuffer());
  if (!Parsed) {
    consumeError(Parsed.takeError());
    Error = "not a JSON text";
    return std::nullopt;
  }
  const json::Object *Top = Parsed->getAsObject();
  const json::Array *Units = Top ? Top->getArray("units") : nullptr;
  if (!Top || Top->getInteger("torch-syncfree-summaries") != 1 || !Units) {
    Error = "not a summaries file of this version (written by `torch-syncfree --summaries=<file>`)";
    return std::nullopt;
  }
  std::map<std::string, size_t> Here;
  for (size_t I = 0; I < B.ParseFiles.size(); ++I)
    Here.try_emplace(B.ParseFiles[I], I);
  std::set<std::string> Seen;
  for (const json::Value &V : *Units) {
    const json::Object *Unit = V.getAsObject();
    auto File = Unit ? Unit->getString("file") : std::nullopt;
    const json::Object *Record = Unit ? Unit->getObject("record") : nullptr;
    if (!File || !Record) {
      Error = "a unit without its file or record";
      return std::nullopt;
    }
    Seen.insert(File->str());
    auto Analysed = Here.find(File->str());
    if (Analysed == Here.end())
      R.Units.push_back(*Record);
    else if (!R.Units[Analysed->second]) // not analysed in this run (--diff)
      R.Units[Analysed->second] = *Record;
  }
  return Top->getBoolean("complete").value_or(false) &&
         llvm::all_of(Here, [&](const auto &F) { return Seen.count(F.first) != 0; });
}

/// joinProjectSummaries, with a summaries file that cannot be read or
/// written as an error message (the units' records are taken out first).
static std::string joinRecords(const RunOptions &Options, Batch &B) {
  ProjectRecords R = takeRecords(B);
  // The findings the line filter shows, then the joins: a finding it drops is
  // neither reclassified nor marked, and a joined one is shown on its own line.
  ChangedLines Shown(Options.EffectiveLineFilter);
  Shown.filter(B);
  bool WholeDatabase =
      Options.Sources.empty() && Options.Shard.empty() && Options.EffectiveLineFilter.empty();
  bool Covered = WholeDatabase;
  if (!Options.Summaries.empty() && WholeDatabase) {
    bool Complete = llvm::all_of(R.Units, [](const auto &U) { return U.has_value(); }) &&
                    llvm::none_of(B.Units, [](const UnitResult &U) {
                      return !U.CompileError.empty() || U.CannotAnalyse;
                    });
    if (std::string Failure = writeSummaries(Options.Summaries, B, R, Complete); !Failure.empty())
      return "cannot write the summaries file '" + Options.Summaries + "': " + Failure;
  } else if (!Options.Summaries.empty()) {
    std::string Error;
    std::optional<bool> Covers = readSummaries(Options.Summaries, B, R, Error);
    if (!Covers)
      return "cannot read the summaries file '" + Options.Summaries + "': " + Error;
    Covered = *Covers;
  }
  // What no unit shows cannot be judged: a run over part of the database
  // without the whole run's summaries, a unit that did not compile or said
  // nothing (a NOLINT on its first line).
  // The run's summary says why, when some unit said a record (the check that
  // makes them is on), so that a partial run is not read as a judgement.
  size_t Said = llvm::count_if(R.Units, [](const auto &U) { return U.has_value(); });
  size_t NotCompiled =
      llvm::count_if(B.Units, [](const UnitResult &U) { return !U.CompileError.empty() || U.CannotAnalyse; });
  if (Said == 0)
    B.ProjectJudgementsSkipped = "";
  else if (!Covered)
    B.ProjectJudgementsSkipped = Options.Summaries.empty()
                                     ? "a run over part of the compile database (give it the whole run's "
                                       "--summaries=<file>)"
                                     : "the summaries file is not a whole run's over these units";
  else if (NotCompiled)
    B.ProjectJudgementsSkipped = counted(NotCompiled, "translation unit") + " did not compile";
  else if (Said != R.Units.size())
    B.ProjectJudgementsSkipped = counted(R.Units.size() - Said, "translation unit") +
                                 " said no record (a NOLINT on the first line, or no summary written)";
  joinLoopCalls(B, R, Shown);
  if (!B.ProjectJudgementsSkipped.empty() || Said == 0)
    return "";
  CallGraph Graph(R);
  dropFindingsOnCpu(B, R, Graph);
  markUncalled(B, Graph);
  classifyReturnedValues(B, R, Graph);
  return "";
}

std::optional<int> joinProjectSummaries(const RunOptions &Options, Batch &B) {
  if (std::string Error = joinRecords(Options, B); !Error.empty())
    return usageError(Error);
  return std::nullopt;
}

std::string joinWithSummaries(StringRef SummariesPath, StringRef File, std::vector<FindingRecord> &Findings) {
  // The editor's unit is one unit of a run over part of the database (as a
  // `--diff` run's): the file's other units come from the summaries file.
  RunOptions Options;
  Options.Summaries = SummariesPath.str();
  Options.Sources = {File.str()};
  Batch B;
  B.Files = {File.str()};
  B.ParseFiles = {File.str()};
  B.Units.resize(1);
  B.Units[0].Findings = std::move(Findings);
  std::string Error = joinRecords(Options, B);
  Findings = std::move(B.Units[0].Findings);
  return Error;
}

} // namespace torch_syncfree
