//===- utils/Directives.cpp - Preprocessor directives of a file ------------===//
#include "utils/Directives.h"

#include "clang/Lex/DependencyDirectivesScanner.h"
#include "llvm/ADT/SmallVector.h"

using namespace clang;
using namespace clang::dependency_directives_scan;

namespace torch_syncfree {

std::vector<SourceDirective> scanDirectives(llvm::StringRef Text) {
  llvm::SmallVector<dependency_directives_scan::Token, 256> Tokens;
  llvm::SmallVector<Directive, 64> Directives;
  if (scanSourceForDependencyDirectives(Text, Tokens, Directives))
    return {};
  std::vector<SourceDirective> Found;
  for (const Directive &D : Directives) {
    if (D.Tokens.empty())
      continue;
    // The line ends after the directive's last token (the scanner ends each
    // directive with an end-of-directive token that is not on its line).
    const dependency_directives_scan::Token *Last = &D.Tokens.front();
    for (const dependency_directives_scan::Token &T : D.Tokens)
      if (!T.is(tok::eod) && !T.is(tok::eof))
        Last = &T;
    size_t LineEnd = Text.find('\n', Last->Offset + Last->Length);
    SourceDirective Out{SourceDirective::Other,
                        D.Tokens.front().Offset,
                        static_cast<unsigned>(LineEnd == llvm::StringRef::npos ? Text.size() : LineEnd + 1),
                        {}};
    switch (D.Kind) {
    case pp_include:
    case pp_include_next:
    case pp_import:
      Out.Kind = SourceDirective::Include;
      // `#`, the directive's name, then the header: one token `<a/b.h>` or `"a.h"`.
      if (D.Tokens.size() >= 3) {
        llvm::StringRef Name = Text.substr(D.Tokens[2].Offset, D.Tokens[2].Length);
        if (Name.size() >= 2 && (Name.front() == '<' || Name.front() == '"')) {
          Out.Angled = Name.front() == '<';
          Out.Header = Name.drop_front().drop_back();
        }
      }
      break;
    case pp_if:
    case pp_ifdef:
    case pp_ifndef:
      Out.Kind = SourceDirective::Conditional;
      break;
    case pp_endif:
      Out.Kind = SourceDirective::EndConditional;
      break;
    default:
      break;
    }
    Found.push_back(Out);
  }
  return Found;
}

} // namespace torch_syncfree
