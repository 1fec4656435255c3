#include "ConfigAudit.h"

#include "clang-tidy/GlobList.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"
#include <set>

using namespace clang::tidy;

namespace torch_syncfree {

static bool fromRepository(const ClangTidyOptionsProvider::OptionsSource &Source) {
  llvm::StringRef Name = Source.second;
  return Name != ClangTidyOptionsProvider::OptionsSourceTypeDefaultBinary &&
         Name != ClangTidyOptionsProvider::OptionsSourceTypeCheckCommandLineOption &&
         Name != ClangTidyOptionsProvider::OptionsSourceTypeConfigCommandLineOption;
}

/// The merge of every source but Skip (clang-tidy's order: defaults, the
/// configuration files from the outermost in, the command line).
static ClangTidyOptions mergedWithout(const std::vector<ClangTidyOptionsProvider::OptionsSource> &Sources,
                                      size_t Skip) {
  ClangTidyOptions Result;
  for (size_t I = 0; I < Sources.size(); ++I)
    if (I != Skip)
      Result.mergeWith(Sources[I].first, I);
  return Result;
}

static bool torchSyncOption(llvm::StringRef Key) {
  return Key.starts_with("torch-sync-") || !Key.contains('.');
}

std::vector<ConfigNotice> auditRepositoryConfig(ClangTidyOptionsProvider &Provider,
                                                llvm::ArrayRef<std::string> Files,
                                                llvm::ArrayRef<llvm::StringRef> CheckNames) {
  std::vector<ConfigNotice> Notices;
  std::set<std::pair<std::string, std::string>> Seen;
  llvm::StringSet<> Directories;
  for (const std::string &File : Files) {
    // Configuration files apply per directory.
    if (!Directories.insert(llvm::sys::path::parent_path(File)).second)
      continue;
    std::vector<ClangTidyOptionsProvider::OptionsSource> Sources = Provider.getRawOptions(File);
    ClangTidyOptions All = mergedWithout(Sources, Sources.size());
    GlobList Enabled(All.Checks.value_or(""));
    for (size_t I = 0; I < Sources.size(); ++I) {
      if (!fromRepository(Sources[I]))
        continue;
      const ClangTidyOptions &Own = Sources[I].first;
      ClangTidyOptions Without = mergedWithout(Sources, I);
      GlobList EnabledWithout(Without.Checks.value_or(""));
      std::vector<std::string> Disabled;
      for (llvm::StringRef Check : CheckNames)
        if (EnabledWithout.contains(Check) && !Enabled.contains(Check))
          Disabled.push_back(Check.str());
      std::vector<std::string> Set;
      for (const auto &[Key, Value] : Own.CheckOptions) {
        if (!torchSyncOption(Key))
          continue;
        auto Final = All.CheckOptions.find(Key);
        auto Before = Without.CheckOptions.find(Key);
        bool Holds = Final != All.CheckOptions.end() && Final->second.Value == Value.Value;
        bool Changes = Before == Without.CheckOptions.end() || Before->second.Value != Value.Value;
        if (Holds && Changes)
          Set.push_back((Key + ": " + Value.Value).str());
      }
      llvm::sort(Set);
      // Settings other than the checks' that change what is reported: which
      // headers' findings are shown (HeaderFilterRegex: '^$' hid every header
      // finding without a word), system headers, the file kinds, and the
      // arguments added to or removed from every compile command.
      std::vector<std::string> Scope;
      auto Quoted = [](llvm::StringRef Text) { return "'" + Text.str() + "'"; };
      auto Joined = [&](const std::vector<std::string> &Items) {
        std::vector<std::string> Q;
        for (const std::string &Item : Items)
          Q.push_back(Quoted(Item));
        return "[" + llvm::join(Q, ", ") + "]";
      };
      auto Scalar = [&](llvm::StringRef Name, const auto &OwnValue, const auto &FinalValue,
                        const auto &WithoutValue, auto Show) {
        if (OwnValue && FinalValue == OwnValue && WithoutValue != OwnValue)
          Scope.push_back((Name + ": " + Show(*OwnValue)).str());
      };
      Scalar("HeaderFilterRegex", Own.HeaderFilterRegex, All.HeaderFilterRegex,
             Without.HeaderFilterRegex, Quoted);
      Scalar("ExcludeHeaderFilterRegex", Own.ExcludeHeaderFilterRegex, All.ExcludeHeaderFilterRegex,
             Without.ExcludeHeaderFilterRegex, Quoted);
      Scalar("SystemHeaders", Own.SystemHeaders, All.SystemHeaders, Without.SystemHeaders,
             [](bool B) { return std::string(B ? "true" : "false"); });
      Scalar("HeaderFileExtensions", Own.HeaderFileExtensions, All.HeaderFileExtensions,
             Without.HeaderFileExtensions, Joined);
      Scalar("ImplementationFileExtensions", Own.ImplementationFileExtensions,
             All.ImplementationFileExtensions, Without.ImplementationFileExtensions, Joined);
      // Argument lists are appended by each source, never replaced.
      for (auto [Name, List] : {std::pair<llvm::StringRef, const std::optional<ClangTidyOptions::ArgList> *>(
                                    "ExtraArgs", &Own.ExtraArgs),
                                {"ExtraArgsBefore", &Own.ExtraArgsBefore},
                                {"RemovedArgs", &Own.RemovedArgs}})
        if (*List && !(*List)->empty())
          Scope.push_back((Name + ": " + Joined(**List)).str());
      for (std::string &Item : Scope)
        Set.push_back(std::move(Item));
      std::string Path = Sources[I].second;
      auto Add = [&](std::string Message) {
        if (Seen.insert({Path, Message}).second)
          Notices.push_back({Path, std::move(Message)});
      };
      if (!Disabled.empty())
        Add("disables " + llvm::join(Disabled, ", ") + " (Checks: '" +
            Own.Checks.value_or("") + "')");
      if (!Set.empty())
        Add("sets " + llvm::join(Set, ", "));
    }
  }
  return Notices;
}

} // namespace torch_syncfree
