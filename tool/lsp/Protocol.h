// The language server's protocol layer: JSON-RPC framing over stdin/stdout and
// the typed LSP messages the server reads and writes (clangd's Protocol.h shape:
// a struct per message, fromJSON/toJSON next to it). Nothing here knows about
// documents, scheduling or analyses.
#ifndef TORCH_SYNCFREE_LSP_PROTOCOL_H
#define TORCH_SYNCFREE_LSP_PROTOCOL_H

#include "TextEncoding.h"
#include "llvm/Support/JSON.h"
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace torch_syncfree {
namespace lsp {

/// Reads "Content-Length: N\r\n\r\n<N bytes>" frames from fd 0 and writes them
/// to fd 1. Hand-written: LLVM has no LSP transport outside clangd's sources.
/// A frame whose header or length is wrong is answered with an error and
/// skipped: reading resumes at the next "Content-Length:" header, so one bad
/// frame never desynchronises the stream for good. Linear in the input.
class Transport {
public:
  /// False at end of input. Otherwise one of: Message (a frame whose body is
  /// JSON), FrameError (a bad frame, skipped) or ParseError (a well-framed body
  /// that is not JSON).
  bool read(std::optional<llvm::json::Value> &Message, std::string &FrameError,
            std::string &ParseError);
  /// Writes one message (thread-safe); false when the client has gone (EPIPE).
  bool write(const llvm::json::Value &Message);

private:
  size_t findHeader(size_t From) const;
  size_t splitPoint(size_t From, size_t To);
  void consume(size_t N);
  void resync(size_t From);
  bool fill();
  /// Where splitPoint's scan of the current body stands (reset when the body
  /// start moves: every erase of the buffer moves it to another frame).
  struct BodyScan {
    size_t From = std::string::npos, Pos = 0;
    int Depth = 0;
    bool InString = false, Escaped = false;
    size_t End = std::string::npos;
  } Scan;
  std::string Buffer;
  std::mutex WriteMutex;
  bool Closed = false;
};

/// Positions: LSP lines and columns in UTF-16 code units (the default) or
/// UTF-8 bytes when the client offers it (LSP 3.17 positionEncodings).
struct Position {
  int64_t Line = 0, Character = 0;
};
struct Range {
  Position Start, End;
};
bool fromJSON(const llvm::json::Value &V, Position &P, llvm::json::Path Path);
bool fromJSON(const llvm::json::Value &V, Range &R, llvm::json::Path Path);
llvm::json::Value toJSON(const Position &P);
llvm::json::Value toJSON(const Range &R);

/// Converts between byte offsets of a text and LSP positions.
struct PositionCodec {
  bool Utf8 = false;
  ColumnUnit unit() const { return Utf8 ? ColumnUnit::Utf8Bytes : ColumnUnit::Utf16CodeUnits; }
  Position position(llvm::StringRef Text, size_t Offset) const;
  /// Byte offset of P; positions past a line's end clamp to it.
  std::optional<size_t> offset(llvm::StringRef Text, const Position &P) const;
  /// The range of the token at Offset (an identifier, or one character).
  Range tokenRange(llvm::StringRef Text, size_t Offset) const;
};

struct InitializeParams {
  bool Utf8Positions = false;   ///< capabilities.general.positionEncodings has "utf-8"
  bool WorkDoneProgress = false; ///< capabilities.window.workDoneProgress
};
bool fromJSON(const llvm::json::Value &V, InitializeParams &P, llvm::json::Path Path);

struct TextDocumentItem {
  std::string Uri;
  int64_t Version = 0;
  std::string Text;
};
struct DidOpenParams {
  TextDocumentItem TextDocument;
};
struct ContentChange {
  std::optional<Range> ChangedRange; ///< none: the whole text
  std::string Text;
};
struct DidChangeParams {
  std::string Uri;
  std::optional<int64_t> Version;
  std::vector<ContentChange> Changes;
};
struct DidSaveParams {
  std::string Uri;
  std::optional<std::string> Text;
};
struct DocumentParams { ///< didClose, and any request naming one document
  std::string Uri;
};
struct CodeActionParams {
  std::string Uri;
  Range Selection;
};
bool fromJSON(const llvm::json::Value &V, DidOpenParams &P, llvm::json::Path Path);
bool fromJSON(const llvm::json::Value &V, ContentChange &C, llvm::json::Path Path);
bool fromJSON(const llvm::json::Value &V, DidChangeParams &P, llvm::json::Path Path);
bool fromJSON(const llvm::json::Value &V, DidSaveParams &P, llvm::json::Path Path);
bool fromJSON(const llvm::json::Value &V, DocumentParams &P, llvm::json::Path Path);
bool fromJSON(const llvm::json::Value &V, CodeActionParams &P, llvm::json::Path Path);

/// Applies one change to Text; false (Text unchanged) when its range is invalid.
bool applyChange(std::string &Text, const ContentChange &Change, const PositionCodec &Codec);

struct RelatedInformation {
  std::string Uri;
  Range Where;
  std::string Message;
};
struct Diagnostic {
  Range Where;
  int Severity = 2; ///< 1 error, 2 warning
  std::string Code, Message;
  std::string CodeHref; ///< codeDescription.href; "" for none
  llvm::json::Object Data;
  std::vector<RelatedInformation> Related;
};
llvm::json::Value toJSON(const Diagnostic &D);

struct TextEdit {
  Range Where;
  std::string NewText;
};
struct CodeAction {
  std::string Title;
  Diagnostic Fixes;
  std::string Uri;
  std::vector<TextEdit> Edits;
};
llvm::json::Value toJSON(const CodeAction &A);

/// Messages the server sends.
llvm::json::Value publishDiagnostics(const std::string &Uri, const std::vector<Diagnostic> &Diagnostics,
                                     std::optional<int64_t> Version);
llvm::json::Value response(const llvm::json::Value &Id, llvm::json::Value Result);
llvm::json::Value errorResponse(const llvm::json::Value *Id, int Code, const std::string &Message);
llvm::json::Value notification(llvm::StringRef Method, llvm::json::Value Params);
llvm::json::Value request(const llvm::json::Value &Id, llvm::StringRef Method, llvm::json::Value Params);

/// JSON-RPC error codes.
enum ErrorCode : int {
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
};

} // namespace lsp
} // namespace torch_syncfree

#endif
