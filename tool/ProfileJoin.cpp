#include "ProfileJoin.h"
#include "StableOrder.h"

#include "JsonLimits.h"
#include "InputFiles.h"
#include "SafeFileSystem.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/DebugInfo/Symbolize/Symbolize.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <map>

namespace json = llvm::json;

namespace torch_syncfree {

/// A profile is a few KB to a few MB of JSON.
constexpr uint64_t MaxProfileBytes = uint64_t(256) << 20;

static std::string normalised(llvm::StringRef Path) {
  llvm::SmallString<256> P(Path);
  llvm::sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P);
}

/// A count or offset of the profile: negative or missing is 0.
static uint64_t nonNegative(const json::Object &O, llvm::StringRef Key) {
  return static_cast<uint64_t>(std::max<int64_t>(0, O.getInteger(Key).value_or(0)));
}

std::optional<SyncProfile> loadProfile(llvm::StringRef Path,
                                       std::string &Error) {
  // The bounded reader (InputFiles.h): `-`, a FIFO or /dev/zero (or a
  // profile linked to one) is refused, never read.
  std::string Why;
  std::unique_ptr<llvm::MemoryBuffer> Buffer = readInputFile(Path, MaxProfileBytes, Why);
  if (!Buffer) {
    Error = "cannot read --profile '" + printable(Path) + "': " + Why;
    return std::nullopt;
  }
  llvm::StringRef Text = Buffer->getBuffer();
  if (std::string Deep = checkJsonNesting(Text); !Deep.empty()) {
    Error = "--profile '" + Path.str() + "': " + Deep;
    return std::nullopt;
  }
  llvm::Expected<json::Value> Parsed = json::parse(Text);
  if (!Parsed) {
    Error = "--profile '" + Path.str() +
            "' is not JSON: " + llvm::toString(Parsed.takeError());
    return std::nullopt;
  }
  const json::Object *Root = Parsed->getAsObject();
  if (!Root || Root->getString("format") != "torch-syncfree-profile" ||
      Root->getInteger("version") != 1) {
    Error = "--profile '" + Path.str() +
            "' is not a torch-syncfree profile of version 1";
    return std::nullopt;
  }
  SyncProfile P;
  P.Program = Root->getString("program").value_or("").str();
  P.Steps = nonNegative(*Root, "steps");
  P.StepMs = std::max(0.0, Root->getNumber("step_ms").value_or(0));
  P.WaitsFrom = Root->getString("waits_from").value_or("").str();
  const json::Array *Syncs = Root->getArray("syncs");
  if (!Syncs) {
    Error = "--profile '" + Path.str() + "' has no \"syncs\" array";
    return std::nullopt;
  }
  // Raw frames (module + offset) are symbolized here, with LLVM's symbolizer
  // over the DWARF of a -g build: the probe stays small and needs no LLVM.
  llvm::symbolize::LLVMSymbolizer::Options Options;
  Options.Demangle = true;
  Options.RelativeAddresses =
      true; // offsets are relative to the module's load address
  auto Symbolizer = std::make_unique<llvm::symbolize::LLVMSymbolizer>(Options);
  // A module the profile names is read only when it is an absolute path to a
  // regular file (not `-`, which the symbolizer reads as stdin, nor a FIFO or
  // a device), and its DWARF is parsed under crash recovery: malformed debug
  // information that crashes LLVM's reader leaves that module's frames
  // unsymbolized (one warning), never ends the run or the language server.
  std::map<std::string, bool> UsableModule;
  auto Usable = [&](const std::string &Module) {
    auto [It, Inserted] = UsableModule.try_emplace(Module, false);
    if (Inserted) {
      std::string Problem = llvm::sys::path::is_absolute(Module)
                                ? checkInputFile(Module, MaxReadBytes)
                                : std::string("not an absolute path");
      It->second = Problem.empty();
      if (!Problem.empty())
        llvm::errs() << "torch-syncfree: warning: --profile: not reading module '"
                     << printable(Module) << "': " << Problem << "\n";
    }
    return It->second;
  };
  for (const json::Value &V : *Syncs) {
    const json::Object *S = V.getAsObject();
    if (!S)
      continue;
    ProfileSync Sync;
    Sync.Kind = S->getString("kind").value_or("").str();
    Sync.Op = S->getString("op").value_or("").str();
    Sync.Count = nonNegative(*S, "count");
    Sync.WaitMs = std::max(0.0, S->getNumber("wait_ms").value_or(0));
    if (const json::Array *Frames = S->getArray("frames"))
      for (const json::Value &FV : *Frames) {
        const json::Object *F = FV.getAsObject();
        if (!F)
          continue;
        ProfileFrame Frame;
        Frame.File = F->getString("file").value_or("").str();
        Frame.Line = static_cast<unsigned>(nonNegative(*F, "line"));
        Frame.Column = static_cast<unsigned>(nonNegative(*F, "column"));
        Frame.Function = F->getString("function").value_or("").str();
        Frame.Module = F->getString("module").value_or("").str();
        Frame.Offset = nonNegative(*F, "offset");
        if (Frame.File.empty() && !Frame.Module.empty() && Usable(Frame.Module)) {
          // A return address points after the call: look one byte back. An
          // address in inlined code stands for several frames (a lambda inlined
          // into its caller): each becomes a frame, innermost first.
          uint64_t Address = Frame.Offset ? Frame.Offset - 1 : 0;
          llvm::Expected<llvm::DIInliningInfo> Inlined = llvm::DIInliningInfo();
          llvm::CrashRecoveryContext Recovery;
          bool Survived = Recovery.RunSafely([&] {
            Inlined = Symbolizer->symbolizeInlinedCode(
                Frame.Module, {Address, llvm::object::SectionedAddress::UndefSection});
          });
          if (!Survived) {
            // The symbolizer's state is not to be trusted (nor destroyed) after
            // a recovered crash: a new one serves the other modules.
            (void)Symbolizer.release();
            Symbolizer = std::make_unique<llvm::symbolize::LLVMSymbolizer>(Options);
            UsableModule[Frame.Module] = false;
            llvm::errs() << "torch-syncfree: warning: --profile: not reading module '"
                         << printable(Frame.Module)
                         << "': reading its debug information crashed\n";
            llvm::consumeError(Inlined.takeError());
          } else if (!Inlined) {
            llvm::consumeError(Inlined.takeError());
          } else if (Inlined->getNumberOfFrames() > 0) {
            for (uint32_t I = 0; I < Inlined->getNumberOfFrames(); ++I) {
              const llvm::DILineInfo &Info = Inlined->getFrame(I);
              if (Info.FileName == llvm::DILineInfo::BadString)
                continue;
              ProfileFrame Symbolized = Frame;
              Symbolized.File = normalised(Info.FileName);
              Symbolized.Line = Info.Line;
              Symbolized.Column = Info.Column;
              if (Info.FunctionName != llvm::DILineInfo::BadString)
                Symbolized.Function = Info.FunctionName;
              Sync.Frames.push_back(std::move(Symbolized));
            }
            continue;
          }
        }
        if (!Frame.File.empty())
          Frame.File = normalised(Frame.File);
        Sync.Frames.push_back(std::move(Frame));
      }
    P.Syncs.push_back(std::move(Sync));
  }
  return P;
}

std::vector<MissedSync>
joinProfile(const SyncProfile &Profile, std::vector<ReportedFinding> &Findings,
            const std::vector<std::string> &AnalysedFiles) {
  llvm::StringSet<> Analysed;
  for (const std::string &F : AnalysedFiles)
    Analysed.insert(normalised(F));
  for (ReportedFinding &F : Findings) {
    Analysed.insert(normalised(F.File));
    F.Profiled = true;
  }
  std::vector<MissedSync> Missed;
  std::map<ReportedFinding *, uint64_t> DebugCounts, RuntimeCounts;
  for (const ProfileSync &Sync : Profile.Syncs) {
    // The innermost frame in the analysed code: where the program made the
    // call.
    const ProfileFrame *User = nullptr;
    for (const ProfileFrame &Frame : Sync.Frames)
      if (!Frame.File.empty() && Frame.Line && Analysed.contains(Frame.File)) {
        User = &Frame;
        break;
      }
    ReportedFinding *Match = nullptr;
    if (User) {
      // The call's own line first; then the lines around it (a statement
      // written over several lines carries its DWARF line at one of them).
      // Two findings on one line (`auto a = x.to(d), b = y.to(d);`): the
      // one nearest the frame's DWARF column, when it has one.
      for (int Delta : {0, -1, 1}) {
        unsigned Distance = ~0u;
        for (ReportedFinding &F : Findings)
          if (normalised(F.File) == User->File &&
              static_cast<int>(F.Line) == static_cast<int>(User->Line) + Delta) {
            unsigned D = Delta == 0 && User->Column
                             ? static_cast<unsigned>(std::abs(static_cast<int>(F.Column) -
                                                              static_cast<int>(User->Column)))
                             : 0;
            if (!Match || D < Distance)
              Match = &F, Distance = D;
          }
        if (Match)
          break;
      }
    }
    if (!Match) {
      Missed.push_back(
          {&Sync, User ? User->File + ":" + std::to_string(User->Line) : ""});
      continue;
    }
    // One item() is seen twice: as sync debug mode's warning and as the
    // cudaStreamSynchronize that carries its wait. Counts are kept per source
    // and the larger is the finding's; waits come from the runtime calls.
    (Sync.Kind == "sync-debug-mode" ? DebugCounts : RuntimeCounts)[Match] += Sync.Count;
    Match->MeasuredWaitMs += Sync.WaitMs;
  }
  for (ReportedFinding &F : Findings)
    F.MeasuredCount = std::max(DebugCounts[&F], RuntimeCounts[&F]);
  for (ReportedFinding &F : Findings)
    F.MeasuredPerStep =
        Profile.Steps ? static_cast<double>(F.MeasuredCount) / Profile.Steps
                      : 0;
  // By measured cost: host wait, then count; unmeasured findings keep their
  // order.
  stableSort(Findings, [](const ReportedFinding &A, const ReportedFinding &B) {
    return std::make_pair(A.MeasuredWaitMs, A.MeasuredCount) >
           std::make_pair(B.MeasuredWaitMs, B.MeasuredCount);
  });
  return Missed;
}

void printProfileReport(const SyncProfile &Profile,
                        const std::vector<ReportedFinding> &Findings,
                        const std::vector<MissedSync> &Missed,
                        llvm::raw_ostream &OS) {
  OS << "torch-syncfree: measured syncs (" << Profile.Syncs.size()
     << " call sites in the profile";
  if (Profile.Steps)
    OS << ", " << Profile.Steps << " steps of "
       << llvm::format("%.3f", Profile.StepMs) << " ms";
  if (Profile.WaitsFrom == "cupti")
    OS << ", waits timed by CUPTI";
  else if (Profile.WaitsFrom == "interposed")
    OS << ", waits timed by the probe's interposed CUDA calls";
  OS << "):\n";
  unsigned Never = 0;
  for (const ReportedFinding &F : Findings) {
    if (!F.MeasuredCount) {
      Never += !F.ProfileOnly;
      continue;
    }
    OS << "  " << printable(F.File) << ":" << F.Line << ":" << F.Column << " [" << F.Check << ", "
       << (!F.ProfileOnly       ? F.Dependency
           : F.Facts.ModuleMove ? "moves a module's parameters, once (setup): not reported unless "
                                  "ReportModuleMoves is true"
                                : "read at a log interval: not reported unless ReportIntervalReads "
                                  "is true")
       << "]: " << F.MeasuredCount << " syncs";
    if (Profile.Steps)
      OS << " (" << llvm::format("%.2f", F.MeasuredPerStep) << "/step)";
    if (F.MeasuredWaitMs > 0) {
      OS << ", " << llvm::format("%.3f", F.MeasuredWaitMs) << " ms waited";
      if (Profile.Steps && Profile.StepMs > 0)
        OS << " ("
           << llvm::format("%.1f", 100.0 * F.MeasuredWaitMs / Profile.Steps /
                                       Profile.StepMs)
           << " % of a step)";
    }
    OS << "\n";
  }
  for (const MissedSync &M : Missed) {
    OS << "  missed by the analysis: "
       << (M.Where.empty() ? std::string("(no frame in the analysed files)")
                           : printable(M.Where))
       << ": " << printable(M.Sync->Kind);
    if (!M.Sync->Op.empty())
      OS << " (" << printable(M.Sync->Op) << ")";
    OS << ", " << M.Sync->Count << " syncs";
    if (M.Sync->WaitMs > 0)
      OS << ", " << llvm::format("%.3f", M.Sync->WaitMs) << " ms waited";
    OS << "\n";
  }
  if (Never)
    OS << "  " << Never << " finding(s) never executed in the profiled run\n";
}

} // namespace torch_syncfree
