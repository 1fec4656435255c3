// Runtime evidence (issue 26): a sync profile of the user's own program (the
// probe library, docs/profiles.md) joined with the findings. Each finding gets
// the syncs measured at its line (count and host wait); syncs in the profile
// that no finding explains are "missed by the analysis"; findings the profile
// never saw execute are marked so.
#ifndef TORCH_SYNCFREE_PROFILEJOIN_H
#define TORCH_SYNCFREE_PROFILEJOIN_H

#include "Reporting.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace torch_syncfree {

struct ProfileFrame {
  std::string File;     ///< symbolized (absolute), or "" before symbolization
  unsigned Line = 0;
  unsigned Column = 0;  ///< DWARF column, when the producer recorded one (0: none)
  std::string Function;
  std::string Module;   ///< a raw frame: the binary or library, and the offset in it
  uint64_t Offset = 0;
};

struct ProfileSync {
  std::string Kind; ///< "sync-debug-mode", "cudaDeviceSynchronize", "cudaStreamSynchronize", ...
  std::string Op;   ///< what LibTorch said (sync debug mode's message), if anything
  uint64_t Count = 0;
  double WaitMs = 0; ///< host wait in all, when measured
  std::vector<ProfileFrame> Frames; ///< innermost first
};

struct SyncProfile {
  std::string Program;
  uint64_t Steps = 0;  ///< steps the program marked (0: none)
  double StepMs = 0;   ///< mean host time of a step, when steps were marked
  /// How the probe timed the CUDA runtime's waits: "cupti" or "interposed"
  /// ("" from a profile that does not say).
  std::string WaitsFrom;
  std::vector<ProfileSync> Syncs;
};

/// Reads a profile (format "torch-syncfree-profile", version 1), symbolizing
/// raw frames from the binaries' DWARF; nothing with Error set on bad input.
std::optional<SyncProfile> loadProfile(llvm::StringRef Path, std::string &Error);

/// A sync of the profile that no finding explains.
struct MissedSync {
  const ProfileSync *Sync;
  std::string Where; ///< "file:line" of the frame in the analysed code, or "" when none is
};

/// Sets each finding's Measured (a finding on the line of a sync's innermost
/// frame in an analysed file; ±1 line for statements that span lines) and
/// Executed; returns the syncs no finding explains. AnalysedFiles: the files
/// of the run (sources and the headers findings are in).
std::vector<MissedSync> joinProfile(const SyncProfile &Profile, std::vector<ReportedFinding> &Findings,
                                    const std::vector<std::string> &AnalysedFiles);

/// The text report: findings by measured cost, the missed syncs, the
/// findings never executed.
void printProfileReport(const SyncProfile &Profile, const std::vector<ReportedFinding> &Findings,
                        const std::vector<MissedSync> &Missed, llvm::raw_ostream &OS);

} // namespace torch_syncfree

#endif
