//===- ClipGradNorm.cpp - clip_grad_norm_ on the device --------------------===//
//
// The device-side rewrite of torch::nn::utils::clip_grad_norm_ and the helper
// it calls, shared by torch-sync-grad-norm and torch-sync-deferred-accumulate
// (which composes it with a device sum): checks ask the engine for it, never
// each other.
//
//===----------------------------------------------------------------------===//
#include "fixes/ClipGradNorm.h"
#include "TensorFacts.h"
#include "TorchApi.h"
#include "utils/AstWalk.h"
#include "utils/Directives.h"
#include "utils/SourceText.h"

#include "clang/AST/ParentMapContext.h"
#include "clang/Tooling/Transformer/RangeSelector.h"
#include "clang/Tooling/Transformer/Stencil.h"

using namespace clang;
using namespace clang::ast_matchers;
using namespace clang::transformer;

namespace torch_syncfree {

/// The offset of the first character of the line holding \p Offset.
static unsigned startOfLine(StringRef Text, unsigned Offset) {
  size_t Newline = Offset == 0 ? StringRef::npos : Text.rfind('\n', Offset - 1);
  return Newline == StringRef::npos ? 0 : static_cast<unsigned>(Newline + 1);
}

/// The offset in \p FID where a helper for code at \p Use goes: after the last
/// `#include` line above the top-level declaration holding \p Use, when no
/// preprocessor conditional opened after it is still open there; else the
/// start of that declaration's line. nullopt inside a macro or another file.
static std::optional<SourceLocation> helperInsertionPoint(ASTContext &Ctx, const Stmt *Use) {
  const SourceManager &SM = Ctx.getSourceManager();
  // The top-level declaration (a function, or the namespace around it).
  const Decl *TopLevel = outermostDeclaration(Ctx, Use);
  if (!TopLevel)
    return std::nullopt;
  SourceLocation DeclBegin = SM.getExpansionLoc(TopLevel->getBeginLoc());
  FileID FID = SM.getFileID(DeclBegin);
  if (FID != SM.getFileID(SM.getExpansionLoc(Use->getBeginLoc())))
    return std::nullopt;
  StringRef Text = SM.getBufferData(FID);
  unsigned DeclLine = startOfLine(Text, SM.getFileOffset(DeclBegin));
  // The directives above the declaration: the last #include, and the
  // conditional depth after it.
  std::optional<unsigned> AfterInclude;
  int DepthAfterInclude = 0;
  for (const SourceDirective &D : scanDirectives(Text)) {
    if (D.Offset >= DeclLine)
      break;
    if (D.Kind == SourceDirective::Include) {
      AfterInclude = D.NextLine;
      DepthAfterInclude = 0;
    } else if (D.Kind == SourceDirective::Conditional) {
      ++DepthAfterInclude;
    } else if (D.Kind == SourceDirective::EndConditional) {
      --DepthAfterInclude;
    }
  }
  unsigned Offset =
      AfterInclude && DepthAfterInclude == 0 && *AfterInclude <= DeclLine ? *AfterInclude : DeclLine;
  return SM.getComposedLoc(FID, Offset);
}

/// The helper's name and guard for these headers and options.
static std::string clippingHelperName(ASTContext &Ctx, bool FusedNorm) {
  return FusedNorm && torchDeclares(Ctx, "at", "_foreach_norm") ? "torch_syncfree_clip_grad_norm_fused"
                                                                : "torch_syncfree_clip_grad_norm";
}

std::optional<std::string> deviceClipGradNorm(ASTContext &Ctx, const CallExpr *Call, bool FusedNorm) {
  // The rewrite mirrors LibTorch's own implementation (2-norm, no finiteness check)
  // without the final `.item<double>()`.
  for (unsigned I = 2; I < Call->getNumArgs(); ++I) {
    const Expr *Arg = Call->getArg(I);
    if (isa<CXXDefaultArgExpr>(Arg))
      continue;
    Expr::EvalResult Value;
    if (I == 2 && Arg->EvaluateAsRValue(Value, Ctx) && Value.Val.isFloat() &&
        Value.Val.getFloat().convertToDouble() == 2.0)
      continue;
    bool Flag = true;
    if (I == 3 && Arg->EvaluateAsBooleanCondition(Flag, Ctx) && !Flag)
      continue;
    return std::nullopt;
  }
  // The scaling uses the multi-tensor kernel where the headers declare it (2.1+): one
  // launch instead of one per parameter, and elementwise, so the same numbers. The
  // norms stay per parameter unless FusedNorm: on CUDA `_foreach_norm` sums in another
  // order than `norm`, and training amplifies the last-bit difference (measured on an
  // H200: 6.5e-4 relative in an MLP's loss after a few hundred epochs).
  return clippingHelperName(Ctx, FusedNorm) + "(" + spelledText(Ctx, Call->getArg(0)) + ", " +
         spelledText(Ctx, Call->getArg(1)) + ")";
}

bool addClipGradNormHelper(TranslationUnitAnalysis &TU, const CallExpr *Call, bool FusedNorm, bool EveryFix,
                           std::vector<ASTEdit> &HelperEdits) {
  ASTContext &Ctx = TU.context();
  const SourceManager &SM = Ctx.getSourceManager();
  std::string Name = clippingHelperName(Ctx, FusedNorm);
  bool ForeachNorm = StringRef(Name).ends_with("_fused");
  bool ForeachMulByTensor = torchDeclares(Ctx, "at", "_foreach_mul_", 2, 1, "at::Tensor");
  // Defined already (this file was fixed before): call it.
  if (!Ctx.getTranslationUnitDecl()->lookup(DeclarationName(&Ctx.Idents.get(Name))).empty())
    return true;
  std::optional<SourceLocation> Where = helperInsertionPoint(Ctx, Call);
  if (!Where)
    return false;
  if (!EveryFix) {
    // The carrier's fix must be applied for the others to compile: a line
    // that may suppress it (NOLINT, NOLINTNEXTLINE above) carries no fix at all.
    auto [FID, Offset] = SM.getDecomposedLoc(SM.getExpansionLoc(Call->getBeginLoc()));
    StringRef Text = SM.getBufferData(FID);
    unsigned LineBegin = startOfLine(Text, Offset);
    unsigned PreviousLine = LineBegin == 0 ? 0 : startOfLine(Text, LineBegin - 1);
    if (Text.slice(PreviousLine, Text.find('\n', Offset)).contains("NOLINT"))
      return false;
    if (!TU.claimName(/*Scope=*/nullptr, Name))
      return true; // an earlier fix of this file carries it
  }
  std::string Guard = Name == "torch_syncfree_clip_grad_norm" ? "TORCH_SYNCFREE_CLIP_GRAD_NORM"
                                                              : "TORCH_SYNCFREE_CLIP_GRAD_NORM_FUSED";
  std::string Norms = ForeachNorm ? "  auto norms = at::_foreach_norm(grads, 2);\n"
                                  : "  std::vector<torch::Tensor> norms;\n"
                                    "  for (const auto &g : grads)\n"
                                    "    norms.push_back(g.norm(2));\n";
  std::string Scale = ForeachMulByTensor ? "  at::_foreach_mul_(grads, coef);\n"
                                         : "  for (const auto &g : grads)\n"
                                           "    g.mul_(coef);\n";
  // One definition per file, guarded so that a second copy (clang-tidy --fix
  // inserts each fix's copy) compiles to nothing.
  std::string Helper =
      "\n// torch-syncfree: torch::nn::utils::clip_grad_norm_ (2-norm) on the device: the\n"
      "// gradients are scaled there and the total norm is returned as a 0-dim tensor,\n"
      "// read on the host only where it is needed.\n"
      "#ifndef " +
      Guard + "\n#define " + Guard +
      "\n"
      "static torch::Tensor " +
      Name +
      "(const std::vector<torch::Tensor> &parameters, double max_norm) {\n"
      "  std::vector<torch::Tensor> grads;\n"
      "  for (const auto &p : parameters)\n"
      "    if (p.grad().defined())\n"
      "      grads.push_back(p.grad());\n"
      "  if (grads.empty()) // LibTorch returns 0.0\n"
      "    return parameters.empty() ? torch::zeros({}, torch::kDouble)\n"
      "                              : torch::zeros({}, parameters[0].options().dtype(torch::kDouble));\n" +
      Norms +
      "  auto total = norms.size() == 1 ? norms[0] : torch::stack(norms).norm(2);\n"
      "  auto coef = (max_norm / (total + 1e-6)).clamp_max(1.0);\n" +
      Scale +
      "  return total;\n"
      "}\n"
      "#endif\n";
  HelperEdits.push_back(insertBefore(
      [Where = *Where](const MatchFinder::MatchResult &) -> llvm::Expected<CharSourceRange> {
        return CharSourceRange::getCharRange(Where, Where);
      },
      cat(Helper)));
  return true;
}

} // namespace torch_syncfree
