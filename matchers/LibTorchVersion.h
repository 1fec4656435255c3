// The LibTorch release a translation unit is compiled against, as its headers'
// `TORCH_VERSION_MAJOR` / `TORCH_VERSION_MINOR` (<torch/version.h>) say: some
// calls wait for the GPU on one release and not on another (ApiFacts'
// ValidatedOnHostBeforeV2). A leaf header: the TU's analysis keeps the version.
#ifndef TORCH_SYNCFREE_LIBTORCHVERSION_H
#define TORCH_SYNCFREE_LIBTORCHVERSION_H

#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>

namespace clang {
class Preprocessor;
}

namespace torch_syncfree {

/// A LibTorch release, as `TORCH_VERSION_MAJOR` / `TORCH_VERSION_MINOR` of
/// <torch/version.h> name it.
struct LibTorchVersion {
  unsigned Major = 0, Minor = 0;
  bool operator<(const LibTorchVersion &Other) const {
    return Major != Other.Major ? Major < Other.Major : Minor < Other.Minor;
  }
  std::string str() const { return std::to_string(Major) + "." + std::to_string(Minor); }
};
/// The newest release the tool's catalog was measured on (docs/catalog.md): what
/// it assumes when neither the headers nor the `LibTorchVersion` option say.
constexpr LibTorchVersion NewestKnownLibTorch = {2, 11};
/// The version the headers of a TU define through `TORCH_VERSION_MAJOR` and
/// `TORCH_VERSION_MINOR` (read from the macro table as it stands: at the end of
/// the TU when the checks run), or nullopt when they are not both defined as
/// integers (a unit that includes <ATen/ATen.h> or <torch/script.h> alone does
/// not include <torch/version.h>).
std::optional<LibTorchVersion> libTorchVersionFromMacros(clang::Preprocessor &PP);
/// "1.13" or "2.11.0" -> the version; nullopt for anything else.
std::optional<LibTorchVersion> parseLibTorchVersion(llvm::StringRef Text);

} // namespace torch_syncfree

#endif
