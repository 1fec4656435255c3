#include "Formatters.h"

#include "FixApplier.h"
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

  void unit(const std::vector<FindingRecord> &Findings, ClangTidyContext &Context) override {
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
    unsigned WarningsAsErrors = 0;
    // clang-tidy's printer writes to stdout.
    std::optional<StdoutToStderr> Redirect;
    if (FindingsToStderr)
      Redirect.emplace();
    handleErrors(asClangTidyErrors(Printed), Context, FB_NoFix, WarningsAsErrors, BaseFS);
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
