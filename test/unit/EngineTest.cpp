// Unit tests of the device oracle, the use classifier and the API table on
// small ASTs parsed against the mock LibTorch headers. Each case names the
// expression under test by passing it to `probe(...)`.
#include "ApiFacts.h"
#include "DeviceInference.h"
#include "MockParse.h"
#include "TranslationUnitAnalysis.h"
#include "UseClassifier.h"
#include "utils/Directives.h"

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Tooling.h"
#include "gtest/gtest.h"

using namespace clang;
using namespace torch_syncfree;

namespace {

/// One parsed TU and its engine analysis.
class Parsed {
public:
  explicit Parsed(llvm::StringRef Body)
      : AST(parseWithMockTorch("#include <torch/torch.h>\n#include <cstdio>\n"
                               "void probe(const torch::Tensor &);\nvoid probe(float);\n",
                               Body)) {
    if (AST)
      TU = std::make_unique<TranslationUnitAnalysis>(AST->getASTContext());
  }
  bool ok() const { return parsedCleanly(AST); }

  /// The argument of the first call to probe().
  const Expr *probed() {
    std::vector<const Expr *> Probes = probeArguments(AST->getASTContext());
    return Probes.empty() ? nullptr : Probes.front();
  }
  /// The first `item()` call.
  const Expr *firstItem() { return firstCall("item"); }
  /// The first call of a method named \p Name.
  const Expr *firstCall(llvm::StringRef Name) {
    struct Finder : RecursiveASTVisitor<Finder> {
      llvm::StringRef Name;
      const Expr *Found = nullptr;
      bool VisitCXXMemberCallExpr(CXXMemberCallExpr *Call) {
        const CXXMethodDecl *M = Call->getMethodDecl();
        if (!Found && M && M->getDeclName().isIdentifier() && M->getName() == Name)
          Found = Call;
        return true;
      }
    } F;
    F.Name = Name;
    F.TraverseAST(AST->getASTContext());
    return F.Found;
  }

  Placement placementOfProbe() { return TU->oracle().tensorPlacement(probed()); }
  UseVerdict classifyFirstItem() { return TU->classifier(ClassifierOptions{}).classify(firstItem()); }
  std::optional<CountReads> classifyCountReads(const Expr *Selection) {
    return TU->classifier(ClassifierOptions{}).classifyCountReads(Selection);
  }

private:
  std::unique_ptr<ASTUnit> AST;
  std::unique_ptr<TranslationUnitAnalysis> TU;
};

Placement placementOf(llvm::StringRef Body) {
  Parsed P(Body);
  EXPECT_TRUE(P.ok()) << Body.str();
  if (!P.ok() || !P.probed())
    return Placement::Unknown;
  return P.placementOfProbe();
}

UseVerdict verdictOf(llvm::StringRef Body) {
  Parsed P(Body);
  EXPECT_TRUE(P.ok()) << Body.str();
  if (!P.ok() || !P.firstItem())
    return UseVerdict{};
  return P.classifyFirstItem();
}

TEST(DeviceOracle, FactoryWithoutDeviceIsOnTheCpu) {
  EXPECT_EQ(placementOf("void f() { auto x = torch::rand({2}); probe(x); }"), Placement::Cpu);
}

TEST(DeviceOracle, CudaMovesToTheGpu) {
  EXPECT_EQ(placementOf("void f() { auto x = torch::rand({2}).cuda(); probe(x); }"), Placement::Gpu);
}

TEST(DeviceOracle, ToKCudaMovesToTheGpu) {
  EXPECT_EQ(placementOf("void f() { auto x = torch::ones({2}).to(torch::kCUDA); probe(x); }"),
            Placement::Gpu);
}

TEST(DeviceOracle, FactoryOptionsNameTheDevice) {
  EXPECT_EQ(placementOf("void f() { auto x = torch::zeros({2}, "
                        "torch::TensorOptions().device(torch::kCUDA)); probe(x); }"),
            Placement::Gpu);
}

TEST(DeviceOracle, CpuComesBackToTheHost) {
  EXPECT_EQ(placementOf("void f() { auto g = torch::rand({2}).cuda(); auto h = g.cpu(); probe(h); }"),
            Placement::Cpu);
}

TEST(DeviceOracle, OpsKeepTheirInputsDevice) {
  EXPECT_EQ(placementOf("void f() { auto g = torch::rand({2}).cuda(); probe(g * 2 + 1); }"),
            Placement::Gpu);
}

TEST(DeviceOracle, NewAndLikeKeepTheSourcesDeviceUnlessTheOptionsNameOne) {
  // Issue 43: sizes and fill values (parameters here) and dtypes name no device.
  EXPECT_EQ(placementOf("void f(std::vector<int64_t> s, double v) { auto x = torch::rand({2}); "
                        "probe(x.new_full(s, v, torch::TensorOptions(torch::kDouble))); }"),
            Placement::Cpu);
  EXPECT_EQ(placementOf("void f(torch::Dtype d) { auto g = torch::rand({2}).cuda(); "
                        "probe(torch::zeros_like(g, torch::dtype(d))); }"),
            Placement::Gpu);
  EXPECT_EQ(
      placementOf(
          "void f() { auto x = torch::rand({2}); probe(x.new_zeros({2}, torch::device(torch::kCUDA))); }"),
      Placement::Gpu);
  EXPECT_EQ(
      placementOf(
          "void f(torch::TensorOptions o) { auto x = torch::rand({2}); probe(torch::rand_like(x, o)); }"),
      Placement::Unknown);
}

TEST(DeviceOracle, AParameterIsUnknown) {
  EXPECT_EQ(placementOf("void f(torch::Tensor t) { probe(t); }"), Placement::Unknown);
}

TEST(UseClassifier, ALoggedValueIsAFalseDependency) {
  UseVerdict V = verdictOf("void f(torch::Tensor t) { float v = t.item<float>(); "
                           "std::printf(\"%f\\n\", v); }");
  EXPECT_EQ(V.Kind, Dependency::False);
  EXPECT_NE(V.Reason.find("logged"), std::string::npos) << V.Reason;
}

TEST(UseClassifier, ABranchOnTheValueIsATrueDependency) {
  UseVerdict V = verdictOf("int f(torch::Tensor t) { if (t.item<float>() > 0) return 1; return 0; }");
  EXPECT_EQ(V.Kind, Dependency::True);
}

TEST(UseClassifier, AReturnedValueIsATrueDependency) {
  UseVerdict V = verdictOf("float f(torch::Tensor t) { return t.item<float>(); }");
  EXPECT_EQ(V.Kind, Dependency::True);
  EXPECT_NE(V.Reason.find("returned"), std::string::npos) << V.Reason;
}

/// How the host uses the size of the first `masked_select` in \p Body.
std::optional<CountReads> countReadsOf(llvm::StringRef Body) {
  Parsed P(Body);
  EXPECT_TRUE(P.ok()) << Body.str();
  if (!P.ok() || !P.firstCall("masked_select"))
    return std::nullopt;
  return P.classifyCountReads(P.firstCall("masked_select"));
}

TEST(UseClassifier, ASelectionsSizeSummedIntoAMetricIsAFalseDependency) {
  // Issue 43: `hits += x.masked_select(m).numel()` is the rule for `m += t.item()`.
  std::optional<CountReads> Summed =
      countReadsOf("int64_t f(torch::Tensor x, torch::Tensor m) { int64_t hits = 0;\n"
                   "  for (int i = 0; i < 3; ++i) hits += x.masked_select(m).numel();\n"
                   "  return hits; }");
  ASSERT_TRUE(Summed.has_value());
  CountReads Sum = Summed.value_or(CountReads{});
  EXPECT_EQ(Sum.Verdict.Kind, Dependency::False);
  EXPECT_TRUE(Sum.Verdict.Accumulated);
  EXPECT_TRUE(Sum.Numel);
  std::optional<CountReads> Indexed = countReadsOf(
      "void f(torch::Tensor x, torch::Tensor m, std::vector<float> &v) { auto s = x.masked_select(m);\n"
      "  v[s.size(0)] = 1; }");
  ASSERT_TRUE(Indexed.has_value());
  CountReads Index = Indexed.value_or(CountReads{});
  EXPECT_EQ(Index.Verdict.Kind, Dependency::True); // an index
  EXPECT_FALSE(Index.Numel);
  ASSERT_NE(Index.Through, nullptr);
  EXPECT_EQ(Index.Through->getName(), "s");
  // The values are read too, or another dimension: not only the size.
  EXPECT_FALSE(countReadsOf("float f(torch::Tensor x, torch::Tensor m) { auto s = x.masked_select(m);\n"
                            "  return s.numel() + s.sum().item<float>(); }"));
  EXPECT_FALSE(
      countReadsOf("int64_t f(torch::Tensor x, torch::Tensor m) { return x.masked_select(m).size(1); }"));
}

TEST(UseClassifier, TheLoopLineIsKept) {
  UseVerdict V = verdictOf("void f(torch::Tensor t) {\n"
                           "  for (int i = 0; i < 3; ++i) {\n"
                           "    float v = t.item<float>(); std::printf(\"%f\\n\", v);\n"
                           "  }\n"
                           "}");
  EXPECT_EQ(V.Kind, Dependency::False);
  EXPECT_EQ(V.LoopLine, 6u); // 4 prelude lines, then the body's line 2
}

TEST(ApiFacts, TraitsComeFromOneTable) {
  EXPECT_TRUE(hasApiTrait("item", ValueRead));
  EXPECT_TRUE(hasApiTrait("nonzero", DataDependentShape));
  EXPECT_TRUE(hasApiTrait("nonzero", WaitingOp));
  EXPECT_TRUE(hasApiTrait("nonzero", IntegerResult));
  EXPECT_TRUE(hasApiTrait("zeros", Factory));
  EXPECT_TRUE(hasApiTrait("zeros", DeterministicFill));
  EXPECT_FALSE(hasApiTrait("rand", DeterministicFill));
  EXPECT_TRUE(hasApiTrait("synchronize", Barrier));
  EXPECT_TRUE(hasApiTrait("narrow", View));
  EXPECT_EQ(apiTraits("no_such_op"), 0u);
  EXPECT_TRUE(isInPlaceName("add_"));
  EXPECT_FALSE(isInPlaceName("_"));
  EXPECT_TRUE(mayWriteTensorMemory("data_ptr"));
  for (llvm::StringRef Name : namesWithTrait(DataDependentShape))
    EXPECT_TRUE(hasApiTrait(Name, WaitingOp)) << Name.str();
  EXPECT_TRUE(hasApiTrait("allclose", HostBool));
  EXPECT_FALSE(hasApiTrait("item", HostBool));
  EXPECT_TRUE(hasApiTrait("device_synchronize", Synchronize));
  EXPECT_FALSE(hasApiTrait("clip_grad_norm_", Synchronize)); // a barrier, not a synchronize call
  EXPECT_TRUE(hasApiTrait("chunk", SplitsIntoViews));
  EXPECT_TRUE(hasApiTrait("TORCH_CHECK_WITH", ErrorTypeFirst));
  EXPECT_FALSE(hasApiTrait("TORCH_CHECK", ErrorTypeFirst));
  EXPECT_TRUE(hasApiTrait("TORCH_WARN", WarningMacro));
  EXPECT_TRUE(llvm::is_contained(qualifiedNamesWithTrait(Synchronize),
                                 llvm::StringRef("::c10::cuda::CUDAStream::synchronize")));
  for (llvm::StringRef Name : namesWithTrait(Synchronize))
    EXPECT_TRUE(hasApiTrait(Name, Barrier)) << Name.str();
  // The host table: names that are not LibTorch's, with traits of their own.
  EXPECT_TRUE(hasHostApiTrait("cudaDeviceSynchronize", RuntimeWait));
  EXPECT_EQ(apiTraits("cudaDeviceSynchronize"), 0u);
  EXPECT_FALSE(hasHostApiTrait("cudaMemcpyAsync", RuntimeWait));
  EXPECT_TRUE(hasHostApiTrait("cudaMemcpyAsync", RuntimeStreamOrdered));
  EXPECT_TRUE(hasHostApiTrait("printf", LoggingFunction));
  EXPECT_TRUE(hasHostApiTrait("putchar", StdioOutput));
  EXPECT_FALSE(hasHostApiTrait("putchar", LoggingFunction));
  EXPECT_TRUE(hasHostApiTrait("log", ValueTransforming));
  EXPECT_TRUE(hasHostApiTrait("log", SinkWord));
  EXPECT_TRUE(hasHostApiTrait("list", HostContainer));
  EXPECT_TRUE(hasApiTrait("parameters", ModuleTensors));
  EXPECT_TRUE(hasApiTrait("new_zeros", SourceDevice));
  EXPECT_TRUE(hasApiTrait("rand_like", SourceDevice));
  EXPECT_FALSE(hasApiTrait("zeros", SourceDevice)); // a factory: the CPU unless its options say
  EXPECT_TRUE(hasApiTrait("numel", ShapeRead));
  EXPECT_TRUE(hasApiTrait("eval", ModuleKeepsDevice));
  EXPECT_FALSE(hasApiTrait("to", ModuleKeepsDevice));
  EXPECT_TRUE(hasHostApiTrait("tie", TupleMaker));
  EXPECT_TRUE(hasHostApiTrait("pop_back", ContainerRemove));
  EXPECT_FALSE(hasHostApiTrait("swap", ContainerRemove));
  EXPECT_FALSE(hasHostApiTrait("list", IndexedSequence));
  EXPECT_TRUE(hasHostApiTrait("SPDLOG_INFO", LoggingMacro));
  EXPECT_FALSE(hasHostApiTrait("TORCH_WARN", LoggingMacro)); // LibTorch's: WarningMacro
  EXPECT_EQ(hostApiTraits("item"), 0u);
  EXPECT_TRUE(llvm::is_contained(qualifiedHostNamesWithTrait(RuntimeWait), llvm::StringRef("::cudaMemcpy")));
  EXPECT_EQ(qualifiedHostNamesWithTrait(RuntimeWait).size(), hostNamesWithTrait(RuntimeWait).size());
}

TEST(Directives, TheScannerSeesWhatThePreprocessorSees) {
  llvm::StringRef Text = "// #include <commented.h>\n"
                         "/* #include \"in_block.h\"\n */\n"
                         "#include <torch/torch.h>\n"
                         "  #  include \"local/util.h\" // note\n"
                         "#if defined(X) \\\n  && defined(Y)\n"
                         "#import <objc.h>\n"
                         "#endif\n"
                         "const char *s = \"#include <string.h>\";\n";
  std::vector<SourceDirective> Found = scanDirectives(Text);
  ASSERT_EQ(Found.size(), 5u);
  EXPECT_EQ(Found[0].Kind, SourceDirective::Include);
  EXPECT_EQ(Found[0].Header, "torch/torch.h");
  EXPECT_TRUE(Found[0].Angled);
  EXPECT_EQ(Text.substr(Found[0].NextLine).take_front(3), "  #");
  EXPECT_EQ(Found[1].Header, "local/util.h");
  EXPECT_FALSE(Found[1].Angled);
  EXPECT_EQ(Found[2].Kind, SourceDirective::Conditional);
  // A continued line is one directive: the next line starts after it.
  EXPECT_EQ(Text.substr(Found[2].NextLine).take_front(7), "#import");
  EXPECT_EQ(Found[3].Header, "objc.h");
  EXPECT_EQ(Found[4].Kind, SourceDirective::EndConditional);
}

} // namespace
