#include "CheckCatalog.h"

namespace torch_syncfree {

// Built from Checks.def, the one list of checks (the module registers from it too).
static const CheckInfo Catalog[] = {
#define TORCH_SYNC_CHECK(Class, Name, Summary, Level) {Name, Summary, "docs/checks/" Name ".md", Level},
#include "Checks.def"
};

llvm::ArrayRef<CheckInfo> checkCatalog() { return Catalog; }

const CheckInfo *findCheck(llvm::StringRef Name) {
  for (const CheckInfo &Info : Catalog)
    if (Info.Name == Name)
      return &Info;
  return nullptr;
}

} // namespace torch_syncfree
