// libFuzzer target: every check (through clang-tidy's driver, as the tool runs
// them) on a mutated source with the mock LibTorch headers, then its fixes
// applied in memory. Built in the sanitizer build (scripts/test.sh), run for a
// fixed number of iterations by test/tool/fuzz.test with the lit inputs as the
// seed corpus. A crash, a sanitizer report or fixes that do not apply are
// failures; every crash found becomes a lit regression case.
#include "clang-tidy/ClangTidy.h"
#include "clang-tidy/ClangTidyDiagnosticConsumer.h"
#include "clang-tidy/ClangTidyOptions.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"
#include <cstdlib>
#include <string>

using namespace clang;
using namespace clang::tidy;

#ifndef TORCH_SYNCFREE_MOCK_INCLUDE
#error "TORCH_SYNCFREE_MOCK_INCLUDE must name test/mock/include"
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size > 64 * 1024)
    return 0; // keep iterations short
  std::string Code(reinterpret_cast<const char *>(Data), Size);
  const std::string Path = "/tmp/torch-syncfree-fuzz-input.cpp"; // in memory only
  ClangTidyGlobalOptions Global;
  ClangTidyOptions Options = ClangTidyOptions::getDefaults();
  Options.Checks = "-*,torch-sync-*";
  Options.HeaderFilterRegex = ".*";
  ClangTidyContext Context(
      std::make_unique<DefaultOptionsProvider>(Global, Options));
  auto Memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  Memory->addFile(Path, 0, llvm::MemoryBuffer::getMemBufferCopy(Code, Path));
  auto FS = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
  FS->pushOverlay(Memory);
  tooling::FixedCompilationDatabase Database(
      "/tmp",
      {"-std=c++17", "-isystem", TORCH_SYNCFREE_MOCK_INCLUDE, "-ferror-limit=0"});
  std::vector<ClangTidyError> Errors =
      runClangTidy(Context, Database, {Path}, FS, false, false, "", true);
  tooling::Replacements All;
  for (const ClangTidyError &E : Errors)
    for (const auto &Entry : E.Message.Fix)
      if (Entry.first() == Path)
        for (const tooling::Replacement &R : Entry.second)
          llvm::consumeError(All.add(R)); // conflicting fixes are dropped, as --fix does
  llvm::Expected<std::string> Fixed = tooling::applyAllReplacements(Code, All);
  if (!Fixed) {
    llvm::errs() << "fixes do not apply: " << llvm::toString(Fixed.takeError()) << "\n";
    std::abort();
  }
  return 0;
}
