//===- analysis/Containers.cpp - What container operations do --------------===//
#include "analysis/Containers.h"

#include "clang/AST/DeclTemplate.h"
#include "llvm/ADT/StringSwitch.h"

using namespace clang;

namespace torch_syncfree {

ContainerOp containerOp(llvm::StringRef Name) {
  return llvm::StringSwitch<ContainerOp>(Name)
      .Cases({"push_back", "emplace_back", "insert", "push_front", "emplace", "assign", "resize"},
             ContainerOp::Add)
      .Cases({"at", "front", "back", "operator[]", "value"}, ContainerOp::ElementAccess)
      .Cases({"size", "empty", "capacity", "has_value"}, ContainerOp::Inspect)
      .Cases({"begin", "end", "cbegin", "cend", "rbegin", "rend"}, ContainerOp::Iterate)
      .Cases({"clear", "pop_back", "erase", "reset", "reserve"}, ContainerOp::Remove)
      .Default(ContainerOp::Unknown);
}

bool isStdContainer(QualType T, bool Maps, QualType *Element) {
  const auto *Record = T.getNonReferenceType()->getAsCXXRecordDecl();
  if (!Record || !Record->isInStdNamespace() || !Record->getDeclName().isIdentifier())
    return false;
  llvm::StringRef Name = Record->getName();
  bool Sequence = Name == "vector" || Name == "deque" || Name == "array";
  if (!Sequence && !(Maps && (Name == "list" || Name == "map" || Name == "unordered_map")))
    return false;
  if (Element) {
    *Element = QualType();
    const auto *Spec = dyn_cast<ClassTemplateSpecializationDecl>(Record);
    if (Sequence && Spec && Spec->getTemplateArgs().size() >= 1 &&
        Spec->getTemplateArgs()[0].getKind() == TemplateArgument::Type)
      *Element = Spec->getTemplateArgs()[0].getAsType();
  }
  return true;
}

} // namespace torch_syncfree
