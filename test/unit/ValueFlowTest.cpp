// Unit tests of the value-flow core (matchers/analysis/ValueFlow.h) and of the
// facts answered from it (device, pinning, element kind) on small ASTs parsed
// against the mock LibTorch headers. Reads under test are the arguments of
// `probe(...)` calls, in source order.
#include "analysis/ValueFlow.h"
#include "DeviceInference.h"
#include "MockParse.h"
#include "PinnedMemory.h"
#include "TensorFacts.h"
#include "TranslationUnitAnalysis.h"
#include "analysis/Containers.h"

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Tooling.h"
#include "gtest/gtest.h"

using namespace clang;
using namespace torch_syncfree;

namespace {

class Parsed {
public:
  explicit Parsed(llvm::StringRef Body)
      : AST(parseWithMockTorch("#include <torch/torch.h>\n#include <tuple>\n#include <vector>\n"
                               "void probe(const torch::Tensor &);\nvoid mayAssign(torch::Tensor &);\n"
                               "void onlyReads(const torch::Tensor &);\n",
                               Body)) {
    if (AST) {
      TU = std::make_unique<TranslationUnitAnalysis>(AST->getASTContext());
      Probes = probeArguments(AST->getASTContext());
    }
  }
  bool ok() const { return parsedCleanly(AST); }
  TranslationUnitAnalysis &tu() { return *TU; }

  /// Probe I's argument, a variable read.
  const DeclRefExpr *read(unsigned I) const {
    return I < Probes.size() ? dyn_cast<DeclRefExpr>(Probes[I]) : nullptr;
  }
  const FunctionValueFlow *flowOf(const DeclRefExpr *Read) {
    const FunctionDecl *FD = nullptr;
    for (const DeclContext *DC = Read->getDecl()->getDeclContext(); DC && !FD; DC = DC->getParent())
      FD = dyn_cast<FunctionDecl>(DC);
    return TU->valueFlow(FD);
  }
  /// The initialiser or right-hand side text (first line of the source) of
  /// each definition reaching probe I.
  std::optional<ReachingDefinitions> reaching(unsigned I) {
    const DeclRefExpr *Read = this->read(I);
    if (!Read || !flowOf(Read))
      return std::nullopt;
    return flowOf(Read)->reachingAt(Read->getDecl(), Read);
  }
  /// Whether a path from the function's entry reaches probe I undefined.
  bool fromEntry(unsigned I) {
    std::optional<ReachingDefinitions> At = reaching(I);
    return At && At->FromEntry;
  }
  /// The definitions reaching probe I (none when the core cannot answer).
  std::vector<ValueDefinition> reachingDefinitions(unsigned I) {
    std::vector<ValueDefinition> Found;
    if (std::optional<ReachingDefinitions> At = reaching(I))
      for (unsigned Index : At->Definitions)
        Found.push_back(flowOf(read(I))->definitions()[Index]);
    return Found;
  }
  /// The source line of each definition reaching probe I.
  std::vector<unsigned> reachingLines(unsigned I) {
    std::vector<unsigned> Lines;
    std::optional<ReachingDefinitions> At = reaching(I);
    if (!At)
      return Lines;
    const SourceManager &SM = AST->getSourceManager();
    for (unsigned Index : At->Definitions)
      Lines.push_back(SM.getPresumedLineNumber(flowOf(read(I))->definitions()[Index].Site->getBeginLoc()) -
                      Prelude);
    llvm::sort(Lines);
    return Lines;
  }
  Placement placement(unsigned I) { return TU->oracle().tensorPlacement(Probes[I]); }
  Pinning pinning(unsigned I) { return hostPinning(*TU, Probes[I]); }
  ElementKind kind(unsigned I) { return elementKind(*TU, Probes[I]); }

  static constexpr unsigned Prelude = 6; // lines before the body

private:
  std::unique_ptr<ASTUnit> AST;
  std::unique_ptr<TranslationUnitAnalysis> TU;
  std::vector<const Expr *> Probes;
};

using Lines = std::vector<unsigned>;

TEST(ValueFlow, AStraightLineReassignmentKillsTheFirstDefinition) {
  Parsed P("void f() {\n"
           "  auto t = torch::ones({2});\n"
           "  probe(t);\n"
           "  t = torch::ones({2}).cuda();\n"
           "  probe(t);\n"
           "}");
  ASSERT_TRUE(P.ok());
  EXPECT_EQ(P.reachingLines(0), Lines({2}));
  EXPECT_EQ(P.reachingLines(1), Lines({4}));
  EXPECT_FALSE(P.fromEntry(1));
  EXPECT_EQ(P.placement(0), Placement::Cpu);
  EXPECT_EQ(P.placement(1), Placement::Gpu);
}

TEST(ValueFlow, ALoopCarriedRedefinitionReachesTheLoopHead) {
  Parsed P("void f(int n) {\n"
           "  auto t = torch::ones({2});\n"
           "  for (int i = 0; i < n; ++i) {\n"
           "    probe(t);\n"
           "    t = t.cuda();\n"
           "  }\n"
           "  probe(t);\n"
           "}");
  ASSERT_TRUE(P.ok());
  EXPECT_EQ(P.reachingLines(0), Lines({2, 5}));
  EXPECT_EQ(P.reachingLines(1), Lines({2, 5}));
  EXPECT_EQ(P.placement(0), Placement::Unknown); // CPU in the first iteration, GPU after
  EXPECT_EQ(P.placement(1), Placement::Unknown);
}

TEST(ValueFlow, ASelfDependentLoopDefinitionIsIteratedToItsFixpoint) {
  // t = t * 2 reads its own previous value: the first round sees only the
  // initialiser, the next confirms it.
  Parsed P("void f(int n) {\n"
           "  auto t = torch::ones({2}).cuda();\n"
           "  for (int i = 0; i < n; ++i)\n"
           "    t = t * 2;\n"
           "  probe(t);\n"
           "}");
  ASSERT_TRUE(P.ok());
  EXPECT_EQ(P.reachingLines(0), Lines({2, 4}));
  EXPECT_EQ(P.placement(0), Placement::Gpu);
}

TEST(ValueFlow, AVariableReadAgainWhileItsValueIsEvaluatedSeesItsEarlierDefinition) {
  // Evaluating x = y evaluates y = x + 1, which reads x's first definition: a
  // cut per variable (the engine before the core) answered "unknown" here.
  Parsed P("void f() {\n"
           "  torch::Tensor x = torch::ones({2});\n"
           "  torch::Tensor y = x + 1;\n"
           "  x = y;\n"
           "  probe(x);\n"
           "}");
  ASSERT_TRUE(P.ok());
  EXPECT_EQ(P.placement(0), Placement::Cpu);
}

TEST(ValueFlow, ValuesSwappedInALoopJoinBothSides) {
  const char *Body = "void f(int n) {\n"
                     "  torch::Tensor x = torch::ones({2})%s;\n"
                     "  torch::Tensor y = torch::ones({2});\n"
                     "  for (int i = 0; i < n; ++i) {\n"
                     "    torch::Tensor t = x;\n"
                     "    x = y * 2;\n"
                     "    y = t;\n"
                     "  }\n"
                     "  probe(x);\n"
                     "}";
  char Text[512];
  snprintf(Text, sizeof Text, Body, "");
  Parsed OnHost(Text);
  ASSERT_TRUE(OnHost.ok());
  EXPECT_EQ(OnHost.placement(0), Placement::Cpu);
  snprintf(Text, sizeof Text, Body, ".cuda()");
  Parsed Mixed(Text);
  ASSERT_TRUE(Mixed.ok());
  EXPECT_EQ(Mixed.placement(0), Placement::Unknown);
}

TEST(ValueFlow, BranchesJoin) {
  Parsed P("void f(bool c) {\n"
           "  torch::Tensor t;\n"
           "  if (c)\n"
           "    t = torch::ones({2}).cuda();\n"
           "  else\n"
           "    t = torch::zeros({2}).cuda();\n"
           "  probe(t);\n"
           "}");
  ASSERT_TRUE(P.ok());
  EXPECT_EQ(P.reachingLines(0), Lines({4, 6}));
  EXPECT_EQ(P.placement(0), Placement::Gpu);
}

TEST(ValueFlow, ANonConstReferenceArgumentIsAnEscapingDefinition) {
  Parsed P("void f() {\n"
           "  auto t = torch::ones({2}).cuda();\n"
           "  onlyReads(t);\n"
           "  probe(t);\n"
           "  mayAssign(t);\n"
           "  probe(t);\n"
           "}");
  ASSERT_TRUE(P.ok());
  EXPECT_EQ(P.reachingLines(0), Lines({2}));
  EXPECT_EQ(P.reachingLines(1), Lines({5}));
  std::vector<ValueDefinition> After = P.reachingDefinitions(1);
  ASSERT_EQ(After.size(), 1u);
  EXPECT_EQ(After[0].How, ValueDefinition::Kind::Escaped);
  EXPECT_EQ(P.placement(0), Placement::Gpu);
  EXPECT_EQ(P.placement(1), Placement::Unknown);
}

TEST(ValueFlow, AMutableReferenceOrAnAddressAliasesTheVariable) {
  Parsed P("void f() {\n"
           "  auto t = torch::ones({2});\n"
           "  torch::Tensor &alias = t;\n"
           "  alias = torch::ones({2}).cuda();\n"
           "  probe(t);\n"
           "  auto u = torch::ones({2});\n"
           "  torch::Tensor *pointer = &u;\n"
           "  probe(u);\n"
           "  auto v = torch::ones({2});\n"
           "  const torch::Tensor &view = v;\n"
           "  probe(v);\n"
           "  probe(view);\n"
           "  auto a = torch::ones({2}), b = torch::ones({2});\n"
           "  auto later = std::tie(a, b);\n"
           "  later = std::make_tuple(torch::ones({2}).cuda(), torch::ones({2}).cuda());\n"
           "  probe(a);\n"
           "  torch::Tensor c, d;\n"
           "  std::tie(c, d) = std::make_tuple(torch::ones({2}), torch::ones({2}).cuda());\n"
           "  probe(c);\n"
           "}");
  ASSERT_TRUE(P.ok());
  // Writes through the alias are not t's definitions: the alias's definition
  // reaches every read with the declaration's.
  EXPECT_EQ(P.reachingLines(0), Lines({2, 3}));
  std::vector<ValueDefinition> T = P.reachingDefinitions(0);
  ASSERT_EQ(T.size(), 2u);
  EXPECT_EQ(T[1].How, ValueDefinition::Kind::Aliased);
  EXPECT_EQ(P.placement(0), Placement::Unknown); // was Cpu: the sync at probe(t) was missed
  EXPECT_EQ(P.reachingLines(1), Lines({6, 7}));
  EXPECT_EQ(P.placement(1), Placement::Unknown);
  // A const reference cannot write: v and its view stay on the CPU.
  EXPECT_EQ(P.reachingLines(2), Lines({9}));
  EXPECT_EQ(P.placement(2), Placement::Cpu);
  EXPECT_EQ(P.placement(3), Placement::Cpu);
  // A tie kept for later aliases its arguments; `std::tie(c, d) = rhs` defines them.
  EXPECT_EQ(P.reachingLines(4), Lines({13, 14}));
  EXPECT_EQ(P.placement(4), Placement::Unknown);
  EXPECT_EQ(P.reachingLines(5), Lines({18}));
  EXPECT_EQ(P.placement(5), Placement::Cpu);
}

TEST(ValueFlow, ALambdaAssigningAByReferenceCaptureAliasesIt) {
  Parsed P("void f() {\n"
           "  auto t = torch::ones({2});\n"
           "  auto move = [&] { t = t.cuda(); };\n"
           "  move();\n"
           "  probe(t);\n"
           "  auto u = torch::ones({2});\n"
           "  auto show = [&] { onlyReads(u); };\n"
           "  show();\n"
           "  probe(u);\n"
           "}");
  ASSERT_TRUE(P.ok());
  EXPECT_EQ(P.reachingLines(0), Lines({2, 3}));
  EXPECT_EQ(P.placement(0), Placement::Unknown);
  // A lambda that only reads its capture defines nothing.
  EXPECT_EQ(P.reachingLines(1), Lines({6}));
  EXPECT_EQ(P.placement(1), Placement::Cpu);
}

TEST(ValueFlow, StructuredBindingsAndTieDefineElements) {
  Parsed P("std::tuple<torch::Tensor, torch::Tensor> pair();\n"
           "void f() {\n"
           "  auto [a, b] = std::make_tuple(torch::ones({2}), torch::ones({2}).cuda());\n"
           "  probe(b);\n"
           "  torch::Tensor c, d;\n"
           "  std::tie(c, d) = std::make_tuple(torch::ones({2}).cuda(), torch::ones({2}));\n"
           "  probe(d);\n"
           "}");
  ASSERT_TRUE(P.ok());
  std::vector<ValueDefinition> B = P.reachingDefinitions(0), D = P.reachingDefinitions(1);
  ASSERT_EQ(B.size(), 1u);
  ASSERT_EQ(D.size(), 1u);
  EXPECT_EQ(B[0].Element, std::optional<unsigned>(1));
  EXPECT_EQ(D[0].Element, std::optional<unsigned>(1));
  EXPECT_EQ(P.placement(0), Placement::Gpu);
  EXPECT_EQ(P.placement(1), Placement::Cpu);
}

TEST(ValueFlow, AReadInsideALambdaIsNotAnsweredByTheCfg) {
  Parsed P("void f() {\n"
           "  auto t = torch::ones({2});\n"
           "  auto later = [&] { probe(t); };\n"
           "  t = torch::ones({2}).cuda();\n"
           "  later();\n"
           "}");
  ASSERT_TRUE(P.ok());
  EXPECT_FALSE(P.reaching(0).has_value());
  // The oracle falls back to every definition of t in the function.
  EXPECT_EQ(P.placement(0), Placement::Unknown);
}

TEST(ValueFlow, AParameterReachesFromTheEntry) {
  Parsed P("void f(torch::Tensor t, bool c) {\n"
           "  if (c)\n"
           "    t = torch::ones({2});\n"
           "  probe(t);\n"
           "}");
  ASSERT_TRUE(P.ok());
  EXPECT_TRUE(P.fromEntry(0));
  EXPECT_EQ(P.reachingLines(0), Lines({3}));
}

TEST(ValueFlow, ValueIdentityAndLoopInvariance) {
  Parsed P("void f(int n) {\n"
           "  auto w = torch::ones({2}).cuda();\n"
           "  auto t = torch::ones({2}).cuda();\n"
           "  for (int i = 0; i < n; ++i) {\n"
           "    probe(w);\n"
           "    probe(t);\n"
           "    probe(w);\n"
           "    t = t * 2;\n"
           "  }\n"
           "}");
  ASSERT_TRUE(P.ok());
  const FunctionValueFlow *Flow = P.flowOf(P.read(0));
  ASSERT_TRUE(Flow);
  const Stmt *ForLoop = *std::next(Flow->function()->getBody()->child_begin(), 2);
  ASSERT_TRUE(isa<ForStmt>(ForLoop));
  EXPECT_TRUE(Flow->sameDefinition(P.read(0), P.read(2)));
  EXPECT_TRUE(Flow->invariantIn(P.read(0), ForLoop));
  EXPECT_FALSE(Flow->invariantIn(P.read(1), ForLoop)); // t = t * 2 reaches the next iteration
}

TEST(ValueFlow, ContainersAndFieldsJoinTheirStores) {
  Parsed Container("void f() {\n"
                   "  std::vector<torch::Tensor> v;\n"
                   "  v.push_back(torch::ones({2}).cuda());\n"
                   "  probe(v[0]);\n"
                   "}");
  ASSERT_TRUE(Container.ok());
  EXPECT_EQ(Container.placement(0), Placement::Gpu);
  Parsed Field("struct Model {\n"
               "  torch::Tensor w;\n"
               "  Model() : w(torch::ones({2}).cuda()) {}\n"
               "  void step() { probe(w); }\n"
               "};");
  ASSERT_TRUE(Field.ok());
  EXPECT_EQ(Field.placement(0), Placement::Gpu);
}

TEST(ValueFlow, AMethodsFieldsAreStatesOfItsFlow) {
  Parsed P("struct Meter {\n"
           "  torch::Tensor total;\n"
           "  void keepOnGpu(const torch::Tensor &t) { total = t.cuda(); }\n"
           "  void step(bool reset, const torch::Tensor &t) {\n"
           "    total = torch::ones({2});\n"
           "    probe(total);\n"
           "    keepOnGpu(t);\n"
           "    probe(total);\n"
           "    if (reset)\n"
           "      this->total = torch::zeros({2});\n"
           "    probe(total);\n"
           "  }\n"
           "};");
  ASSERT_TRUE(P.ok());
  // The method's own store reaches the first read.
  EXPECT_EQ(P.placement(0), Placement::Cpu);
  // A non-const method of the object may store into it: every store counts.
  EXPECT_NE(P.placement(1), Placement::Cpu);
  // One branch stores on the CPU, the other still holds what keepOnGpu stored.
  EXPECT_NE(P.placement(2), Placement::Cpu);
  // A mutable reference to the field may write it anywhere (here: before the
  // read, through the alias).
  Parsed Aliased("struct Meter {\n"
                 "  torch::Tensor total;\n"
                 "  void keepOnGpu(const torch::Tensor &t) { total = t.cuda(); }\n"
                 "  void step() {\n"
                 "    total = torch::zeros({2});\n"
                 "    torch::Tensor &alias = total;\n"
                 "    alias = torch::ones({2}).cuda();\n"
                 "    probe(total);\n"
                 "  }\n"
                 "};");
  ASSERT_TRUE(Aliased.ok());
  EXPECT_NE(Aliased.placement(0), Placement::Cpu);
}

TEST(ValueFlow, OneContainerVocabularyServesPlacementAndPinning) {
  EXPECT_EQ(containerOp("push_back"), ContainerOp::Add);
  EXPECT_EQ(containerOp("front"), ContainerOp::ElementAccess);
  EXPECT_EQ(containerOp("size"), ContainerOp::Inspect);
  EXPECT_EQ(containerOp("begin"), ContainerOp::Iterate);
  EXPECT_EQ(containerOp("clear"), ContainerOp::Remove);
  EXPECT_EQ(containerOp("swap"), ContainerOp::Unknown);
  // Elements removed leave the others pinned (pinning knew only push_back and
  // reads before the shared model: clear() made the buffer unknown); a swap
  // is not followed, by either analysis.
  Parsed P("void f() {\n"
           "  std::vector<torch::Tensor> staged, other, third;\n"
           "  staged.push_back(torch::empty({2}).pin_memory());\n"
           "  staged.push_back(torch::empty({2}).pin_memory());\n"
           "  staged.pop_back();\n"
           "  probe(staged.front());\n"
           "  other.push_back(torch::empty({2}).pin_memory());\n"
           "  other.swap(third);\n"
           "  probe(other.front());\n"
           "}");
  ASSERT_TRUE(P.ok());
  EXPECT_EQ(P.pinning(0), Pinning::Pinned);
  EXPECT_EQ(P.pinning(1), Pinning::Unknown);
  EXPECT_EQ(P.placement(1), Placement::Unknown);
}

TEST(ValueFlow, AContainersElementsAreStatesOfItsFlow) {
  // An element store keeps the other elements (it kills nothing); clear()
  // and a reassignment replace them all; a read sees the stores that reach it.
  Parsed P("void f(const torch::Tensor &x, bool reset, int n) {\n"
           "  std::vector<torch::Tensor> v;\n"
           "  v.push_back(torch::empty({2}).pin_memory());\n"
           "  probe(v[0]);\n"
           "  v.push_back(x.cuda());\n"
           "  probe(v[0]);\n"
           "  v.clear();\n"
           "  v.push_back(torch::ones({2}));\n"
           "  probe(v.front());\n"
           "  if (reset)\n"
           "    v = {x.cuda()};\n"
           "  probe(v.back());\n"
           "  std::vector<torch::Tensor> hist(1);\n"
           "  hist[0] = torch::zeros({1});\n"
           "  for (int i = 0; i < n; ++i) {\n"
           "    probe(hist.back());\n"
           "    hist.push_back(x.cuda());\n"
           "  }\n"
           "}");
  ASSERT_TRUE(P.ok());
  EXPECT_EQ(P.placement(0), Placement::Cpu);
  EXPECT_EQ(P.pinning(0), Pinning::Pinned);
  EXPECT_NE(P.placement(1), Placement::Cpu); // both stores reach
  EXPECT_EQ(P.placement(2), Placement::Cpu); // clear() replaced the GPU store
  EXPECT_EQ(P.pinning(2), Pinning::Pageable);
  EXPECT_NE(P.placement(3), Placement::Cpu); // the branch's reassignment reaches
  EXPECT_NE(P.placement(4), Placement::Cpu); // the last iteration's store reaches
}

TEST(ValueFlow, PinningFollowsTheDefinitionsThatReachTheRead) {
  // Before the core, pinning joined every value a variable was ever given
  // (pageable + pinned = unknown) and followed loops only 16 levels deep.
  Parsed P("void f(int n) {\n"
           "  auto h = torch::empty({2});\n"
           "  probe(h);\n"
           "  h = h.pin_memory();\n"
           "  probe(h);\n"
           "  for (int i = 0; i < n; ++i)\n"
           "    h = h.narrow(0, 0, 1);\n"
           "  probe(h);\n"
           "  torch::Tensor s;\n"
           "  std::swap(s, h);\n"
           "  probe(s);\n"
           "}");
  ASSERT_TRUE(P.ok());
  EXPECT_EQ(P.pinning(0), Pinning::Pageable);
  EXPECT_EQ(P.pinning(1), Pinning::Pinned);
  EXPECT_EQ(P.pinning(2), Pinning::Pinned);  // narrow keeps its base's memory, every iteration
  EXPECT_EQ(P.pinning(3), Pinning::Unknown); // passed by non-const reference
}

TEST(ValueFlow, ElementKindFollowsTheDefinitionsThatReachTheRead) {
  // Before the core, a variable's kind was its initialiser's: `idx` below was
  // floating after its conversion to kLong.
  Parsed P("void f(bool c) {\n"
           "  auto idx = torch::ones({2});\n"
           "  probe(idx);\n"
           "  idx = idx.to(torch::kLong);\n"
           "  probe(idx);\n"
           "  auto m = torch::ones({2}) > 0;\n"
           "  if (c)\n"
           "    m = torch::ones({2});\n"
           "  probe(m);\n"
           "}");
  ASSERT_TRUE(P.ok());
  EXPECT_EQ(P.kind(0), ElementKind::Floating);
  EXPECT_EQ(P.kind(1), ElementKind::Integer);
  EXPECT_EQ(P.kind(2), ElementKind::Unknown); // bool on one path, floating on the other
}

TEST(ValueFlow, AFieldsKindAndPinningFollowTheMethodsStores) {
  // Before, a field's element kind was unknown and its pinning the join of
  // every store of the program, wherever it was read.
  Parsed P("struct S {\n"
           "  S() : m_(torch::ones({2}) > 0), b_(torch::randn({2})) {}\n"
           "  void indices() { m_ = torch::randint(8, {2}); probe(m_); }\n"
           "  void fromEntry() { probe(m_); }\n"
           "  void pinned() { b_ = torch::randn({2}).pin_memory(); probe(b_); }\n"
           "  void anyPinning() { probe(b_); }\n"
           "  torch::Tensor m_, b_;\n"
           "};");
  ASSERT_TRUE(P.ok());
  EXPECT_EQ(P.kind(0), ElementKind::Integer);
  EXPECT_EQ(P.kind(1), ElementKind::Unknown); // the constructor's mask or indices()'s indices
  EXPECT_EQ(P.pinning(2), Pinning::Pinned);
  EXPECT_EQ(P.pinning(3), Pinning::Unknown); // the constructor's pageable tensor or pinned()'s
}

TEST(ValueFlow, CallSitesAreClassifiedOnceAndAnsweredUnderAnyStatement) {
  Parsed P("float f(torch::Tensor t) {\n"
           "  float s = 0;\n"
           "  for (int i = 0; i < 3; ++i) {\n"
           "    s += t.item<float>();\n"
           "    auto later = [&] { return t.cpu(); };\n"
           "    probe(t);\n"
           "  }\n"
           "  return s + t.sum().item<float>() /* torch-syncfree: inserted sync */;\n"
           "}");
  ASSERT_TRUE(P.ok());
  const Stmt *Body = nullptr;
  for (const Decl *D : P.tu().context().getTranslationUnitDecl()->decls())
    if (const auto *FD = dyn_cast<FunctionDecl>(D); FD && FD->getName() == "f" && FD->hasBody())
      Body = FD->getBody();
  ASSERT_NE(Body, nullptr);
  const ForStmt *Loop = nullptr;
  for (const Stmt *Child : Body->children())
    if (!Loop)
      Loop = dyn_cast<ForStmt>(Child);
  ASSERT_NE(Loop, nullptr);
  auto Syncs = [](const std::vector<TranslationUnitAnalysis::CallSite> &Sites, bool InLambda) {
    std::vector<std::string> Names;
    for (const auto &Site : Sites)
      if (Site.Sync && Site.InLambda == InLambda)
        Names.push_back(Site.Sync->Api.str());
    return Names;
  };
  std::vector<TranslationUnitAnalysis::CallSite> InLoop = P.tu().callSitesUnder(*Loop);
  EXPECT_EQ(Syncs(InLoop, false), std::vector<std::string>{"item"});
  EXPECT_EQ(Syncs(InLoop, true), std::vector<std::string>{"cpu"});
  // The whole body: the read after the loop is the tool's own (marked).
  std::vector<TranslationUnitAnalysis::CallSite> InBody = P.tu().callSitesUnder(*Body);
  EXPECT_EQ(Syncs(InBody, false), std::vector<std::string>{"item"});
  EXPECT_EQ(Syncs(InBody, true), std::vector<std::string>{"cpu"});
  EXPECT_EQ(llvm::count_if(InBody, [](const auto &Site) { return Site.Inserted; }), 1);
}

} // namespace
