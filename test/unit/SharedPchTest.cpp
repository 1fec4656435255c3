// Unit tests of the shared-PCH planner's reader of a main file's leading
// #include block (tool/SharedPch.h): what may come before and between the
// includes, where the block ends, and how a project header's own block
// continues it.
#include "SharedPch.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace torch_syncfree;

namespace {

std::optional<std::string> block(llvm::StringRef Text, llvm::StringRef Dir = "") {
  return leadingIncludeBlock(Text, Dir, {});
}

TEST(LeadingIncludeBlock, IncludesAfterCommentsUntilTheFirstCode) {
  EXPECT_EQ(block("// A training loop.\n/* two\n   lines */\n\n#include <torch/torch.h>\n"
                  "#include <vector> // containers\n  #  include <map>\nint main() {}\n#include <set>\n"),
            "#include <torch/torch.h>\n#include <vector>\n#include <map>\n");
}

TEST(LeadingIncludeBlock, NothingToShare) {
  EXPECT_EQ(block("int x;\n#include <torch/torch.h>\n"), std::nullopt);
  EXPECT_EQ(block("#define NDEBUG\n#include <torch/torch.h>\n"), std::nullopt); // a definition first
  EXPECT_EQ(block(""), std::nullopt);
  EXPECT_EQ(block("#if USE_TORCH\n#include <torch/torch.h>\n#endif\n"), std::nullopt); // conditional
  EXPECT_EQ(block("#pragma warning\n#include <torch/torch.h>\n"), std::nullopt);
}

TEST(LeadingIncludeBlock, WindowsLineEnds) {
  EXPECT_EQ(block("#include <torch/torch.h>\r\n#include <vector>\r\nint x;\r\n"),
            "#include <torch/torch.h>\n#include <vector>\n");
}

TEST(LeadingIncludeBlock, CodeOnAnIncludesLineEndsTheBlockBeforeIt) {
  EXPECT_EQ(block("#include <torch/torch.h>\n#include <vector> int x;\n"), "#include <torch/torch.h>\n");
  EXPECT_EQ(block("#include <torch/torch.h>\n#include MACRO_HEADER\n#include <map>\n"),
            "#include <torch/torch.h>\n");
}

class WithHeader : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("shared-pch-test", Dir)); }
  void TearDown() override { EXPECT_FALSE(llvm::sys::fs::remove_directories(Dir)); }
  void write(llvm::StringRef Name, llvm::StringRef Text) {
    llvm::SmallString<256> Path(Dir);
    llvm::sys::path::append(Path, Name);
    std::error_code EC;
    llvm::raw_fd_ostream Out(Path, EC);
    ASSERT_FALSE(EC);
    Out << Text;
  }
  llvm::SmallString<256> Dir;
};

TEST_F(WithHeader, AProjectHeadersLeadingBlockContinuesTheBlockThenItEnds) {
  write("model.h", "#pragma once\n#include <torch/torch.h>\n#include <vector>\nstruct Model {};\n");
  EXPECT_EQ(block("#include <map>\n#include \"model.h\"\n#include <set>\n", Dir),
            "#include <map>\n#include <torch/torch.h>\n#include <vector>\n");
}

TEST_F(WithHeader, AnIncludeGuardMayComeFirst) {
  write("guarded.h", "// guarded\n#ifndef GUARDED_H\n#define GUARDED_H\n#include <torch/torch.h>\n#endif\n");
  EXPECT_EQ(block("#include \"guarded.h\"\n", Dir), "#include <torch/torch.h>\n");
  // Any other definition first is not a guard: nothing from that header.
  write("other.h", "#ifndef OTHER_H\n#define OTHER_H 1\n#include <torch/torch.h>\n#endif\n");
  EXPECT_EQ(block("#include <map>\n#include \"other.h\"\n", Dir), "#include <map>\n");
}

TEST_F(WithHeader, AQuotedIncludeThatIsNotFoundEndsTheBlock) {
  EXPECT_EQ(block("#include <map>\n#include \"missing.h\"\n#include <set>\n", Dir), "#include <map>\n");
}

} // namespace
