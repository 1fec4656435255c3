// Compile commands from a repository are data, not code: the sanitiser keeps
// the options that change how a file parses and drops everything that would
// write a file, load code, read a configuration file or run a program. One
// implementation serves the batch tool, the language server and the extra
// arguments of .clang-tidy files (docs/design.md, "Threat model").
#ifndef TORCH_SYNCFREE_COMPILECOMMANDSANITIZER_H
#define TORCH_SYNCFREE_COMPILECOMMANDSANITIZER_H

#include "clang-tidy/ClangTidyOptions.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "llvm/ADT/StringRef.h"
#include <memory>
#include <string>
#include <vector>

namespace torch_syncfree {

/// The clang the analysis stands for: its resource directory (builtin and
/// cuda_wrappers headers) and the driver path that replaces argv[0].
struct ToolchainPaths {
  std::string ClangDriver;  ///< e.g. /usr/lib/llvm-22/bin/clang++
  std::string ResourceDir;  ///< e.g. /usr/lib/llvm-22/lib/clang/22
  static ToolchainPaths &get();
};

/// What was dropped from a command, by kind ("loads code", "writes files", ...),
/// with the first option seen of each kind.
struct SanitizerReport {
  std::vector<std::pair<std::string, std::string>> Dropped; // kind, option text
  std::string Error; ///< non-empty: the command cannot be used (e.g. a response file is missing)
};

/// Sanitises a whole compile command (argv[0] first). Response files are
/// expanded relative to Directory and their contents sanitised too.
std::vector<std::string> sanitizeCommandLine(const std::vector<std::string> &CommandLine,
                                             llvm::StringRef Directory, SanitizerReport &Report);

/// Sanitises a fragment of options (no argv[0]): .clang-tidy ExtraArgs, --extra-arg.
std::vector<std::string> sanitizeExtraArgs(const std::vector<std::string> &Args,
                                           SanitizerReport &Report);

/// Prints one warning per dropped kind (process-wide, once per kind and origin).
void warnDropped(const SanitizerReport &Report, llvm::StringRef Origin);

/// A compilation database whose commands are sanitised. Commands that cannot
/// be sanitised (an unreadable response file) and commands whose directory
/// does not exist are reported by commandError() and never handed to clang.
class SanitizedDatabase : public clang::tooling::CompilationDatabase {
public:
  explicit SanitizedDatabase(std::unique_ptr<clang::tooling::CompilationDatabase> Inner)
      : Inner(std::move(Inner)) {}
  std::vector<clang::tooling::CompileCommand> getCompileCommands(llvm::StringRef File) const override;
  std::vector<std::string> getAllFiles() const override { return Inner->getAllFiles(); }
  std::vector<clang::tooling::CompileCommand> getAllCompileCommands() const override;
  /// Why File cannot be analysed with this database ("" when it can).
  std::string commandError(llvm::StringRef File) const;
  /// --removed-arg: arguments taken out of every (sanitised) command.
  void setRemovedArgs(std::vector<std::string> Args) { RemovedArgs = std::move(Args); }

private:
  std::vector<std::string> RemovedArgs;
  std::unique_ptr<clang::tooling::CompilationDatabase> Inner;
};

/// Wraps a .clang-tidy options provider so that ExtraArgs and ExtraArgsBefore
/// pass through the same sanitiser as compile commands.
/// RemovedArgs (--removed-arg) are taken out of them too.
std::unique_ptr<clang::tidy::ClangTidyOptionsProvider>
sanitizeOptionsProvider(std::unique_ptr<clang::tidy::ClangTidyOptionsProvider> Inner,
                        std::vector<std::string> RemovedArgs = {});

/// CCC_OVERRIDE_OPTIONS and friends edit every clang command line; the tool
/// ignores them (with a warning) so the environment cannot smuggle options in.
void scrubCompilerEnvironment();

/// clang's driver turns `-include X` into `-include-pch X.pch` when a file
/// X.pch (or X.gch) exists: a file the repository ships would replace the
/// header (findings vanish; a corrupt one fails the parse or crashes clang).
/// The sanitizer drops explicit -include-pch, so an implicit PCH in a fresh
/// invocation came from that probe: X is included as written instead.
void includeHeaderInsteadOfProbedPch(clang::CompilerInvocation &Invocation);

} // namespace torch_syncfree

#endif
