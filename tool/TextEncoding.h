// Helpers every output shares, written once: positions in UTF-8 or UTF-16 code
// units (SARIF's utf16CodeUnits, LSP's position encodings), file URIs, and the
// hex spelling of 64-bit hashes (cache keys and entries).
#ifndef TORCH_SYNCFREE_TEXTENCODING_H
#define TORCH_SYNCFREE_TEXTENCODING_H

#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>
#include <string>

namespace torch_syncfree {

enum class ColumnUnit { Utf8Bytes, Utf16CodeUnits };

/// Length in bytes of the UTF-8 sequence at Text[I] (1 for an invalid byte).
unsigned utf8SequenceLength(llvm::StringRef Text, size_t I);

struct LinePosition {
  unsigned Line = 0;   ///< 0-based
  size_t Column = 0;   ///< 0-based, in Unit
};
/// The line and column of a byte offset (clamped to the text's end).
LinePosition positionOf(llvm::StringRef Text, size_t Offset, ColumnUnit Unit);
/// The byte offset of a line and column; past a line's end clamps to it, past
/// the last line to the text's end.
size_t offsetOf(llvm::StringRef Text, uint64_t Line, uint64_t Column, ColumnUnit Unit);

/// Percent-encodes a path for a URI (unreserved characters and '/' stay).
std::string percentEncodePath(llvm::StringRef Path);
/// file:// URI of an absolute path.
std::string uriFromPath(llvm::StringRef Path);
/// The local path of a file:// URI (file:///p or file://localhost/p); nothing
/// for another scheme or authority, a bad escape or an encoded NUL.
std::optional<std::string> pathFromUri(llvm::StringRef Uri);

/// 16 lower-case hex digits.
std::string hex64(uint64_t Value);

} // namespace torch_syncfree

#endif
