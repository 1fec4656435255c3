// Project summaries for a front end other than the batch (issue 42): the
// editor joins the unit it analyses with a batch run's records of the others.
#ifndef TORCH_SYNCFREE_BATCH_PROJECTSUMMARIES_H
#define TORCH_SYNCFREE_BATCH_PROJECTSUMMARIES_H
#include "FindingRecord.h"
#include "llvm/ADT/StringRef.h"
#include <string>
#include <vector>

namespace torch_syncfree {
/// The findings of one unit (\p File, analysed with project summaries on)
/// joined with the other units' records of a summaries file a batch run wrote
/// (`--summaries=<file>`), as a `--diff` run joins its units; the unit's own
/// records are taken out. An error message when the file cannot be read (""
/// otherwise); the findings are then the unit's own.
std::string joinWithSummaries(llvm::StringRef SummariesPath, llvm::StringRef File,
                              std::vector<FindingRecord> &Findings);
} // namespace torch_syncfree
#endif
