// libFuzzer target for the readers of cache files a repository could ship: a
// results entry (ResultsCache::lookup) and a shared-PCH manifest
// (SharedPchCache::trusted). Each input is signed with the run's key before it
// is written, so the fuzzer reaches the parsers behind the MAC (an unsigned
// entry is rejected before any parsing). The first byte picks the reader. Run
// by test/tool/fuzz.test in the sanitizer build.
#include "CacheAuth.h"
#include "FuzzFiles.h"
#include "ResultsCache.h"
#include "SharedPch.h"

#include "clang-tidy/ClangTidyOptions.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include <string>

using namespace torch_syncfree;

namespace {

struct Fixture {
  std::string Root;
  CacheAuthenticator Auth{llvm::StringRef("0123456789abcdef0123456789abcdef", 32)};
  clang::tooling::FixedCompilationDatabase Database{"/tmp", std::vector<std::string>{}};
  clang::tidy::DefaultOptionsProvider Options{clang::tidy::ClangTidyGlobalOptions(),
                                              clang::tidy::ClangTidyOptions::getDefaults()};
  Fixture() {
    Root = fuzzScratchDirectory("torch-syncfree-fuzz-caches");
    llvm::sys::fs::create_directories(Root + "/results");
    llvm::sys::fs::create_directories(Root + "/pch");
    // A file an entry may name as its input (the seeds do).
    write(Root + "/input.cpp", "int main() { return 0; }\n");
  }
  static void write(const std::string &Path, llvm::StringRef Bytes) { writeFuzzFile(Path, Bytes); }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static Fixture F; // one directory for the process: the readers' only state
  if (Size < 1 || Size > 64 * 1024)
    return 0;
  llvm::StringRef Payload(reinterpret_cast<const char *>(Data) + 1, Size - 1);
  if (Data[0] & 1) {
    Fixture::write(F.Root + "/results/entry.json", F.Auth.sign(Payload));
    ResultsCache Cache(F.Root + "/results", F.Auth);
    (void)Cache.lookup("entry");
  } else {
    Fixture::write(F.Root + "/pch/group.deps", F.Auth.sign(Payload));
    Fixture::write(F.Root + "/pch/group.pch", "not a pch");
    SharedPchCache Cache(F.Root + "/pch", F.Database, F.Options, F.Auth);
    (void)Cache.trusted(F.Root + "/pch/group");
  }
  return 0;
}
