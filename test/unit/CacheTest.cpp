// Unit tests of the cache readers behind the MAC (issue 23): an entry signed with
// the user's key is still checked before any finding is believed. A repository
// cannot sign, but a key can leak, and the checks are the second line of defence;
// without these tests removing one would fail nothing (the lit tests' forgeries
// are unsigned and rejected before the checks run).
#include "CacheAuth.h"
#include "FindingJson.h"
#include "ResultsCache.h"
#include "SafeFileSystem.h"
#include "SharedPch.h"
#include "TextEncoding.h"

#include "clang-tidy/ClangTidyOptions.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <string>

using namespace torch_syncfree;
namespace json = llvm::json;

namespace {

class CacheReaders : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> Dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("torch-syncfree-cache-test", Dir));
    Root = std::string(Dir);
    llvm::sys::fs::create_directories(Root + "/results");
    llvm::sys::fs::create_directories(Root + "/pch");
    Input = Root + "/train.cpp";
    write(Input, InputText);
    Outside = Root + "/outside.cpp";
    write(Outside, "int secret = 42;\n");
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Root); }

  static void write(const std::string &Path, llvm::StringRef Bytes) {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Path, EC);
    ASSERT_FALSE(EC);
    OS << Bytes;
  }
  /// A finding of torch-sync-item at Offset of File, with an optional fix in FixFile.
  static FindingRecord finding(const std::string &File, unsigned Offset,
                               const std::string &FixFile = "") {
    clang::tidy::ClangTidyError Error("torch-sync-item", clang::tooling::Diagnostic::Warning,
                                      "/", false);
    Error.Message.Message = "item() waits for the GPU";
    Error.Message.FilePath = File;
    Error.Message.FileOffset = Offset;
    if (!FixFile.empty()) {
      clang::tooling::Replacement R(FixFile, 0, 3, "int");
      llvm::consumeError(Error.Message.Fix[FixFile].add(R));
    }
    return FindingRecord(std::move(Error), FindingFacts{}); // a check's finding carries facts
  }
  static json::Value input(const std::string &File, llvm::StringRef Bytes) {
    return json::Object{{"file", File}, {"hash", hex64(ReadContents::hash(Bytes))}};
  }
  /// Writes entry Key, signed with Key, and looks it up in a fresh cache.
  std::optional<std::vector<FindingRecord>> lookup(json::Array Inputs,
                                                   std::vector<FindingRecord> Findings,
                                                   const CacheAuthenticator &SignedWith,
                                                   unsigned *Untrusted = nullptr,
                                                   json::Array Absent = {}) {
    std::string Entry;
    llvm::raw_string_ostream(Entry) << json::Value(
        json::Object{{"inputs", std::move(Inputs)},
                     {"absent", std::move(Absent)},
                     {"findings", findingsToJson(Findings)}});
    write(Root + "/results/entry.json", SignedWith.sign(Entry));
    ResultsCache Cache(Root + "/results", Auth);
    auto Result = Cache.lookup("entry");
    if (Untrusted)
      *Untrusted = Cache.untrusted();
    return Result;
  }

  std::string Root, Input, Outside;
  static constexpr llvm::StringLiteral InputText = "float f(at::Tensor t) { return t.item<float>(); }\n";
  CacheAuthenticator Auth{llvm::StringRef("0123456789abcdef0123456789abcdef", 32)};
  CacheAuthenticator OtherUser{llvm::StringRef("fedcba9876543210fedcba9876543210", 32)};
};

TEST_F(CacheReaders, AcceptsAnEntryOfItsOwnInputs) {
  unsigned Untrusted = 0;
  auto Found = lookup(json::Array{input(Input, InputText)}, {finding(Input, 31, Input)}, Auth, &Untrusted);
  ASSERT_TRUE(Found.has_value());
  ASSERT_EQ(Found->size(), 1u);
  EXPECT_EQ((*Found)[0].Message.FilePath, Input);
  EXPECT_EQ(Untrusted, 0u);
}

TEST_F(CacheReaders, MissesOnceAHeaderSearchMissFindsAFile) {
  // Issue 38, hole 5: a header added earlier on the search path shadows the
  // one the entry was computed with; no file it read changed.
  std::string Shadow = Root + "/include-first/helper.h";
  auto Absent = [&] { return json::Array{Shadow}; };
  EXPECT_TRUE(lookup(json::Array{input(Input, InputText)}, {finding(Input, 31)}, Auth, nullptr, Absent()));
  llvm::sys::fs::create_directories(Root + "/include-first");
  write(Shadow, "#pragma once\n");
  EXPECT_FALSE(lookup(json::Array{input(Input, InputText)}, {finding(Input, 31)}, Auth, nullptr, Absent()));
}

TEST_F(CacheReaders, RejectsAnEntrySignedWithAnotherKey) {
  unsigned Untrusted = 0;
  EXPECT_FALSE(lookup(json::Array{input(Input, InputText)}, {finding(Input, 31)}, OtherUser, &Untrusted));
  EXPECT_EQ(Untrusted, 1u);
}

TEST_F(CacheReaders, RejectsAnEntryWithoutInputs) {
  // `"inputs": []` made every forged entry valid for any unit: 0 findings.
  unsigned Untrusted = 0;
  EXPECT_FALSE(lookup(json::Array{}, {}, Auth, &Untrusted));
  EXPECT_EQ(Untrusted, 1u);
}

TEST_F(CacheReaders, RejectsAFindingInAFileTheEntryDoesNotName) {
  // Its text output would print lines of any readable file.
  unsigned Untrusted = 0;
  EXPECT_FALSE(lookup(json::Array{input(Input, InputText)}, {finding(Outside, 4)}, Auth, &Untrusted));
  EXPECT_EQ(Untrusted, 1u);
}

TEST_F(CacheReaders, RejectsAFixOfAFileTheEntryDoesNotName) {
  // --fix would rewrite a file outside the repository.
  unsigned Untrusted = 0;
  EXPECT_FALSE(lookup(json::Array{input(Input, InputText)}, {finding(Input, 31, Outside)}, Auth,
                      &Untrusted));
  EXPECT_EQ(Untrusted, 1u);
}

TEST_F(CacheReaders, ResolvesRelativeNamesBeforeComparing) {
  // "../" cannot smuggle a file outside the inputs past the comparison.
  std::string Sneaky = Root + "/results/../outside.cpp";
  EXPECT_FALSE(lookup(json::Array{input(Input, InputText)}, {finding(Sneaky, 4)}, Auth));
}

TEST_F(CacheReaders, DoesNotReadDevices) {
  // An input at /dev/zero was read until memory ran out: a miss, at once.
  EXPECT_FALSE(lookup(json::Array{input("/dev/zero", "")}, {finding("/dev/zero", 0)}, Auth));
}

TEST_F(CacheReaders, MissesWhenAnInputChanged) {
  json::Array Inputs{input(Input, InputText)};
  write(Input, "int changed;\n");
  unsigned Untrusted = 0;
  EXPECT_FALSE(lookup(std::move(Inputs), {finding(Input, 31)}, Auth, &Untrusted));
  EXPECT_EQ(Untrusted, 0u); // a miss, not an attack
}

TEST_F(CacheReaders, TrustsOnlyAPchWhoseDigestAndHeadersMatch) {
  clang::tooling::FixedCompilationDatabase Database{"/tmp", std::vector<std::string>{}};
  clang::tidy::DefaultOptionsProvider Options{clang::tidy::ClangTidyGlobalOptions(),
                                              clang::tidy::ClangTidyOptions::getDefaults()};
  std::string Base = Root + "/pch/group";
  write(Base + ".pch", "the PCH's bytes");
  llvm::sys::fs::file_status Status;
  ASSERT_FALSE(llvm::sys::fs::status(Input, Status));
  auto Manifest = [&](const std::string &Digest) {
    return "torch-syncfree shared PCH v3\npch " + Digest + "\n" + std::to_string(Status.getSize()) +
           " " + std::to_string(Status.getLastModificationTime().time_since_epoch().count()) + " " +
           Input + "\n";
  };
  std::string Digest = fileDigest(Base + ".pch");
  ASSERT_FALSE(Digest.empty());
  {
    write(Base + ".deps", Auth.sign(Manifest(Digest)));
    SharedPchCache Cache(Root + "/pch", Database, Options, Auth);
    EXPECT_TRUE(Cache.trusted(Base));
  }
  {
    write(Base + ".deps", OtherUser.sign(Manifest(Digest)));
    SharedPchCache Cache(Root + "/pch", Database, Options, Auth);
    EXPECT_FALSE(Cache.trusted(Base));
    EXPECT_EQ(Cache.stats().Untrusted, 1u);
  }
  {
    // A damaged PCH (clang crashed on one): its digest no longer matches.
    write(Base + ".deps", Auth.sign(Manifest(Digest)));
    write(Base + ".pch", "the PCH's bytes, damaged");
    SharedPchCache Cache(Root + "/pch", Database, Options, Auth);
    EXPECT_FALSE(Cache.trusted(Base));
    EXPECT_EQ(Cache.stats().Untrusted, 1u);
  }
  {
    // A header changed since: a miss.
    write(Base + ".pch", "the PCH's bytes");
    write(Base + ".deps", Auth.sign(Manifest(Digest)));
    write(Input, "a different header, of another size\n");
    SharedPchCache Cache(Root + "/pch", Database, Options, Auth);
    EXPECT_FALSE(Cache.trusted(Base));
    EXPECT_EQ(Cache.stats().Untrusted, 0u);
  }
}

} // namespace
