#include "TextEncoding.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"

namespace torch_syncfree {

unsigned utf8SequenceLength(llvm::StringRef Text, size_t I) {
  unsigned Length = llvm::getNumBytesForUTF8(static_cast<llvm::UTF8>(Text[I]));
  if (Length <= 1 || I + Length > Text.size())
    return 1;
  for (unsigned K = 1; K < Length; ++K)
    if ((static_cast<unsigned char>(Text[I + K]) & 0xC0) != 0x80)
      return 1;
  return Length;
}

/// Code units of the sequence of Length bytes: 4-byte sequences are surrogate
/// pairs in UTF-16.
static unsigned unitsOf(unsigned Length, ColumnUnit Unit) {
  return Unit == ColumnUnit::Utf8Bytes ? Length : (Length == 4 ? 2 : 1);
}

LinePosition positionOf(llvm::StringRef Text, size_t Offset, ColumnUnit Unit) {
  Offset = std::min(Offset, Text.size());
  llvm::StringRef Before = Text.take_front(Offset);
  size_t LineStart = Before.rfind('\n');
  LineStart = LineStart == llvm::StringRef::npos ? 0 : LineStart + 1;
  LinePosition P;
  P.Line = static_cast<unsigned>(Before.count('\n'));
  for (size_t I = LineStart; I < Offset;) {
    unsigned Length = utf8SequenceLength(Text, I);
    P.Column += unitsOf(Length, Unit);
    I += Length;
  }
  return P;
}

size_t offsetOf(llvm::StringRef Text, uint64_t Line, uint64_t Column, ColumnUnit Unit) {
  size_t I = 0;
  for (uint64_t L = 0; L < Line; ++L) {
    size_t Newline = Text.find('\n', I);
    if (Newline == llvm::StringRef::npos)
      return Text.size();
    I = Newline + 1;
  }
  uint64_t Units = 0;
  while (I < Text.size() && Text[I] != '\n' && Units < Column) {
    unsigned Length = utf8SequenceLength(Text, I);
    Units += unitsOf(Length, Unit);
    I += Length;
  }
  return I;
}

std::string percentEncodePath(llvm::StringRef Path) {
  std::string Out;
  for (unsigned char C : Path) {
    if (llvm::isAlnum(C) || llvm::StringRef("-._~/").contains(C))
      Out += C;
    else
      Out += "%" + llvm::utohexstr(C, /*LowerCase=*/false, /*Width=*/2);
  }
  return Out;
}

std::string uriFromPath(llvm::StringRef Path) { return "file://" + percentEncodePath(Path); }

std::optional<std::string> pathFromUri(llvm::StringRef Uri) {
  if (!Uri.consume_front("file://"))
    return std::nullopt;
  // file:///path or file://localhost/path; no other authority is local.
  if (!Uri.starts_with("/") && !Uri.consume_front("localhost"))
    return std::nullopt;
  std::string Path;
  for (size_t I = 0; I < Uri.size(); ++I) {
    char C = Uri[I];
    if (C != '%') {
      Path += C;
      continue;
    }
    if (I + 2 >= Uri.size() || !llvm::isHexDigit(Uri[I + 1]) || !llvm::isHexDigit(Uri[I + 2]))
      return std::nullopt;
    char Decoded = static_cast<char>(llvm::hexFromNibbles(Uri[I + 1], Uri[I + 2]));
    if (Decoded == '\0')
      return std::nullopt;
    Path += Decoded;
    I += 2;
  }
  return Path;
}

std::string hex64(uint64_t Value) { return llvm::utohexstr(Value, /*LowerCase=*/true, 16); }

} // namespace torch_syncfree
