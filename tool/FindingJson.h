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

/// A byte string as JSON, losslessly: valid UTF-8 as a string, anything else
/// as {"hex": "<its bytes>"}. llvm::json replaces invalid UTF-8 with U+FFFD, so
/// a path such as "bad\xff.cpp" would come back naming another file (issue 38).
/// Every path and text that crosses a process or the results cache uses these.
llvm::json::Value bytesToJson(llvm::StringRef Bytes);
/// The bytes of a value written by bytesToJson; nothing for any other value.
std::optional<std::string> bytesFromJson(const llvm::json::Value *Value);

llvm::json::Array findingsToJson(const std::vector<FindingRecord> &Findings);
std::optional<std::vector<FindingRecord>> findingsFromJson(const llvm::json::Array &Findings);

} // namespace torch_syncfree

#endif
