//===- utils/SourceText.cpp - Source text, macros and markers --------------===//
#include "utils/SourceText.h"
#include "ApiFacts.h"
#include "llvm/Support/Path.h"

#include "clang/Lex/Lexer.h"

using namespace clang;
using llvm::StringRef;

namespace torch_syncfree {

static constexpr llvm::StringLiteral InsertedSyncTag = "NOLINT(torch-sync-*): torch-syncfree";

StringRef validationMacro(ASTContext &Ctx, SourceLocation Loc, CharSourceRange *Invocation) {
  const SourceManager &SM = Ctx.getSourceManager();
  for (unsigned Depth = 0; Loc.isMacroID() && Depth < 64; ++Depth) {
    if (SM.isMacroArgExpansion(Loc)) {
      StringRef Name = Lexer::getImmediateMacroName(Loc, SM, Ctx.getLangOpts());
      std::string Upper = Name.upper();
      if (Name == "assert" || StringRef(Upper).contains("ASSERT") || StringRef(Upper).contains("CHECK")) {
        if (Invocation) // the whole outermost invocation, as spelled in the file
          *Invocation = SM.getExpansionRange(Loc);
        return Name;
      }
    }
    Loc = SM.getImmediateMacroCallerLoc(Loc);
  }
  return "";
}

bool isInValidationMessage(ASTContext &Ctx, SourceLocation Loc) {
  if (!Loc.isMacroID())
    return false;
  const SourceManager &SM = Ctx.getSourceManager();
  // The outermost invocation as written in a file, and Loc's spelling in it.
  CharSourceRange Invocation = SM.getExpansionRange(Loc);
  SourceLocation Spelled = SM.getSpellingLoc(Loc);
  if (Invocation.isInvalid() || Spelled.isMacroID() ||
      SM.getFileID(Invocation.getBegin()) != SM.getFileID(Spelled))
    return false;
  bool Invalid = false;
  StringRef Buffer = SM.getBufferData(SM.getFileID(Spelled), &Invalid);
  if (Invalid)
    return false;
  unsigned Begin = SM.getFileOffset(Invocation.getBegin());
  unsigned End = SM.getFileOffset(Invocation.getEnd());
  unsigned At = SM.getFileOffset(Spelled);
  if (End > Buffer.size() || At < Begin || At > End)
    return false;
  StringRef Text = Buffer.slice(Begin, End + 1);
  size_t Open = Text.find('(');
  if (Open == StringRef::npos)
    return false;
  // The macros whose arguments after the condition only build the failure's
  // message (TORCH_CHECK_WITH takes the error type first).
  unsigned Traits = apiTraits(Text.take_front(Open).trim());
  unsigned FirstMessageArg = !(Traits & CheckMacro) ? 0 : (Traits & ErrorTypeFirst) ? 2 : 1;
  if (!FirstMessageArg)
    return false;
  // Which argument holds Loc: top-level commas, skipping brackets and literals.
  unsigned Arg = 0, Depth = 0;
  for (size_t I = Open + 1; I < Text.size(); ++I) {
    if (Begin + I == At)
      return Arg >= FirstMessageArg;
    char C = Text[I];
    if (C == '"' || C == '\'') {
      for (++I; I < Text.size() && Text[I] != C; ++I)
        if (Text[I] == '\\')
          ++I;
    } else if (C == '(' || C == '[' || C == '{') {
      ++Depth;
    } else if (C == ')' || C == ']' || C == '}') {
      if (Depth == 0)
        return false;
      --Depth;
    } else if (C == ',' && Depth == 0) {
      ++Arg;
    }
  }
  return false;
}

std::string insertedSyncComment(llvm::StringRef Why) {
  return (" /* " + InsertedSyncTag + ", " + Why + " */").str();
}

std::string insertedSyncMarker(llvm::StringRef Why) { return (" /* torch-syncfree: " + Why + " */").str(); }

std::string spelledText(ASTContext &Ctx, const Stmt *S) {
  CharSourceRange Range = CharSourceRange::getTokenRange(S->getSourceRange());
  return Lexer::getSourceText(Range, Ctx.getSourceManager(), Ctx.getLangOpts()).str();
}

bool isMarkedInsertedSync(const Expr *E, ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation End = SM.getSpellingLoc(E->getEndLoc());
  End = Lexer::getLocForEndOfToken(End, 0, SM, Ctx.getLangOpts());
  if (End.isInvalid())
    return false;
  bool Invalid = false;
  llvm::StringRef Buffer = SM.getBufferData(SM.getFileID(End), &Invalid);
  if (Invalid)
    return false;
  return Buffer.substr(SM.getFileOffset(End)).ltrim(" \t").starts_with("/* torch-syncfree:");
}

bool isOnInsertedSyncLine(SourceLocation Loc, const SourceManager &SM) {
  SourceLocation Spelling = SM.getSpellingLoc(Loc);
  bool Invalid = false;
  llvm::StringRef Buffer = SM.getBufferData(SM.getFileID(Spelling), &Invalid);
  if (Invalid)
    return false;
  unsigned Offset = SM.getFileOffset(Spelling);
  size_t Begin = Buffer.take_front(Offset).rfind('\n');
  Begin = Begin == llvm::StringRef::npos ? 0 : Begin + 1;
  llvm::StringRef Line = Buffer.substr(Begin).split('\n').first;
  return Line.contains(InsertedSyncTag);
}

std::string absoluteFileName(const clang::SourceManager &SM, clang::SourceLocation Loc) {
  llvm::SmallString<256> Path(SM.getFilename(Loc));
  if (Path.empty())
    return "";
  SM.getFileManager().makeAbsolutePath(Path);
  llvm::sys::path::remove_dots(Path, /*remove_dot_dot=*/true);
  return std::string(Path);
}

} // namespace torch_syncfree
