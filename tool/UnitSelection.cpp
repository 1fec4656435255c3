#include "UnitSelection.h"

#include "clang/Basic/DiagnosticOptions.h"
#include "clang/DependencyScanning/DependencyScanningService.h"
#include "clang/Frontend/TextDiagnosticBuffer.h"
#include "clang/Tooling/DependencyScanningTool.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

using namespace clang;

namespace torch_syncfree {

struct UnitSelection::Scanner {
  dependencies::DependencyScanningService Service{dependencies::ScanningMode::DependencyDirectivesScan,
                                                  dependencies::ScanningOutputFormat::Make};
};

UnitSelection::UnitSelection(std::vector<std::string> Names)
    : Names(std::move(Names)), Scan(std::make_unique<Scanner>()) {}
UnitSelection::~UnitSelection() = default;

bool UnitSelection::named(StringRef Path) const {
  return llvm::any_of(Names, [&](const std::string &Name) { return Path.ends_with(Name); });
}

bool UnitSelection::mayHaveFindings(const std::string &File,
                                    const tooling::CompileCommand &Command) {
  if (named(File))
    return true;
  // One tool per call: the scanner's tool is not shared between threads; the
  // service (its caches) is.
  tooling::DependencyScanningTool Tool(Scan->Service);
  TextDiagnosticBuffer Diagnostics;
  std::optional<std::string> Deps =
      Tool.getDependencyFile(Command.CommandLine, Command.Directory, Diagnostics);
  if (!Deps)
    return true;
  // Make format: "target: dep dep \<newline> dep ..."; paths escape spaces.
  StringRef Rest = StringRef(*Deps).split(':').second;
  std::string Path;
  for (size_t I = 0; I <= Rest.size(); ++I) {
    char C = I < Rest.size() ? Rest[I] : ' ';
    if (C == '\\' && I + 1 < Rest.size() && Rest[I + 1] == ' ') {
      Path += ' ';
      ++I;
    } else if (C == '\\' && I + 1 < Rest.size() && Rest[I + 1] == '\n') {
      ++I;
    } else if (C == ' ' || C == '\n' || C == '\t') {
      if (!Path.empty()) {
        SmallString<256> Absolute(Path);
        llvm::sys::path::make_absolute(Command.Directory, Absolute);
        llvm::sys::path::remove_dots(Absolute, /*remove_dot_dot=*/true);
        if (named(Absolute))
          return true;
      }
      Path.clear();
    } else {
      Path += C;
    }
  }
  return false;
}

} // namespace torch_syncfree
