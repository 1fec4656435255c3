// What a repository's own configuration did to the checks. A committed
// .clang-tidy can disable checks (`Checks: '-*,torch-sync-print'`) or change
// their options (`OnlyDefiniteGPU: true`) and so silence a CI run; the run
// says so, in its summary and in SARIF (invocations[].toolConfigurationNotifications).
#ifndef TORCH_SYNCFREE_CONFIGAUDIT_H
#define TORCH_SYNCFREE_CONFIGAUDIT_H

#include "Reporting.h"
#include "clang-tidy/ClangTidyOptions.h"
#include "llvm/ADT/ArrayRef.h"
#include <string>
#include <vector>

namespace torch_syncfree {

/// One notice per configuration file and effect, for the files analysed:
/// the torch-sync checks it disables that would run without it, and the
/// torch-sync options (check-local or global) it sets to a value that holds.
std::vector<ConfigNotice> auditRepositoryConfig(clang::tidy::ClangTidyOptionsProvider &Provider,
                                                llvm::ArrayRef<std::string> Files,
                                                llvm::ArrayRef<llvm::StringRef> CheckNames);

} // namespace torch_syncfree

#endif
