// --diff and --line-filter: which translation units can have a finding at
// all. clang-tidy's line filter drops every diagnostic in a file it does not
// name (a name matches a path that ends with it), so a unit that reads none
// of the named files is not analysed. What a unit reads comes from clang's
// dependency scanner (a minimised preprocessing, no parse); when the scan
// fails the unit is analysed.
#ifndef TORCH_SYNCFREE_UNIT_SELECTION_H
#define TORCH_SYNCFREE_UNIT_SELECTION_H

#include "clang/Tooling/CompilationDatabase.h"
#include <memory>
#include <string>
#include <vector>

namespace torch_syncfree {

class UnitSelection {
public:
  /// Names: the file names of the line filter.
  explicit UnitSelection(std::vector<std::string> Names);
  ~UnitSelection();
  /// Whether File (analysed with Command) reads a file the filter names.
  bool mayHaveFindings(const std::string &File, const clang::tooling::CompileCommand &Command);

private:
  bool named(llvm::StringRef Path) const;
  std::vector<std::string> Names;
  struct Scanner;
  std::unique_ptr<Scanner> Scan;
};

} // namespace torch_syncfree

#endif
