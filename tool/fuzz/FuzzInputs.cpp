// libFuzzer target for the readers of files a repository hands the tool
// (issue 38): .clang-tidy files (clang-tidy's FileOptionsProvider through the
// bounded configuration file system), .clang-format files and inline styles
// (clang-format's getStyle, as --format-style does), response files (the
// compile-command sanitizer), and sync profiles with the modules they name
// (loadProfile: the profile's JSON, and a module's bytes symbolized under crash
// recovery). The first byte picks the reader; for a profile with a module the
// payload is "<offset as 8 bytes><module bytes>". Run by test/tool/fuzz.test in
// the sanitizer build.
#include "CompileCommandSanitizer.h"
#include "FuzzFiles.h"
#include "InputFiles.h"
#include "ProfileJoin.h"

#include "clang-tidy/ClangTidyOptions.h"
#include "clang/Format/Format.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include <cstring>
#include <string>

using namespace torch_syncfree;

namespace {

struct Fixture {
  std::string Root;
  Fixture() {
    Root = fuzzScratchDirectory("torch-syncfree-fuzz-inputs");
    for (const char *Sub : {"/tidy", "/format"})
      llvm::sys::fs::create_directories(Root + Sub);
    // What the tool does in main(): a crash in LLVM's readers of a module is
    // recovered (ProfileJoin.cpp), not the process's end.
    llvm::CrashRecoveryContext::Enable();
  }
  static void write(const std::string &Path, llvm::StringRef Bytes) { writeFuzzFile(Path, Bytes); }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static Fixture F;
  if (Size < 1 || Size > 256 * 1024)
    return 0;
  llvm::StringRef Payload(reinterpret_cast<const char *>(Data) + 1, Size - 1);
  switch (Data[0] % 5) {
  case 0: { // .clang-tidy
    Fixture::write(F.Root + "/tidy/.clang-tidy", Payload);
    clang::tidy::FileOptionsProvider Provider(
        clang::tidy::ClangTidyGlobalOptions(), clang::tidy::ClangTidyOptions::getDefaults(),
        clang::tidy::ClangTidyOptions(), makeConfigFileSystem(llvm::vfs::getRealFileSystem()));
    (void)Provider.getOptions(F.Root + "/tidy/x.cpp");
    break;
  }
  case 1: { // .clang-format, and the same text as an inline style
    Fixture::write(F.Root + "/format/.clang-format", Payload);
    auto FS = makeConfigFileSystem(llvm::vfs::getRealFileSystem());
    auto Style = clang::format::getStyle("file", F.Root + "/format/x.cpp", "none", "", FS.get());
    if (!Style)
      llvm::consumeError(Style.takeError());
    std::string Inline = ("{" + Payload + "}").str();
    if (checkYamlNesting(Inline).empty()) {
      auto FromText = clang::format::getStyle(Inline, F.Root + "/format/x.cpp", "none", "", FS.get());
      if (!FromText)
        llvm::consumeError(FromText.takeError());
    }
    break;
  }
  case 2: { // a response file of a compile command
    Fixture::write(F.Root + "/args.rsp", Payload);
    SanitizerReport Report;
    (void)sanitizeCommandLine({"clang++", "@" + F.Root + "/args.rsp", "-c", "x.cpp"}, F.Root, Report);
    break;
  }
  case 3: { // a profile's JSON
    Fixture::write(F.Root + "/profile.json", Payload);
    std::string Error;
    (void)loadProfile(F.Root + "/profile.json", Error);
    break;
  }
  case 4: { // a module named by a profile: its bytes, at an offset
    if (Payload.size() < 8)
      return 0;
    uint64_t Offset = 0;
    std::memcpy(&Offset, Payload.data(), 8);
    Fixture::write(F.Root + "/module.so", Payload.drop_front(8));
    std::string Profile =
        "{\"format\": \"torch-syncfree-profile\", \"version\": 1, \"steps\": 1, \"step_ms\": 1, "
        "\"syncs\": [{\"kind\": \"k\", \"count\": 1, \"frames\": [{\"module\": \"" + F.Root +
        "/module.so\", \"offset\": " + std::to_string(Offset % (uint64_t(1) << 32)) + "}]}]}";
    Fixture::write(F.Root + "/module-profile.json", Profile);
    std::string Error;
    (void)loadProfile(F.Root + "/module-profile.json", Error);
    break;
  }
  }
  return 0;
}
