// The git commands of a run: the lines a change touches (--diff, --pre-commit)
// and a file as a ref had it (the baseline's entries the change gained).
#include "PrivateDirectory.h"
#include "batch/Batch.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include <cstdlib>
#include <set>
#include <unistd.h>

using namespace llvm;

namespace torch_syncfree {

std::optional<std::string> gitOutput(ArrayRef<StringRef> Arguments) {
  auto Git = sys::findProgramByName("git");
  SmallString<128> Output;
  int FD = -1;
  if (!Git || createPrivateTemporaryFile("torch-syncfree-git", "txt", FD, Output))
    return std::nullopt;
  ::close(FD);
  std::optional<StringRef> Redirects[] = {StringRef(""), StringRef(Output), StringRef("")};
  int Code = sys::ExecuteAndWait(*Git, Arguments, std::nullopt, Redirects);
  auto Text = MemoryBuffer::getFile(Output);
  removePrivateTemporaryFile(Output);
  if (Code != 0 || !Text)
    return std::nullopt;
  return (*Text)->getBuffer().str();
}

/// --pre-commit without --diff: which lines count. pre-commit passes the staged
/// files on a commit (then only the staged lines count: --diff=HEAD, the
/// unstaged changes being stashed), every file with --all-files or --files
/// (every line counts: a --diff=HEAD there passed every finding), and the
/// files changed in a range with --from-ref (its lines since that ref).
std::string preCommitDiffRef(const RunOptions &Options) {
  if (const char *From = getenv("PRE_COMMIT_FROM_REF"); From && *From && getenv("PRE_COMMIT_TO_REF"))
    return From;
  std::optional<std::string> Staged =
      gitOutput({"git", "diff", "--cached", "--name-only", "-z", "--no-renames", "--relative"});
  if (!Staged || Options.Sources.empty())
    return "";
  std::set<std::string> StagedFiles;
  for (StringRef Name : split(*Staged, '\0'))
    if (!Name.empty())
      StagedFiles.insert(Name.str());
  for (const std::string &File : Options.Sources) {
    SmallString<256> Normal(File);
    sys::path::remove_dots(Normal, /*remove_dot_dot=*/true);
    if (!StagedFiles.count(std::string(Normal)))
      return "";
  }
  return "HEAD";
}

std::string lineFilterFromGitDiff(StringRef Ref, std::string &Error) {
  auto Git = sys::findProgramByName("git");
  if (!Git) {
    Error = "--diff needs git on the PATH";
    return "";
  }
  SmallString<128> Output, TopOutput;
  int OutputFD = -1, TopFD = -1;
  if (createPrivateTemporaryFile("torch-syncfree-diff", "txt", OutputFD, Output) ||
      createPrivateTemporaryFile("torch-syncfree-top", "txt", TopFD, TopOutput)) {
    if (!Output.empty())
      ::close(OutputFD), removePrivateTemporaryFile(Output);
    Error = "--diff needs a writable temporary directory";
    return "";
  }
  ::close(OutputFD);
  ::close(TopFD);
  std::optional<StringRef> Redirects[] = {std::nullopt, StringRef(Output), StringRef("")};
  std::string RefArg = Ref.str();
  // The ref is a value, never an option: --end-of-options stops git from
  // reading `--output=<path>` (say) as one.
  int Code = sys::ExecuteAndWait(*Git, {"git", "diff", "-U0", "--no-color", "--end-of-options", RefArg, "--"},
                                 std::nullopt, Redirects);
  std::optional<StringRef> TopRedirects[] = {std::nullopt, StringRef(TopOutput), StringRef("")};
  sys::ExecuteAndWait(*Git, {"git", "rev-parse", "--show-toplevel"}, std::nullopt, TopRedirects);
  auto Diff = MemoryBuffer::getFile(Output);
  auto Top = MemoryBuffer::getFile(TopOutput);
  removePrivateTemporaryFile(Output);
  removePrivateTemporaryFile(TopOutput);
  if (Code != 0 || !Diff) {
    Error = "git diff " + Ref.str() + " failed (is it a git ref of this repository?)";
    return "";
  }
  std::string Root = Top ? (*Top)->getBuffer().trim().str() : "";
  json::Array Files;
  json::Array *Lines = nullptr;
  for (StringRef Line : split((*Diff)->getBuffer(), '\n')) {
    if (Line.consume_front("+++ ")) {
      Lines = nullptr;
      if (Line == "/dev/null")
        continue;
      Line.consume_front("b/");
      SmallString<256> Path(Root);
      sys::path::append(Path, Line);
      Files.push_back(json::Object{{"name", std::string(Path)}, {"lines", json::Array{}}});
      Lines = Files.back().getAsObject()->getArray("lines");
    } else if (Lines && Line.consume_front("@@ ")) {
      // @@ -a,b +c,d @@: lines c .. c+d-1 of the new file (d defaults to 1).
      StringRef New = Line.split(' ').second.split(' ').first;
      New.consume_front("+");
      unsigned Start = 0, Count = 1;
      auto [StartText, CountText] = New.split(',');
      StartText.getAsInteger(10, Start);
      if (!CountText.empty())
        CountText.getAsInteger(10, Count);
      if (Count > 0)
        Lines->push_back(json::Array{Start, Start + Count - 1});
    }
  }
  // A changed file with no added lines filters everything out of it: say so with
  // a line no file has rather than no ranges (no ranges would mean "all lines").
  const unsigned NoLine = 1000000000;
  for (json::Value &File : Files)
    if (File.getAsObject()->getArray("lines")->empty())
      File.getAsObject()->getArray("lines")->push_back(json::Array{NoLine, NoLine});
  if (Files.empty()) // nothing changed: a filter that matches no line
    Files.push_back(json::Object{{"name", "-"}, {"lines", json::Array{json::Array{NoLine, NoLine}}}});
  std::string Text;
  raw_string_ostream OS(Text);
  OS << json::Value(std::move(Files));
  return Text;
}

} // namespace torch_syncfree
