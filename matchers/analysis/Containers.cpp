//===- analysis/Containers.cpp - What container operations do --------------===//
#include "analysis/Containers.h"

#include "ApiFacts.h"

#include "clang/AST/DeclTemplate.h"

using namespace clang;

namespace torch_syncfree {

ContainerOp containerOp(llvm::StringRef Name) {
  unsigned Traits = hostApiTraits(Name);
  if (Traits & ContainerAdd)
    return ContainerOp::Add;
  if (Traits & ContainerElement)
    return ContainerOp::ElementAccess;
  if (Traits & ContainerInspect)
    return ContainerOp::Inspect;
  if (Traits & ContainerIterate)
    return ContainerOp::Iterate;
  if (Traits & ContainerRemove)
    return ContainerOp::Remove;
  return ContainerOp::Unknown;
}

bool isStdContainer(QualType T, bool Maps, QualType *Element) {
  const auto *Record = T.getNonReferenceType()->getAsCXXRecordDecl();
  if (!Record || !Record->isInStdNamespace() || !Record->getDeclName().isIdentifier())
    return false;
  unsigned Traits = hostApiTraits(Record->getName());
  bool Sequence = Traits & IndexedSequence;
  if (!Sequence && !(Maps && (Traits & HostContainer)))
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
