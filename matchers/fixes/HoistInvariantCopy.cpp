#include "fixes/HoistInvariantCopy.h"
#include "ApiFacts.h"
#include "TensorStorage.h"
#include "TorchApi.h"
#include "analysis/ValueFlow.h"
#include "utils/AstWalk.h"
#include "utils/SourceText.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
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
  if (Parent.get<ArraySubscriptExpr>()) {
    const auto *Read = dyn_cast_or_null<ImplicitCastExpr>(firstParent(Ctx, Parent).get<Stmt>());
    return Read && Read->getCastKind() == CK_LValueToRValue;
  }
  if (const auto *Held = Parent.get<VarDecl>())
    return Held->getType()->isPointerType() && Held->getType()->getPointeeType().isConstQualified();
  return false;
}

/// The question "may this write the copied tensor's memory", for one loop.
class LoopWrites {
public:
  /// \p Copied: the variable whose memory must stay as it is; \p Host: the
  /// host copy (nullptr: none declared yet).
  LoopWrites(TranslationUnitAnalysis &TU, const Stmt *Loop, const VarDecl *Copied, const VarDecl *Host)
      : TU(TU), Ctx(TU.context()), Loop(Loop), Copied(Copied), Host(Host) {
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

  /// Why something in the loop may write a tensor made outside it; empty when nothing can.
  std::string firstWrite() {
    for (const TranslationUnitAnalysis::CallSite &Site : TU.callSitesUnder(*Loop))
      if (std::string Why = writeBy(Site.Call); !Why.empty())
        return Why;
    return "";
  }

private:
  const FunctionValueFlow *flowOf(const VarDecl *VD) {
    const auto *Parent = VD ? firstParent(Ctx, DynTypedNode::create(*VD)).get<Stmt>() : nullptr;
    const FunctionDecl *FD = Parent ? enclosingFunction(Ctx, Parent) : enclosingFunction(Ctx, Loop);
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

  /// A tensor this function makes apart from the copied one: made in the loop
  /// (a new allocation each iteration, or a view of one), or anywhere in the
  /// function when the copied tensor owns its memory; or the host copy itself.
  bool madeApart(const VarDecl *VD, unsigned Depth = 0) {
    if (!VD || Depth > 8 || VD == Copied)
      return false;
    if (VD == Host)
      return true;
    const auto *Parent = dyn_cast_or_null<DeclStmt>(firstParent(Ctx, DynTypedNode::create(*VD)).get<Stmt>());
    if (!Parent || isa<ParmVarDecl>(VD) || VD->getType()->isReferenceType() ||
        (!CopiedOwnsMemory && !isUnder(Ctx, Parent, Loop)))
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
          SM.isPointWithin(SM.getExpansionLoc(Lambda->getLocation()), SM.getExpansionLoc(Loop->getBeginLoc()),
                           SM.getExpansionLoc(Loop->getEndLoc())))
        return ""; // a lambda written in the loop: its calls are among the loop's
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
  const Stmt *Loop;
  const VarDecl *Copied;
  const VarDecl *Host;
  bool CopiedOwnsMemory = false;
};

/// Why the host copy may be written in the loop (its next iteration would then
/// read the written values, not a fresh copy); empty when it is only read.
std::string hostWrittenInLoop(TranslationUnitAnalysis &TU, const VarDecl *Host, const Stmt *Body) {
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
      return "`" + Host->getNameAsString() + "` is written in the loop (`" + Name.str() + "`)";
    }
    if (const auto *Call = dyn_cast_or_null<CallExpr>(User); Call && !isa<CXXMemberCallExpr>(Call)) {
      llvm::StringRef Name = calleeName(Call);
      if (const auto *Op = dyn_cast<CXXOperatorCallExpr>(Call); Op && Op->isAssignmentOp())
        return "`" + Host->getNameAsString() + "` is written in the loop";
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
    return "`" + Host->getNameAsString() + "` is kept elsewhere in the loop";
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

/// The edit that inserts \p Line (no newline) on a line of its own before the
/// loop, at its indentation; or why it cannot.
std::variant<ASTEdit, std::string> lineBeforeLoop(ASTContext &Ctx, const Stmt *Loop,
                                                  const std::string &Line) {
  const SourceManager &SM = Ctx.getSourceManager();
  if (!firstParent(Ctx, DynTypedNode::create(*Loop)).get<CompoundStmt>())
    return std::string("the loop is not a statement of a block");
  if (Loop->getBeginLoc().isMacroID())
    return std::string("the loop is written in a macro");
  auto [Start, Alone] = lineStart(SM, Loop->getBeginLoc());
  if (!Alone)
    return std::string("the loop shares its line with other code");
  std::string Indent = Lexer::getIndentationForLine(Loop->getBeginLoc(), SM).str();
  return insertBefore(
      [Start = Start](const ast_matchers::MatchFinder::MatchResult &) -> llvm::Expected<CharSourceRange> {
        return CharSourceRange::getCharRange(Start, Start);
      },
      cat(Indent + Line + "\n"));
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
  const LangOptions &LO = Ctx.getLangOpts();
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
  if (!Copied || !isa<VarDecl>(Copied->getDecl()) || !Flow || !Flow->invariantIn(Copied, Loop))
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
  Found.NotProven = LoopWrites(TU, Loop, cast<VarDecl>(Copied->getDecl()), Host).firstWrite();
  if (!Found.NotProven.empty())
    Found.NotProven = "the loop may change `" + Found.Tensor + "`: " + Found.NotProven;
  else if (std::string Written = hostWrittenInLoop(TU, Host, Block); !Written.empty())
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
  SourceLocation DeclBegin = Declaration->getBeginLoc(), DeclEnd = Declaration->getEndLoc();
  if (DeclBegin.isMacroID() || DeclEnd.isMacroID() || Copy->getEndLoc().isMacroID())
    return Unproven("the loop is written in a macro");
  auto [DeclLine, DeclAlone] = lineStart(SM, DeclBegin);
  SourceLocation AfterDecl = Lexer::getLocForEndOfToken(DeclEnd, 0, SM, LO);
  std::pair<FileID, unsigned> After = SM.getDecomposedLoc(AfterDecl);
  StringRef Buffer = SM.getBufferData(After.first);
  size_t LineEnd = Buffer.find('\n', After.second);
  bool RestBlank = LineEnd != StringRef::npos &&
                   Buffer.slice(After.second, LineEnd).find_first_not_of(" \t\r") == StringRef::npos;
  if (!DeclAlone || !RestBlank)
    return Unproven("the declaration shares its line with other code");
  // The moved text, with the marker after the copy.
  SourceLocation CopyEnd = Lexer::getLocForEndOfToken(Copy->getEndLoc(), 0, SM, LO);
  std::string Before = Lexer::getSourceText(CharSourceRange::getCharRange(DeclBegin, CopyEnd), SM, LO).str();
  std::string Rest = Lexer::getSourceText(CharSourceRange::getCharRange(CopyEnd, AfterDecl), SM, LO).str();
  if (Before.empty() || Rest.empty())
    return Unproven("the declaration is not spelled in one file");
  auto Insert = lineBeforeLoop(Ctx, Loop, Before + insertedSyncMarker("copied once before the loop") + Rest);
  if (const auto *Why = std::get_if<std::string>(&Insert))
    return Unproven(*Why);
  // From the newline before the declaration's line to its end: a range that
  // ended at the next line's first column would be extended over its first
  // character when made a file range.
  Found.Edits.push_back(remove(charRange(CharSourceRange::getCharRange(
      DeclLine.getLocWithOffset(-1), AfterDecl.getLocWithOffset(static_cast<int>(LineEnd - After.second))))));
  Found.Edits.push_back(std::get<ASTEdit>(Insert));
  return Found;
}

std::optional<InvariantElementReads>
invariantElementReads(TranslationUnitAnalysis &TU, const CallExpr *Item,
                      llvm::function_ref<bool(const CallExpr *)> Includes) {
  ASTContext &Ctx = TU.context();
  const SourceManager &SM = Ctx.getSourceManager();
  // `x[i].item<T>()`, x a variable, i a host integer.
  auto Element = [](const CallExpr *Read) -> const DeclRefExpr * {
    const auto *Member = dyn_cast<CXXMemberCallExpr>(Read);
    if (!Member || calleeName(Member) != "item")
      return nullptr;
    const auto *Subscript =
        dyn_cast_or_null<CXXOperatorCallExpr>(ignoreWrappers(Member->getImplicitObjectArgument()));
    if (!Subscript || Subscript->getOperator() != OO_Subscript || Subscript->getNumArgs() != 2 ||
        !Subscript->getArg(1)->IgnoreImpCasts()->getType()->isIntegralOrEnumerationType())
      return nullptr;
    const auto *Tensor = dyn_cast<DeclRefExpr>(ignoreWrappers(Subscript->getArg(0)));
    return Tensor && isa<VarDecl>(Tensor->getDecl()) && isTensorType(Tensor->getType()) ? Tensor : nullptr;
  };
  const DeclRefExpr *Tensor = Element(Item);
  const Stmt *Loop = TU.enclosingLoop(Item);
  const FunctionDecl *FD = Loop ? enclosingFunction(Ctx, Loop) : nullptr;
  const FunctionValueFlow *Flow = FD ? TU.valueFlow(FD) : nullptr;
  if (!Tensor || !Flow || !Flow->invariantIn(Tensor, Loop))
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
  Found.NotProven = LoopWrites(TU, Loop, cast<VarDecl>(Tensor->getDecl()), nullptr).firstWrite();
  if (!Found.NotProven.empty()) {
    Found.NotProven = "the loop may change `" + Found.Tensor + "`: " + Found.NotProven;
    return Found;
  }
  if (nameUsedIn(Ctx, FD->getBody(), Found.HostName) || !TU.claimName(FD, Found.HostName)) {
    Found.NotProven = "`" + Found.HostName + "` is already a name in the function";
    return Found;
  }
  auto Insert = lineBeforeLoop(Ctx, Loop,
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

} // namespace torch_syncfree
