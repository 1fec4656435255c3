// Findings as JSON, losslessly: the results cache stores them this way, and a
// worker process (--tu-timeout) hands its unit's findings back to the batch in
// this form. Reading validates every field; a malformed array is rejected whole.
#ifndef TORCH_SYNCFREE_FINDING_JSON_H
#define TORCH_SYNCFREE_FINDING_JSON_H

#include "FindingRecord.h"
#include "llvm/Support/JSON.h"
#include <optional>
#include <vector>

namespace torch_syncfree {

llvm::json::Array findingsToJson(const std::vector<FindingRecord> &Findings);
std::optional<std::vector<FindingRecord>> findingsFromJson(const llvm::json::Array &Findings);

} // namespace torch_syncfree

#endif
