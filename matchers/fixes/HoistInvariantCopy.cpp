#include "fixes/HoistInvariantCopy.h"
#include "ApiFacts.h"
#include "CopyCalls.h"
#include "TensorStorage.h"
#include "TorchApi.h"
#include "analysis/ValueFlow.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"
#include <functional>

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Analysis/Analyses/ExprMutationAnalyzer.h"
#include "clang/Lex/Lexer.h"
#include <variant>

using namespace clang;
using namespace clang::transformer;

namespace torch_syncfree {

namespace {

/// Whether S lies under Root (through declarations: an initialiser's parent is its VarDecl).
bool isUnder(ASTContext &Ctx, const Stmt *S, const Stmt *Root) {
  for (DynTypedNode Node = DynTypedNode::create(*S); !Node.getNodeKind().isNone();
       Node = firstParent(Ctx, Node))
    if (Node.get<Stmt>() == Root)
      return true;
  return false;
}

/// The variable a tensor expression reads, through views (`t.narrow(..)`, `t[i]`).
const VarDecl *rootVariable(const Expr *E) {
  E = ignoreWrappers(E);
  while (const Expr *Base = E ? viewBase(E) : nullptr)
    E = ignoreWrappers(Base);
  const auto *Ref = dyn_cast_or_null<DeclRefExpr>(E);
  return Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
}

/// Ops whose result may share its input's memory (a view, or the input itself
/// when nothing needs converting); every other LibTorch op that returns a
/// tensor allocates a new one.
bool mayShareInput(llvm::StringRef Name) {
  return hasApiTrait(Name, View) || Name == "to" || Name == "cpu" || Name == "cuda" || Name == "contiguous" ||
         Name == "detach" || Name == "reshape" || Name == "flatten" || Name == "type_as" || Name == "alias" ||
         Name == "expand_as" || Name == "view_as" || Name == "squeeze" || Name == "unsqueeze" ||
         isInPlaceName(Name);
}

/// Whether D is declared in namespace std (or libstdc++'s __gnu_cxx, its
/// iterators), through its classes and inline namespaces
/// (`std::__cxx11::basic_string<..>::append`).
bool isInStd(const Decl *D) {
  for (const DeclContext *DC = D ? D->getDeclContext() : nullptr; DC; DC = DC->getParent())
    if (const auto *NS = dyn_cast<NamespaceDecl>(DC);
        NS && (NS->getName() == "std" || NS->getName() == "__gnu_cxx") &&
        NS->getParent()->getRedeclContext()->isTranslationUnit())
      return true;
  return false;
}

/// A data pointer only read from: `t.data_ptr<T>()[i]` as a value, or held
/// in a pointer to const (`const_data_ptr` is).
bool dataPointerOnlyRead(ASTContext &Ctx, const CallExpr *DataPtr) {
  if (calleeName(DataPtr).starts_with("const_"))
    return true;
  DynTypedNode Parent = ancestorSkipping<ImplicitCastExpr, ParenExpr>(Ctx, DataPtr);
  if (const auto *Element = Parent.get<ArraySubscriptExpr>()) {
    DynTypedNode User = ancestorSkipping<ParenExpr>(Ctx, Element);
    // Its value taken, or bound to a reference to const (`v.push_back(p[i])`).
    if (const auto *Read = User.get<ImplicitCastExpr>())
      return Read->getCastKind() == CK_LValueToRValue ||
             (Read->getCastKind() == CK_NoOp && Read->getType().isConstQualified());
    // Bound to a reference-to-const parameter as it is (`std::max(a, p[i])`).
    if (const auto *Call = User.get<CallExpr>())
      if (const FunctionDecl *Callee = Call->getDirectCallee())
        for (unsigned I = 0, Shift = isa<CXXOperatorCallExpr>(Call) && isa<CXXMethodDecl>(Callee) ? 1 : 0;
             I < Call->getNumArgs(); ++I)
          if (Call->getArg(I)->IgnoreParens() == Element && I >= Shift &&
              I - Shift < Callee->getNumParams()) {
            QualType T = Callee->getParamDecl(I - Shift)->getType();
            return T->isReferenceType() && T.getNonReferenceType().isConstQualified();
          }
    return false;
  }
  if (const auto *Held = Parent.get<VarDecl>())
    return Held->getType()->isPointerType() && Held->getType()->getPointeeType().isConstQualified();
  return false;
}

/// Whether S lies under one of the statements of Region.
bool isUnderAny(ASTContext &Ctx, const Stmt *S, llvm::ArrayRef<const Stmt *> Region) {
  return llvm::any_of(Region, [&](const Stmt *Root) { return isUnder(Ctx, S, Root); });
}

/// Whether the element reached from E by subscripts (`a[i]`, `a[i][j]`) is only
/// read: its value taken, or a const member asked (`a.size(0)`).
bool subscriptsOnlyRead(ASTContext &Ctx, const Expr *E) {
  for (;;) {
    DynTypedNode Parent = ancestorSkipping<ParenExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr>(Ctx, E);
    if (const auto *Subscript = Parent.get<CXXOperatorCallExpr>();
        Subscript && Subscript->getOperator() == OO_Subscript && Subscript->getNumArgs() == 2 &&
        ignoreWrappers(Subscript->getArg(0)) == ignoreWrappers(E)) {
      E = Subscript;
      continue;
    }
    if (const auto *Cast = Parent.get<ImplicitCastExpr>())
      return Cast->getCastKind() == CK_LValueToRValue ||
             (Cast->getCastKind() == CK_NoOp && Cast->getType().isConstQualified());
    if (const auto *Member = Parent.get<MemberExpr>())
      if (const auto *Method = dyn_cast<CXXMethodDecl>(Member->getMemberDecl()))
        return Method->isConst();
    return false;
  }
}

/// An accessor only read from: `t.accessor<T, N>()[i]` as a value, or held in
/// a local whose every use reads elements (`a[i]`, `a.size(0)`).
bool accessorOnlyRead(TranslationUnitAnalysis &TU, const CallExpr *Accessor) {
  ASTContext &Ctx = TU.context();
  if (subscriptsOnlyRead(Ctx, Accessor))
    return true;
  const VarDecl *Held = initialisedVariable(Ctx, Accessor);
  const FunctionDecl *FD = Held ? enclosingFunction(Ctx, Accessor) : nullptr;
  if (!Held || !FD || !FD->getBody() || !Held->hasLocalStorage() ||
      (Held->getType()->isReferenceType() && !Held->getType().getNonReferenceType().isConstQualified()))
    return false;
  return llvm::all_of(TU.referencesTo(*FD->getBody(), Held),
                      [&](const DeclRefExpr *Use) { return subscriptsOnlyRead(Ctx, Use); });
}

/// The tensor variable an `item` read reads: `x[i].item<T>()` (i a host
/// integer) and, with \p Whole, `x.item<T>()`; nullptr for any other read.
const DeclRefExpr *itemReadTensor(const CallExpr *Read, bool Whole) {
  const auto *Member = dyn_cast<CXXMemberCallExpr>(Read);
  if (!Member || calleeName(Member) != "item")
    return nullptr;
  const Expr *Object = ignoreWrappers(Member->getImplicitObjectArgument());
  if (const auto *Subscript = dyn_cast_or_null<CXXOperatorCallExpr>(Object)) {
    if (Subscript->getOperator() != OO_Subscript || Subscript->getNumArgs() != 2 ||
        !Subscript->getArg(1)->IgnoreImpCasts()->getType()->isIntegralOrEnumerationType())
      return nullptr;
    Object = ignoreWrappers(Subscript->getArg(0));
  } else if (!Whole) {
    return nullptr;
  }
  const auto *Tensor = dyn_cast_or_null<DeclRefExpr>(Object);
  return Tensor && isa<VarDecl>(Tensor->getDecl()) && isTensorType(Tensor->getType()) ? Tensor : nullptr;
}

/// The question "may this write the copied tensor's memory", for one region
/// of code: a loop, or the statements between two reads of a block.
class RegionWrites {
public:
  /// \p Region: consecutive statements (a loop: itself); \p Copied: the
  /// variable whose memory must stay as it is; \p Host: the host copy
  /// (nullptr: none declared yet).
  RegionWrites(TranslationUnitAnalysis &TU, llvm::ArrayRef<const Stmt *> Region, const VarDecl *Copied,
               const VarDecl *Host)
      : TU(TU), Ctx(TU.context()), Region(Region.begin(), Region.end()), Copied(Copied), Host(Host) {
    // A parameter's memory is the caller's, and a local that only ever holds
    // new allocations owns its own: a tensor this function allocates is none of
    // them. A local that may be a view of another is not known to be apart.
    const auto *Flow = flowOf(Copied);
    CopiedOwnsMemory = isa<ParmVarDecl>(Copied) ||
                       (Flow && llvm::all_of(Flow->definitions(), [&](const ValueDefinition &Definition) {
                          return Definition.Variable != Copied ||
                                 (!Definition.isOpaque() && newAllocation(Definition.Value));
                        }));
  }

  /// Whether the region surely writes the copied tensor itself (`work.mul_(..)`,
  /// `work[i].fill_(..)`, `work += ..`): its values change in the region, so a
  /// copy made before it is not the same copy (no restructuring, not only an
  /// unproven one).
  bool writesCopiedItself() {
    for (const Stmt *Root : Region)
      for (const TranslationUnitAnalysis::CallSite &Site : TU.callSitesUnder(*Root)) {
        const CallExpr *Call = Site.Call;
        std::string Name = calleeName(Call).str();
        if (const auto *Member = dyn_cast<CXXMemberCallExpr>(Call)) {
          const Expr *Object = Member->getImplicitObjectArgument();
          if (Object && isTensorType(Object->getType()) && isInPlaceName(Name) &&
              rootVariable(Object) == Copied)
            return true;
        } else if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Call)) {
          if (Op->isAssignmentOp() && Op->getNumArgs() >= 1 && isTensorType(Op->getArg(0)->getType()) &&
              !(Op->getOperator() == OO_Equal && isa<DeclRefExpr>(ignoreWrappers(Op->getArg(0)))) &&
              rootVariable(Op->getArg(0)) == Copied)
            return true;
        }
      }
    return false;
  }

  /// Why something in the region may write a tensor made outside it; empty when nothing can.
  std::string firstWrite() {
    for (const Stmt *Root : Region)
      for (const TranslationUnitAnalysis::CallSite &Site : TU.callSitesUnder(*Root))
        if (std::string Why = writeBy(Site.Call); !Why.empty())
          return Why;
    return "";
  }

private:
  const FunctionValueFlow *flowOf(const VarDecl *VD) {
    const auto *Parent = VD ? firstParent(Ctx, DynTypedNode::create(*VD)).get<Stmt>() : nullptr;
    const FunctionDecl *FD = Parent ? enclosingFunction(Ctx, Parent) : enclosingFunction(Ctx, Region.front());
    return FD ? TU.valueFlow(FD) : nullptr;
  }

  /// A new tensor: a LibTorch op that allocates its result (not a view, not
  /// an op that may return its input), or arithmetic on tensors.
  static bool newAllocation(const Expr *Value) {
    Value = ignoreWrappers(Value);
    if (const auto *Op = dyn_cast_or_null<CXXOperatorCallExpr>(Value))
      return isInTorchNamespace(Op->getDirectCallee()) && !Op->isAssignmentOp() &&
             Op->getOperator() != OO_Subscript;
    const auto *Call = dyn_cast_or_null<CallExpr>(Value);
    return Call && isInTorchNamespace(Call->getDirectCallee()) && isTensorType(Call->getType()) &&
           !mayShareInput(calleeName(Call));
  }

  /// A tensor this function makes apart from the copied one: made in the
  /// region (a new allocation each time, or a view of one), or anywhere in the
  /// function when the copied tensor owns its memory; or the host copy itself.
  bool madeApart(const VarDecl *VD, unsigned Depth = 0) {
    if (!VD || Depth > 8 || VD == Copied)
      return false;
    if (VD == Host)
      return true;
    const auto *Parent = dyn_cast_or_null<DeclStmt>(firstParent(Ctx, DynTypedNode::create(*VD)).get<Stmt>());
    if (!Parent || isa<ParmVarDecl>(VD) || VD->getType()->isReferenceType() ||
        (!CopiedOwnsMemory && !isUnderAny(Ctx, Parent, Region)))
      return false;
    const FunctionValueFlow *Flow = flowOf(VD);
    if (!Flow)
      return false;
    for (const ValueDefinition &Definition : Flow->definitions())
      if (Definition.Variable == VD && (Definition.isOpaque() || !fresh(Definition.Value, Depth)))
        return false;
    return true;
  }

  /// Whether Value is a tensor made apart from the copied one.
  bool fresh(const Expr *Value, unsigned Depth) {
    Value = ignoreWrappers(Value);
    if (!Value)
      return true; // `torch::Tensor t;`: undefined until assigned
    if (const VarDecl *Root = rootVariable(Value); Root && viewBase(Value))
      return madeApart(Root, Depth + 1);
    if (const auto *Ref = dyn_cast<DeclRefExpr>(Value))
      return madeApart(dyn_cast<VarDecl>(Ref->getDecl()), Depth + 1);
    // `u.cpu()`, `u.to(..)`, `u.contiguous()`: a new tensor or u itself, so
    // apart when u is.
    if (const auto *Member = dyn_cast<CXXMemberCallExpr>(Value);
        Member && isInTorchNamespace(Member->getDirectCallee()) && isTensorType(Member->getType()) &&
        mayShareInput(calleeName(Member)) && !isInPlaceName(calleeName(Member)) &&
        !hasApiTrait(calleeName(Member), View))
      return Depth < 8 && fresh(Member->getImplicitObjectArgument(), Depth + 1);
    return newAllocation(Value);
  }

  /// Whether the tensor E writes to cannot be the copied one.
  bool writesOnlyLoopTensors(const Expr *E) { return madeApart(rootVariable(E)); }

  std::string writeBy(const CallExpr *Call) {
    const FunctionDecl *Callee = Call->getDirectCallee();
    std::string Name = calleeName(Call).str();
    bool Torch = Callee && isInTorchNamespace(Callee);
    bool Std = isInStd(Callee);
    if (const auto *Member = dyn_cast<CXXMemberCallExpr>(Call)) {
      const Expr *Object = Member->getImplicitObjectArgument();
      if (Object && isTensorType(Object->getType())) {
        if (Name == "backward")
          return "`backward()` writes gradients the loop does not name";
        if (Name.find("data_ptr") != std::string::npos && dataPointerOnlyRead(Ctx, Call))
          return "";
        if (Name == "accessor" && accessorOnlyRead(TU, Call))
          return "";
        if (mayWriteTensorMemory(Name) && !writesOnlyLoopTensors(Object))
          return "`" + Name + "()` may write its memory";
        return "";
      }
      if (Std)
        return ""; // containers and strings: they hold handles, they do not write tensors
      if (Torch && Member->getMethodDecl() && Member->getMethodDecl()->isConst())
        return ""; // options, devices, sizes
      return "a call of `" + Name + "` may write it";
    }
    if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Call)) {
      if (Op->getNumArgs() >= 1 && isTensorType(Op->getArg(0)->getType()) && Op->isAssignmentOp()) {
        // `t = u` rebinds t (the core's definitions); `t[i] = u`, `t += u` write memory.
        if (Op->getOperator() == OO_Equal && isa<DeclRefExpr>(ignoreWrappers(Op->getArg(0))))
          return "";
        return writesOnlyLoopTensors(Op->getArg(0)) ? "" : "an assignment into a tensor may write it";
      }
      if (Torch || Std)
        return "";
      const SourceManager &SM = Ctx.getSourceManager();
      if (const auto *Lambda =
              Op->getDirectCallee() ? dyn_cast<CXXRecordDecl>(Op->getDirectCallee()->getParent()) : nullptr;
          Lambda && Lambda->isLambda() &&
          SM.isPointWithin(SM.getExpansionLoc(Lambda->getLocation()),
                           SM.getExpansionLoc(Region.front()->getBeginLoc()),
                           SM.getExpansionLoc(Region.back()->getEndLoc())))
        return ""; // a lambda written in the region: its calls are among the region's
      if (Callee && !Callee->isOverloadedOperator())
        return "a call of `" + Name + "` may write it";
      return Callee && llvm::all_of(Op->arguments(),
                                    [](const Expr *Arg) {
                                      return Arg->getType()->isArithmeticType() ||
                                             Arg->getType()->isEnumeralType();
                                    })
                 ? ""
                 : "a call of `" + Name + "` may write it";
    }
    if (Torch) {
      if (isInPlaceName(Name) || llvm::StringRef(Name).ends_with("_out"))
        for (const Expr *Arg : Call->arguments())
          if (isTensorType(Arg->getType()))
            return writesOnlyLoopTensors(Arg) ? "" : "`" + Name + "` may write it";
      if (Name == "backward" || Name == "grad")
        return "`" + Name + "` writes gradients the loop does not name";
      return "";
    }
    if (Std)
      return "";
    // Code that is not LibTorch's: harmless only with nothing but numbers.
    if (Callee && llvm::all_of(Call->arguments(), [](const Expr *Arg) {
          QualType T = Arg->getType();
          return T->isArithmeticType() || T->isEnumeralType();
        }))
      return "";
    return "a call of `" + (Name.empty() ? std::string("a function pointer") : Name) + "` may write it";
  }

  TranslationUnitAnalysis &TU;
  ASTContext &Ctx;
  llvm::SmallVector<const Stmt *, 4> Region;
  const VarDecl *Copied;
  const VarDecl *Host;
  bool CopiedOwnsMemory = false;
};

/// Why the host copy may be written in Body (in a loop, its next iteration
/// would then read the written values, not a fresh copy); empty when it is
/// only read. \p Where ends the reasons ("in the loop").
std::string hostWrittenIn(TranslationUnitAnalysis &TU, const VarDecl *Host, const Stmt *Body,
                          llvm::StringRef Where) {
  ASTContext &Ctx = TU.context();
  for (const DeclRefExpr *Use : TU.referencesTo(*Body, Host)) {
    const Expr *Current = Use;
    // Up through the views taken of it (`host[t]`, `host.narrow(..)`).
    while (const auto *Parent = dyn_cast_or_null<Expr>(consumerOf(Ctx, Current))) {
      if (!viewBase(Parent) || ignoreWrappers(viewBase(Parent)) != ignoreWrappers(Current))
        break;
      Current = Parent;
    }
    const Stmt *User = consumerOf(Ctx, Current);
    if (const auto *Member = dyn_cast_or_null<CXXMemberCallExpr>(User);
        Member && ignoreWrappers(Member->getImplicitObjectArgument()) == ignoreWrappers(Current)) {
      llvm::StringRef Name = calleeName(Member);
      if (!isInTorchNamespace(Member->getDirectCallee()))
        return "`" + Host->getNameAsString() + "` is passed to code that may write it";
      if (!mayWriteTensorMemory(Name))
        continue;
      if (Name.contains("data_ptr") && dataPointerOnlyRead(Ctx, Member))
        continue;
      if (Name == "accessor" && accessorOnlyRead(TU, Member))
        continue;
      return "`" + Host->getNameAsString() + "` is written " + Where.str() + " (`" + Name.str() + "`)";
    }
    if (const auto *Call = dyn_cast_or_null<CallExpr>(User); Call && !isa<CXXMemberCallExpr>(Call)) {
      llvm::StringRef Name = calleeName(Call);
      if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Call); Op && Op->isAssignmentOp())
        return "`" + Host->getNameAsString() + "` is written " + Where.str();
      if (isInTorchNamespace(Call->getDirectCallee()) && !isInPlaceName(Name) && !Name.ends_with("_out"))
        continue;
      return "`" + Host->getNameAsString() + "` is passed to code that may write it";
    }
    // `x.index({host})`: converted to an index, only read.
    if (const auto *Construct = dyn_cast_or_null<CXXConstructExpr>(User);
        Construct && isInTorchNamespace(Construct->getConstructor()))
      continue;
    if (isa_and_nonnull<InitListExpr>(User) || isa_and_nonnull<LambdaExpr>(User))
      continue; // an index list; a lambda's uses are among these
    return "`" + Host->getNameAsString() + "` is kept elsewhere " + Where.str();
  }
  return "";
}

/// Whether the name is used in Block other than for Host (moving Host's
/// declaration before the loop would change what those uses name).
bool nameTakenAround(ASTContext &Ctx, const Stmt *Block, const VarDecl *Host) {
  using namespace clang::ast_matchers;
  std::string Name = Host->getNameAsString();
  auto Other = [&](const NamedDecl *D) {
    return D != Host && D->getDeclName().isIdentifier() && D->getName() == Name;
  };
  for (const auto &Found : match(stmt(forEachDescendant(declRefExpr().bind("ref"))), *Block, Ctx))
    if (Other(Found.getNodeAs<DeclRefExpr>("ref")->getDecl()))
      return true;
  for (const auto &Found : match(stmt(forEachDescendant(memberExpr().bind("member"))), *Block, Ctx))
    if (Other(Found.getNodeAs<MemberExpr>("member")->getMemberDecl()))
      return true;
  for (const auto &Found : match(stmt(forEachDescendant(varDecl().bind("var"))), *Block, Ctx))
    if (Other(Found.getNodeAs<VarDecl>("var")))
      return true;
  return false;
}

/// The start of Loc's line, and whether only blanks precede Loc on it.
std::pair<SourceLocation, bool> lineStart(const SourceManager &SM, SourceLocation Loc) {
  std::pair<FileID, unsigned> At = SM.getDecomposedLoc(Loc);
  StringRef Buffer = SM.getBufferData(At.first);
  size_t Start = Buffer.rfind('\n', At.second == 0 ? 0 : At.second - 1);
  Start = Start == StringRef::npos ? 0 : Start + 1;
  bool Blank = Buffer.slice(Start, At.second).find_first_not_of(" \t") == StringRef::npos;
  return {Loc.getLocWithOffset(-static_cast<int>(At.second - Start)), Blank};
}

/// The edit that inserts \p Line (no newline) on a line of its own before
/// \p Statement (a statement of a block), at its indentation; or why it
/// cannot. \p What names the statement in the reasons ("the loop").
std::variant<ASTEdit, std::string> lineBefore(ASTContext &Ctx, const Stmt *Statement, const std::string &Line,
                                              llvm::StringRef What = "the loop") {
  const SourceManager &SM = Ctx.getSourceManager();
  if (!firstParent(Ctx, DynTypedNode::create(*Statement)).get<CompoundStmt>())
    return What.str() + " is not a statement of a block";
  if (Statement->getBeginLoc().isMacroID())
    return What.str() + " is written in a macro";
  auto [Start, Alone] = lineStart(SM, Statement->getBeginLoc());
  if (!Alone)
    return What.str() + " shares its line with other code";
  std::string Indent = Lexer::getIndentationForLine(Statement->getBeginLoc(), SM).str();
  return insertBefore(
      [Start = Start](const ast_matchers::MatchFinder::MatchResult &) -> llvm::Expected<CharSourceRange> {
        return CharSourceRange::getCharRange(Start, Start);
      },
      cat(Indent + Line + "\n"));
}

/// The edits that move \p Declaration (one declaration on lines of its own,
/// initialised by \p Copy) before \p Target (a statement of a block before
/// it), marked with \p Marker after the copy; or why they cannot.
std::variant<std::vector<ASTEdit>, std::string>
moveDeclarationBefore(ASTContext &Ctx, const DeclStmt *Declaration, const CallExpr *Copy, const Stmt *Target,
                      llvm::StringRef What, llvm::StringRef Marker) {
  const SourceManager &SM = Ctx.getSourceManager();
  const LangOptions &LO = Ctx.getLangOpts();
  SourceLocation DeclBegin = Declaration->getBeginLoc(), DeclEnd = Declaration->getEndLoc();
  if (DeclBegin.isMacroID() || DeclEnd.isMacroID() || Copy->getEndLoc().isMacroID())
    return std::string("the copy is written in a macro");
  auto [DeclLine, DeclAlone] = lineStart(SM, DeclBegin);
  SourceLocation AfterDecl = Lexer::getLocForEndOfToken(DeclEnd, 0, SM, LO);
  std::pair<FileID, unsigned> After = SM.getDecomposedLoc(AfterDecl);
  StringRef Buffer = SM.getBufferData(After.first);
  size_t LineEnd = Buffer.find('\n', After.second);
  // What follows the declaration on its line: nothing, or a line comment that
  // moves with it.
  StringRef Trailing = LineEnd == StringRef::npos ? "" : Buffer.slice(After.second, LineEnd).rtrim(" \t\r");
  bool RestMoves =
      LineEnd != StringRef::npos && (Trailing.trim().empty() || Trailing.ltrim().starts_with("//"));
  if (!DeclAlone || !RestMoves)
    return std::string("the declaration shares its line with other code");
  // The moved text, with the marker after the copy.
  SourceLocation CopyEnd = Lexer::getLocForEndOfToken(Copy->getEndLoc(), 0, SM, LO);
  std::string Before = Lexer::getSourceText(CharSourceRange::getCharRange(DeclBegin, CopyEnd), SM, LO).str();
  std::string Rest = Lexer::getSourceText(CharSourceRange::getCharRange(CopyEnd, AfterDecl), SM, LO).str();
  if (Before.empty() || Rest.empty())
    return std::string("the declaration is not spelled in one file");
  // A trailing comment moves too, on a line of its own above the declaration
  // (after the marker it would make a long line to reflow).
  std::string Moved = Before + (Marker.empty() ? std::string() : insertedSyncMarker(Marker)) + Rest;
  if (!Trailing.trim().empty())
    Moved =
        Trailing.trim().str() + "\n" + Lexer::getIndentationForLine(Target->getBeginLoc(), SM).str() + Moved;
  auto Insert = lineBefore(Ctx, Target, Moved, What);
  if (const auto *Why = std::get_if<std::string>(&Insert))
    return *Why;
  // From the newline before the declaration's line to its end: a range that
  // ended at the next line's first column would be extended over its first
  // character when made a file range.
  return std::vector<ASTEdit>{remove(charRange(CharSourceRange::getCharRange(
                                  DeclLine.getLocWithOffset(-1),
                                  AfterDecl.getLocWithOffset(static_cast<int>(LineEnd - After.second))))),
                              std::get<ASTEdit>(Insert)};
}

/// Whether Name is declared or named anywhere in Root.
bool nameUsedIn(ASTContext &Ctx, const Stmt *Root, llvm::StringRef Name) {
  using namespace clang::ast_matchers;
  auto Named = namedDecl(hasName(Name));
  return !match(stmt(anyOf(hasDescendant(declRefExpr(to(Named))), hasDescendant(memberExpr(member(Named))),
                           hasDescendant(varDecl(hasName(Name))))),
                *Root, Ctx)
              .empty();
}

} // namespace

std::optional<InvariantCopy> invariantHostCopy(TranslationUnitAnalysis &TU, const CXXMemberCallExpr *Copy) {
  ASTContext &Ctx = TU.context();
  const SourceManager &SM = Ctx.getSourceManager();
  const Stmt *Loop = TU.enclosingLoop(Copy);
  const VarDecl *Host = initialisedVariable(Ctx, Copy);
  if (!Loop || !Host || !Host->hasLocalStorage() || Host->getType()->isReferenceType())
    return std::nullopt;
  // `auto host = x.cpu();`, alone in its declaration, directly in the loop's body.
  const auto *Declaration =
      dyn_cast_or_null<DeclStmt>(firstParent(Ctx, DynTypedNode::create(*Host)).get<Stmt>());
  const Stmt *Body = loopBody(Loop);
  const auto *Block = dyn_cast_or_null<CompoundStmt>(Body);
  if (!Declaration || !Declaration->isSingleDecl() || !Block ||
      !llvm::is_contained(Block->body(), Declaration))
    return std::nullopt;
  // Of a variable the loop does not redefine.
  const auto *Copied = dyn_cast<DeclRefExpr>(ignoreWrappers(Copy->getImplicitObjectArgument()));
  const FunctionDecl *FD = enclosingFunction(Ctx, Loop);
  const FunctionValueFlow *Flow = FD ? TU.valueFlow(FD) : nullptr;
  if (!Copied || !isa<VarDecl>(Copied->getDecl()) || !Flow || !Flow->invariantIn(Copied, Loop) ||
      RegionWrites(TU, {Loop}, cast<VarDecl>(Copied->getDecl()), Host).writesCopiedItself())
    return std::nullopt;

  InvariantCopy Found;
  Found.Tensor = Copied->getDecl()->getNameAsString();
  Found.Variable = Host->getNameAsString();
  Found.Declaration = spelledText(Ctx, Declaration);
  Found.Loop = Loop;
  Found.LoopLine = SM.getExpansionLineNumber(Loop->getBeginLoc());
  if (Found.Declaration.empty())
    Found.Declaration = "the declaration of `" + Found.Variable + "`";

  const auto *LoopParent = firstParent(Ctx, DynTypedNode::create(*Loop)).get<CompoundStmt>();
  Found.NotProven = RegionWrites(TU, {Loop}, cast<VarDecl>(Copied->getDecl()), Host).firstWrite();
  if (!Found.NotProven.empty())
    Found.NotProven = "the loop may change `" + Found.Tensor + "`: " + Found.NotProven;
  else if (std::string Written = hostWrittenIn(TU, Host, Block, "in the loop"); !Written.empty())
    Found.NotProven = Written;
  else if (!LoopParent)
    Found.NotProven = "the loop is not a statement of a block";
  else if (nameTakenAround(Ctx, LoopParent, Host))
    Found.NotProven = "`" + Found.Variable + "` names something else around the loop";
  auto Unproven = [&](llvm::StringRef Why) {
    Found.NotProven = Why.str();
    return Found;
  };
  if (!Found.NotProven.empty())
    return Found;

  // The edits: the declaration's lines leave the loop and go, marked as the
  // tool's one copy, before it at the loop's indentation.
  auto Moved = moveDeclarationBefore(Ctx, Declaration, Copy, Loop, "the loop", "copied once before the loop");
  if (const auto *Why = std::get_if<std::string>(&Moved))
    return Unproven(*Why);
  Found.Edits = std::get<std::vector<ASTEdit>>(Moved);
  return Found;
}

std::optional<InvariantRowCopy> invariantRowCopy(TranslationUnitAnalysis &TU, const CXXMemberCallExpr *Copy) {
  ASTContext &Ctx = TU.context();
  const SourceManager &SM = Ctx.getSourceManager();
  const Stmt *Loop = TU.enclosingLoop(Copy);
  const FunctionDecl *FD = Loop ? enclosingFunction(Ctx, Loop) : nullptr;
  const FunctionValueFlow *Flow = FD ? TU.valueFlow(FD) : nullptr;
  const Expr *Copied = Copy->getImplicitObjectArgument();
  if (!Flow || !Copied || Copy->getBeginLoc().isMacroID())
    return std::nullopt;
  ExprMutationAnalyzer Mutations(*Loop, Ctx);
  auto DeclaredWithin = [&](const VarDecl *VD) {
    return SM.isPointWithin(VD->getLocation(), Loop->getBeginLoc(), Loop->getEndLoc());
  };
  // The copied expression: elementwise operators and comparisons of one row
  // `t[i]` with host scalars the loop does not change.
  const CXXOperatorCallExpr *Row = nullptr;
  bool Elementwise = true;
  std::function<void(const Expr *)> Walk = [&](const Expr *E) {
    E = E ? E->IgnoreParenImpCasts() : nullptr;
    if (!E || !Elementwise)
      return;
    if (const auto *Temporary = dyn_cast<MaterializeTemporaryExpr>(E))
      return Walk(Temporary->getSubExpr());
    if (const auto *Bind = dyn_cast<CXXBindTemporaryExpr>(E))
      return Walk(Bind->getSubExpr());
    if (const auto *Construct = dyn_cast<CXXConstructExpr>(E); Construct && Construct->getNumArgs() == 1)
      return Walk(Construct->getArg(0)); // a scalar converted to c10::Scalar
    if (E->getType()->isArithmeticType()) {
      // A literal, or a variable declared before the loop that nothing in it
      // changes (`+=`, `++` and mutable references too: clang's mutation
      // analysis; the value-flow core follows assignments only).
      if (isa<IntegerLiteral, FloatingLiteral>(E))
        return;
      const auto *Ref = dyn_cast<DeclRefExpr>(E);
      const auto *VD = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
      Elementwise = VD && !DeclaredWithin(VD) && Flow->invariantIn(Ref, Loop) && !Mutations.isMutated(VD);
      return;
    }
    const auto *Op = dyn_cast<CXXOperatorCallExpr>(E);
    if (Op && Op->getOperator() == OO_Subscript && Op->getNumArgs() == 2 && !Row &&
        isa<DeclRefExpr>(ignoreWrappers(Op->getArg(0))) && isTensorType(Op->getArg(0)->getType()) &&
        Op->getArg(1)->IgnoreParenImpCasts()->getType()->isIntegerType()) {
      Row = Op;
      return;
    }
    if (Op && Op->getNumArgs() == 2 && isInTorchNamespace(Op->getDirectCallee()) &&
        (Op->isComparisonOp() || Op->getOperator() == OO_Plus || Op->getOperator() == OO_Minus ||
         Op->getOperator() == OO_Star || Op->getOperator() == OO_Slash)) {
      Walk(Op->getArg(0));
      Walk(Op->getArg(1));
      return;
    }
    if (const auto *Member = dyn_cast<CXXMemberCallExpr>(E);
        Member && isInTorchNamespace(Member->getDirectCallee()) && Member->getNumArgs() == 1 &&
        isElementwiseMethod(calleeName(Member))) {
      Walk(Member->getImplicitObjectArgument());
      Walk(Member->getArg(0));
      return;
    }
    Elementwise = false;
  };
  Walk(Copied);
  if (!Elementwise || !Row)
    return std::nullopt;
  const auto *Tensor = cast<DeclRefExpr>(ignoreWrappers(Row->getArg(0)));
  // The row changes with the loop (else the whole copy is the loop's invariant).
  const auto *Index = dyn_cast<DeclRefExpr>(Row->getArg(1)->IgnoreParenImpCasts());
  const auto *IndexVariable = Index ? dyn_cast<VarDecl>(Index->getDecl()) : nullptr;
  if (!IndexVariable || !(DeclaredWithin(IndexVariable) || Mutations.isMutated(IndexVariable)) ||
      !Flow->invariantIn(Tensor, Loop) || !isa<VarDecl>(Tensor->getDecl()))
    return std::nullopt;
  RegionWrites Writes(TU, {Loop}, cast<VarDecl>(Tensor->getDecl()), nullptr);
  if (Writes.writesCopiedItself())
    return std::nullopt;
  // The copied expression as spelled, with `t[i]` spelled `t`.
  CharSourceRange Whole = Lexer::makeFileCharRange(CharSourceRange::getTokenRange(Copied->getSourceRange()),
                                                   SM, Ctx.getLangOpts());
  CharSourceRange RowRange =
      Lexer::makeFileCharRange(CharSourceRange::getTokenRange(Row->getSourceRange()), SM, Ctx.getLangOpts());
  if (Whole.isInvalid() || RowRange.isInvalid())
    return std::nullopt;
  StringRef Text = Lexer::getSourceText(Whole, SM, Ctx.getLangOpts());
  unsigned Begin = SM.getFileOffset(Whole.getBegin()), RowBegin = SM.getFileOffset(RowRange.getBegin()),
           RowEnd = SM.getFileOffset(RowRange.getEnd());
  if (Text.empty() || RowBegin < Begin || RowEnd - Begin > Text.size())
    return std::nullopt;
  InvariantRowCopy Found;
  Found.Tensor = Tensor->getDecl()->getNameAsString();
  Found.Index = Index->getDecl()->getNameAsString();
  Found.WholeCopy =
      (Text.take_front(RowBegin - Begin) + Found.Tensor + Text.drop_front(RowEnd - Begin)).str();
  Found.LoopLine = SM.getExpansionLineNumber(Loop->getBeginLoc());
  if (std::string Why = Writes.firstWrite(); !Why.empty())
    Found.NotProven = "the loop may change `" + Found.Tensor + "`: " + Why;
  return Found;
}

std::optional<InvariantElementReads>
invariantElementReads(TranslationUnitAnalysis &TU, const CallExpr *Item,
                      llvm::function_ref<bool(const CallExpr *)> Includes) {
  ASTContext &Ctx = TU.context();
  const SourceManager &SM = Ctx.getSourceManager();
  // `x[i].item<T>()`, x a variable, i a host integer.
  auto Element = [](const CallExpr *Read) { return itemReadTensor(Read, /*Whole=*/false); };
  const DeclRefExpr *Tensor = Element(Item);
  const Stmt *Loop = TU.enclosingLoop(Item);
  const FunctionDecl *FD = Loop ? enclosingFunction(Ctx, Loop) : nullptr;
  const FunctionValueFlow *Flow = FD ? TU.valueFlow(FD) : nullptr;
  if (!Tensor || !Flow || !Flow->invariantIn(Tensor, Loop) ||
      RegionWrites(TU, {Loop}, cast<VarDecl>(Tensor->getDecl()), nullptr).writesCopiedItself())
    return std::nullopt;
  InvariantElementReads Found;
  Found.Tensor = Tensor->getDecl()->getNameAsString();
  Found.HostName = Found.Tensor + "_host";
  Found.Loop = Loop;
  Found.LoopLine = SM.getExpansionLineNumber(Loop->getBeginLoc());
  // Every element read of the same variable in the loop (outside lambdas),
  // each seeing the same definition.
  std::vector<const DeclRefExpr *> Reads;
  for (const TranslationUnitAnalysis::CallSite &Site : TU.callSitesUnder(*Loop))
    if (const DeclRefExpr *Read = Site.InLambda ? nullptr : Element(Site.Call);
        Read && Read->getDecl() == Tensor->getDecl() && Flow->invariantIn(Read, Loop) &&
        Includes(Site.Call)) {
      Reads.push_back(Read);
      Found.Reads.push_back(Site.Call);
    }
  if (Found.Reads.empty() || !llvm::is_contained(Found.Reads, Item))
    return std::nullopt;
  Found.FirstLine = SM.getExpansionLineNumber(Found.Reads.front()->getExprLoc());
  if (Found.Reads.front() != Item)
    return Found; // the first read's fix carries the copy and every read
  Found.NotProven = RegionWrites(TU, {Loop}, cast<VarDecl>(Tensor->getDecl()), nullptr).firstWrite();
  if (!Found.NotProven.empty()) {
    Found.NotProven = "the loop may change `" + Found.Tensor + "`: " + Found.NotProven;
    return Found;
  }
  if (nameUsedIn(Ctx, FD->getBody(), Found.HostName) || !TU.claimName(FD, Found.HostName, Item)) {
    Found.NotProven = "`" + Found.HostName + "` is already a name in the function";
    return Found;
  }
  auto Insert = lineBefore(Ctx, Loop,
                           "auto " + Found.HostName + " = " + Found.Tensor + ".cpu()" +
                               insertedSyncMarker("copied once before the loop") + ";");
  if (const auto *Why = std::get_if<std::string>(&Insert)) {
    Found.NotProven = *Why;
    return Found;
  }
  Found.Edits.push_back(std::get<ASTEdit>(Insert));
  for (const DeclRefExpr *Read : Reads)
    Found.Edits.push_back(
        changeTo(charRange(CharSourceRange::getTokenRange(Read->getSourceRange())), cat(Found.HostName)));
  return Found;
}

namespace {

/// `auto host = x.cpu();` (or `to(<CPU>)`), alone in its declaration, copying
/// the variable X: the host copy's variable and the copy, or nulls.
std::pair<const VarDecl *, const CXXMemberCallExpr *> hostCopyOf(TranslationUnitAnalysis &TU, const Stmt *S,
                                                                 const VarDecl *X) {
  const auto *Declaration = dyn_cast<DeclStmt>(S);
  const auto *Host =
      Declaration && Declaration->isSingleDecl() ? dyn_cast<VarDecl>(Declaration->getSingleDecl()) : nullptr;
  if (!Host || !Host->hasLocalStorage() || Host->getType()->isReferenceType() ||
      !isTensorType(Host->getType()))
    return {nullptr, nullptr};
  const auto *Copy = dyn_cast_or_null<CXXMemberCallExpr>(ignoreWrappers(Host->getInit()));
  if (!Copy)
    return {nullptr, nullptr};
  llvm::StringRef Name = calleeName(Copy);
  bool ToHost =
      (Name == "cpu" && explicitArgCount(Copy) == 0) ||
      (Name == "to" && explicitArgCount(Copy) == 1 && isBlockingCopyToHost(Copy, TU.oracle(), TU.context()));
  const auto *Of = dyn_cast<DeclRefExpr>(ignoreWrappers(Copy->getImplicitObjectArgument()));
  if (!ToHost || !Of || Of->getDecl() != X)
    return {nullptr, nullptr};
  return {Host, Copy};
}

/// A statement in Region that may leave it other than by throwing: a return
/// or goto, or a break/continue not inside a loop (or, for break, a switch) of
/// the region; outside lambdas. nullptr when there is none.
const Stmt *earlyExitIn(llvm::ArrayRef<const Stmt *> Region) {
  std::function<const Stmt *(const Stmt *, bool, bool)> Find = [&](const Stmt *S, bool InLoop,
                                                                   bool InSwitch) -> const Stmt * {
    if (!S || isa<LambdaExpr>(S))
      return nullptr;
    if (isa<ReturnStmt, GotoStmt, CoreturnStmt>(S) || (isa<ContinueStmt>(S) && !InLoop) ||
        (isa<BreakStmt>(S) && !InLoop && !InSwitch))
      return S;
    bool Loop = isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(S);
    for (const Stmt *Child : S->children())
      if (const Stmt *Found = Find(Child, InLoop || Loop, InSwitch || isa<SwitchStmt>(S)))
        return Found;
    return nullptr;
  };
  for (const Stmt *S : Region)
    if (const Stmt *Found = Find(S, false, false))
      return Found;
  return nullptr;
}

} // namespace

std::optional<SharedHostCopy> sharedHostCopy(TranslationUnitAnalysis &TU, const CXXMemberCallExpr *Read) {
  ASTContext &Ctx = TU.context();
  const SourceManager &SM = Ctx.getSourceManager();
  // `x[i].item<T>()` or `x.item<T>()`, x a tensor variable, i a host integer.
  const DeclRefExpr *Ref = itemReadTensor(Read, /*Whole=*/true);
  const auto *X = Ref ? dyn_cast<VarDecl>(Ref->getDecl()) : nullptr;
  const FunctionDecl *FD = enclosingFunction(Ctx, Read);
  const FunctionValueFlow *Flow = FD ? TU.valueFlow(FD) : nullptr;
  if (!X || !isTensorType(X->getType()) || !Flow)
    return std::nullopt;

  // The nearest copy before the read's statement in a block around it; else
  // the first one after it in the innermost block that has one.
  const Stmt *Holder = nullptr;
  const VarDecl *Host = nullptr;
  const CXXMemberCallExpr *Copy = nullptr;
  const Stmt *CopyStatement = nullptr;
  llvm::SmallVector<const Stmt *, 8> Region;
  bool After = false;
  for (const CompoundStmt *Block = enclosingBlock(Ctx, Read, &Holder); Block && !Copy;
       Block = enclosingBlock(Ctx, Block, &Holder)) {
    auto Body = Block->body();
    const auto *At = llvm::find(Body, Holder);
    for (const auto *It = At; It != Body.begin() && !Copy;) {
      --It;
      std::tie(Host, Copy) = hostCopyOf(TU, *It, X);
      if (Copy) {
        CopyStatement = *It;
        Region.assign(It + 1, At + 1);
      }
    }
    for (const auto *It = At + 1; It != Body.end() && !Copy; ++It) {
      std::tie(Host, Copy) = hostCopyOf(TU, *It, X);
      if (Copy) {
        CopyStatement = *It;
        Region.assign(At, It);
        After = true;
      }
    }
    if (Block == FD->getBody())
      break;
  }
  if (!Copy)
    return std::nullopt;

  SharedHostCopy Found;
  Found.Tensor = X->getNameAsString();
  Found.Host = Host->getNameAsString();
  Found.CopyLine = SM.getExpansionLineNumber(Copy->getExprLoc());
  Found.CopyAfter = After;
  const Stmt *ReadLoop = TU.enclosingLoop(Read);
  Found.PerIteration = ReadLoop && !isUnder(Ctx, CopyStatement, ReadLoop);
  auto Unproven = [&](std::string Why) {
    Found.NotProven = std::move(Why);
    return Found;
  };
  llvm::StringRef Between = After ? "between the read and the copy" : "between the copy and the read";
  for (const ValueDefinition &Definition : Flow->definitions())
    if (Definition.Variable == X &&
        (Definition.How == ValueDefinition::Kind::Aliased || isUnderAny(Ctx, Definition.Site, Region)))
      return Unproven("`" + Found.Tensor + "` may be given another tensor " + Between.str());
  if (std::string Why = RegionWrites(TU, Region, X, Host).firstWrite(); !Why.empty())
    return Unproven("`" + Found.Tensor + "` may change " + Between.str() + ": " + Why);
  if (After) {
    if (const Stmt *Exit = earlyExitIn(Region))
      return Unproven("the code " + Between.str() + " may leave the block at line " +
                      std::to_string(SM.getExpansionLineNumber(Exit->getBeginLoc())) + " before the copy");
    if (llvm::any_of(Region, [&](const Stmt *S) { return nameUsedIn(Ctx, S, Found.Host); }))
      return Unproven("`" + Found.Host + "` names something else " + Between.str());
  } else {
    for (const Stmt *S : Region)
      if (std::string Why = hostWrittenIn(TU, Host, S, Between); !Why.empty())
        return Unproven(Why);
  }

  if (After) {
    // Marked as the tool's own copy, as a copy moved before a loop is: a second
    // run does not report it again (the fixed point).
    auto Moved = moveDeclarationBefore(Ctx, cast<DeclStmt>(CopyStatement), Copy, Region.front(),
                                       "the read's statement", "one copy for both reads");
    if (const auto *Why = std::get_if<std::string>(&Moved))
      return Unproven(*Why);
    Found.Edits = std::get<std::vector<ASTEdit>>(Moved);
  }
  Found.Edits.push_back(
      changeTo(charRange(CharSourceRange::getTokenRange(Ref->getSourceRange())), cat(Found.Host)));
  return Found;
}

} // namespace torch_syncfree

namespace torch_syncfree {

namespace {

/// The statements of the innermost block around both \p Earlier's statement and
/// \p Later, strictly after the one holding Earlier up to the one holding Later;
/// empty when Earlier is not a statement of a block around Later (or follows it).
llvm::SmallVector<const Stmt *, 8> statementsBetween(ASTContext &Ctx, const Stmt *Earlier,
                                                     const Stmt *Later) {
  const Stmt *Holder = nullptr;
  for (const CompoundStmt *Block = enclosingBlock(Ctx, Later, &Holder); Block;
       Block = enclosingBlock(Ctx, Block, &Holder)) {
    auto Body = Block->body();
    const auto *At = llvm::find(Body, Holder);
    const auto *From = llvm::find(Body, Earlier);
    if (From != Body.end())
      return From < At ? llvm::SmallVector<const Stmt *, 8>(From + 1, At + 1)
                       : llvm::SmallVector<const Stmt *, 8>();
  }
  return {};
}

/// Whether every value reaching \p Ref is a new, contiguous tensor: a factory's,
/// `clone()`'s or `contiguous()`'s (its data pointer reads what a copy's would).
bool knownContiguous(const FunctionValueFlow &Flow, const DeclRefExpr *Ref) {
  auto Values = Flow.assignmentsReaching(Ref->getDecl(), Ref);
  return Values && !Values->empty() && llvm::all_of(*Values, [](const ValueDefinition *Definition) {
           const auto *Call = dyn_cast_or_null<CallExpr>(ignoreWrappers(Definition->Value));
           llvm::StringRef Name = Call ? calleeName(Call) : "";
           return Call && isInTorchNamespace(Call->getDirectCallee()) &&
                  ((hasApiTrait(Name, Factory) && Name != "empty_strided" && Name != "from_blob") ||
                   Name == "clone" || Name == "contiguous");
         });
}

} // namespace

std::optional<HostOriginal> hostOriginal(TranslationUnitAnalysis &TU, const CXXMemberCallExpr *ReadBack) {
  ASTContext &Ctx = TU.context();
  const SourceManager &SM = Ctx.getSourceManager();
  // The read-back: `d.cpu()`, `d.to(<CPU>)`, `d.item<T>()`, `d[i].item<T>()`.
  llvm::StringRef Name = calleeName(ReadBack);
  bool Copy =
      (Name == "cpu" && explicitArgCount(ReadBack) == 0) ||
      (Name == "to" && explicitArgCount(ReadBack) == 1 && isBlockingCopyToHost(ReadBack, TU.oracle(), Ctx));
  if (!Copy && Name != "item")
    return std::nullopt;
  const auto *DeviceRef =
      Copy ? dyn_cast_or_null<DeclRefExpr>(ignoreWrappers(ReadBack->getImplicitObjectArgument()))
           : itemReadTensor(ReadBack, /*Whole=*/true);
  const auto *D = DeviceRef ? dyn_cast<VarDecl>(DeviceRef->getDecl()) : nullptr;
  const FunctionDecl *FD = enclosingFunction(Ctx, ReadBack);
  const FunctionValueFlow *Flow = FD ? TU.valueFlow(FD) : nullptr;
  if (!D || !Flow)
    return std::nullopt;
  // d's one definition: `h.to(<device>)` or `h.cuda()` of a CPU tensor h.
  auto Reaching = Flow->assignmentsReaching(D, DeviceRef);
  if (!Reaching || Reaching->size() != 1)
    return std::nullopt;
  const ValueDefinition &Definition = *Reaching->front();
  const auto *Upload = dyn_cast_or_null<CXXMemberCallExpr>(ignoreWrappers(Definition.Value));
  if (!Upload || !isInTorchNamespace(Upload->getDirectCallee()))
    return std::nullopt;
  llvm::StringRef UploadName = calleeName(Upload);
  // Any device: to the CPU, `to` returns h itself, and reading h is reading d.
  // `to(device, non_blocking)` too (what torch-sync-host-to-device's fix writes):
  // the device copy holds the same values once the stream reaches the read.
  unsigned UploadArgs = explicitArgCount(Upload);
  bool ToDevice = (UploadName == "cuda" && UploadArgs == 0) ||
                  (UploadName == "to" && plainDeviceArgument(Upload->getArg(0)) &&
                   (UploadArgs == 1 ||
                    (UploadArgs == 2 && Upload->getArg(1)->IgnoreImpCasts()->getType()->isBooleanType())));
  const auto *HostRef = dyn_cast_or_null<DeclRefExpr>(ignoreWrappers(Upload->getImplicitObjectArgument()));
  const auto *H = HostRef ? dyn_cast<VarDecl>(HostRef->getDecl()) : nullptr;
  if (!ToDevice || !H || !isTensorType(H->getType()) ||
      TU.oracle().tensorPlacement(HostRef) != Placement::Cpu)
    return std::nullopt;
  // The copy is a statement of a block around the read-back, before it.
  const Stmt *CopyStatement = Definition.Site;
  if (const auto *Parent = firstParent(Ctx, DynTypedNode::create(*CopyStatement)).get<DeclStmt>())
    CopyStatement = Parent;
  llvm::SmallVector<const Stmt *, 8> Region = statementsBetween(Ctx, CopyStatement, ReadBack);
  if (Region.empty())
    return std::nullopt;

  HostOriginal Found;
  Found.Device = D->getNameAsString();
  Found.Host = H->getNameAsString();
  Found.CopyLine = SM.getExpansionLineNumber(Upload->getExprLoc());
  auto Unproven = [&](std::string Why) {
    Found.NotProven = std::move(Why);
    return Found;
  };
  for (const ValueDefinition &Other : Flow->definitions())
    if ((Other.Variable == H || Other.Variable == D) &&
        (Other.How == ValueDefinition::Kind::Aliased || isUnderAny(Ctx, Other.Site, Region)))
      return Unproven("`" + Other.Variable->getNameAsString() +
                      "` may be given another tensor between the copy to the device and the read-back");
  for (const VarDecl *Tensor : {D, H})
    if (std::string Why = RegionWrites(TU, Region, Tensor, nullptr).firstWrite(); !Why.empty())
      return Unproven("`" + Tensor->getNameAsString() +
                      "` may change between the copy to the device and the "
                      "read-back: " +
                      Why);
  if (Copy) {
    // The read-back's result becomes h itself: it must only be read, through
    // a data pointer only when h's layout is a fresh copy's.
    const VarDecl *Result = initialisedVariable(Ctx, ReadBack);
    if (!Result || !Result->hasLocalStorage() || Result->getType()->isReferenceType())
      return Unproven("the copy's result is not held in a local variable");
    if (std::string Written = hostWrittenIn(TU, Result, FD->getBody(), "after the read-back");
        !Written.empty())
      return Unproven(Written + " (it would write `" + Found.Host + "`)");
    bool ReadsMemory = llvm::any_of(TU.referencesTo(*FD->getBody(), Result), [&](const DeclRefExpr *Use) {
      const auto *Member = dyn_cast_or_null<CXXMemberCallExpr>(consumerOf(Ctx, Use));
      return Member && calleeName(Member).contains("data_ptr");
    });
    if (ReadsMemory && !knownContiguous(*Flow, HostRef))
      return Unproven("the host reads the copy's memory through `data_ptr`, and `" + Found.Host +
                      "` may be laid out differently");
    Found.Edits.push_back(
        changeTo(charRange(CharSourceRange::getTokenRange(ReadBack->getSourceRange())), cat(Found.Host)));
    return Found;
  }
  Found.Edits.push_back(
      changeTo(charRange(CharSourceRange::getTokenRange(DeviceRef->getSourceRange())), cat(Found.Host)));
  return Found;
}

bool restructuringRemovesRead(TranslationUnitAnalysis &TU, const CXXMemberCallExpr *Read) {
  auto Proven = [](const auto &Found) { return Found && Found->NotProven.empty(); };
  if (Proven(hostOriginal(TU, Read)) || Proven(sharedHostCopy(TU, Read)))
    return true;
  auto Unmarked = [&](const CallExpr *Other) { return !isMarkedInsertedSync(Other, TU.context()); };
  std::optional<InvariantElementReads> Reads = invariantElementReads(TU, Read, Unmarked);
  if (!Reads)
    return false;
  // The first read's answer carries the proof.
  if (Reads->Reads.front() != Read)
    Reads = invariantElementReads(TU, Reads->Reads.front(), Unmarked);
  return Proven(Reads);
}

} // namespace torch_syncfree
