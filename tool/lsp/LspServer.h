// `torch-syncfree --lsp`: a Language Server Protocol front end over the same
// checks (docs/editors.md). It runs beside clangd, which cannot load plugins.
#ifndef TORCH_SYNCFREE_LSP_LSPSERVER_H
#define TORCH_SYNCFREE_LSP_LSPSERVER_H

#include "ProfileJoin.h"
#include "SharedPch.h"
#include "clang-tidy/ClangTidyOptions.h"
#include "llvm/ADT/StringRef.h"
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace torch_syncfree {

struct LspOptions {
  std::function<std::unique_ptr<clang::tidy::ClangTidyOptionsProvider>()> Options;
  /// --compile-commands-dir: the one directory to read compile_commands.json from.
  std::string CompileCommandsDir;
  /// --profile: findings carry their measured cost (ProfileJoin.h).
  std::shared_ptr<const SyncProfile> Profile;
  /// Where shared PCHs are compiled (a worker process under --tu-timeout);
  /// unset: in the server (SharedPch.h).
  std::optional<PchBuilderProcess> PchBuilder;
  /// --summaries: joins each analysis's unit with the other units' records of
  /// the summaries file a batch run over the database wrote (the batch's
  /// joinWithSummaries; the server does not depend on the batch).
  std::function<std::string(llvm::StringRef File, std::vector<FindingRecord> &Findings)> JoinSummaries;
  /// Delay between the last didChange and its analysis.
  unsigned DebounceMs = 400;
};

int runLspServer(LspOptions Options);

} // namespace torch_syncfree

#endif
