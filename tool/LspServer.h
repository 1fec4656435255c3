// `torch-syncfree --lsp`: a small Language Server Protocol server over stdio, for
// editors whose C++ language server (clangd) cannot load clang-tidy plugins. It
// publishes the findings of opened and saved documents and offers each fix-it as
// a code action. Hand-written: LLVM ships no LSP transport outside clangd.
#ifndef TORCH_SYNCFREE_LSPSERVER_H
#define TORCH_SYNCFREE_LSPSERVER_H

#include "clang-tidy/ClangTidyOptions.h"
#include <functional>
#include <memory>

namespace torch_syncfree {

/// Serves LSP on stdin/stdout until `exit`. Returns the process exit status.
int runLspServer(std::function<std::unique_ptr<clang::tidy::ClangTidyOptionsProvider>()> Options);

} // namespace torch_syncfree

#endif
