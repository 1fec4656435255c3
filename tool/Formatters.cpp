#include "Formatters.h"

#include "FixApplier.h"
#include "InputFiles.h"
#include "Reporting.h"
#include "clang-tidy/ClangTidy.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include <optional>

using namespace clang::tidy;

namespace torch_syncfree {

namespace {

class TextFormatter : public FindingFormatter {
public:
  TextFormatter(llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> BaseFS, bool FindingsToStderr)
      : BaseFS(std::move(BaseFS)), FindingsToStderr(FindingsToStderr) {}

  void unit(const std::vector<FindingRecord> &Findings, ClangTidyContext &Context,
            llvm::StringRef NotCompiled) override {
    if (Findings.empty())
      return;
    // clang's snippet printer shows every line a fix-it touches (up to 16): a
    // fix around a loop printed the whole loop under its finding. The text
    // shows fixes that stay on the finding's line; the others are applied by
    // --fix and listed by --export-fixes, JSON and SARIF.
    std::vector<FindingRecord> Printed = Findings;
    for (FindingRecord &Error : Printed) {
      auto &Text = Files[Error.Message.FilePath];
      if (!Text)
        if (auto Loaded = llvm::MemoryBuffer::getFile(Error.Message.FilePath, /*IsText=*/false,
                                                      /*RequiresNullTerminator=*/false))
          Text = std::move(*Loaded);
      if (!Text || !fixStaysOnLine(Error, Text->getBuffer()))
        Error.Message.Fix.clear();
    }
    // clang's printer writes paths and messages as they are: a file name with
    // a line break would start a line a CI runner parses (`::error ...`). Such
    // a finding is printed here, escaped and without its source snippet.
    auto Printable = [](const clang::tooling::DiagnosticMessage &M) {
      return printable(M.FilePath) == M.FilePath && printable(M.Message) == M.Message;
    };
    std::vector<FindingRecord> Escaped;
    llvm::erase_if(Printed, [&](FindingRecord &Error) {
      if (Printable(Error.Message) && llvm::all_of(Error.Notes, Printable))
        return false;
      Escaped.push_back(std::move(Error));
      return true;
    });
    unsigned WarningsAsErrors = 0;
    // clang-tidy's printer writes to stdout.
    std::optional<StdoutToStderr> Redirect;
    if (FindingsToStderr)
      Redirect.emplace();
    handleErrors(asClangTidyErrors(Printed), Context, FB_NoFix, WarningsAsErrors, BaseFS);
    llvm::raw_ostream &OS = llvm::outs();
    for (const FindingRecord &Error : Escaped) {
      auto Line = [&](const clang::tooling::DiagnosticMessage &M, llvm::StringRef Level, llvm::StringRef Name) {
        OS << printable(M.FilePath);
        if (!M.FilePath.empty())
          OS << ":" << lineColumnText(M.FilePath, M.FileOffset);
        OS << ": " << Level << ": " << printable(M.Message);
        if (!Name.empty())
          OS << " [" << Name << "]";
        OS << "\n";
      };
      Line(Error.Message, Error.DiagLevel == ClangTidyError::Error ? "error" : "warning",
           Error.DiagnosticName);
      for (const clang::tooling::DiagnosticMessage &Note : Error.Notes)
        Line(Note, "note", "");
    }
    // JSON and SARIF mark each such finding "incomplete"; the text says it once.
    if (!NotCompiled.empty())
      OS << "torch-syncfree: note: " << printable(NotCompiled) << " does not compile: "
         << (Findings.size() == 1 ? "the finding above is" : "the findings above are")
         << " from an incomplete analysis and may be wrong; fix the compile error and run again\n";
    OS.flush();
  }

  /// "line:column" of Offset in File ("0:0" when it cannot be read).
  std::string lineColumnText(llvm::StringRef File, unsigned Offset) {
    std::string Where = fileLineColumn(File, Offset);
    llvm::StringRef Rest = Where;
    if (!Rest.consume_front(File) || !Rest.consume_front(":"))
      return "0:0";
    return Rest.str();
  }

private:
  llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> BaseFS;
  bool FindingsToStderr;
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> Files; // read once per file
};

class JsonFormatter : public FindingFormatter {
public:
  void finish(const std::vector<ReportedFinding> &Reported, llvm::ArrayRef<ConfigNotice>,
              llvm::raw_ostream &OS) override {
    printJson(Reported, OS);
  }
};

class SarifFormatter : public FindingFormatter {
public:
  SarifFormatter(std::string Root, std::string ToolVersion)
      : Root(std::move(Root)), ToolVersion(std::move(ToolVersion)) {}
  void finish(const std::vector<ReportedFinding> &Reported, llvm::ArrayRef<ConfigNotice> Notices,
              llvm::raw_ostream &OS) override {
    printSarif(Reported, Root, ToolVersion, OS, Notices);
  }

private:
  std::string Root, ToolVersion;
};

} // namespace

std::unique_ptr<FindingFormatter>
makeTextFormatter(llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> BaseFS,
                  bool FindingsToStderr) {
  return std::make_unique<TextFormatter>(std::move(BaseFS), FindingsToStderr);
}

std::unique_ptr<FindingFormatter> makeJsonFormatter() { return std::make_unique<JsonFormatter>(); }

std::unique_ptr<FindingFormatter> makeSarifFormatter(std::string Root, std::string ToolVersion) {
  return std::make_unique<SarifFormatter>(std::move(Root), std::move(ToolVersion));
}

} // namespace torch_syncfree
