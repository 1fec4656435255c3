#include "ApiFacts.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include <cassert>
#include <vector>

namespace torch_syncfree {

namespace {

struct ApiFact {
  llvm::StringRef Name;
  unsigned Traits;
};

// The table. A name appears once, with all its traits.
constexpr unsigned Wait = WaitingOp, Dyn = DataDependentShape | WaitingOp, Linalg = WaitingOp | CheckedLinalg;
const ApiFact Facts[] = {
    // Value reads and waiting ops (docs/catalog.md, measured on an H200).
    {"item", ValueRead},
    {"_local_scalar_dense", ValueRead},
    {"cpu", ValueRead | DeviceMove | KindPreserving},
    {"print", ValueRead},
    {"toString", ValueRead},
    {"is_nonzero", Wait},
    {"equal", Wait},
    {"allclose", Wait},
    {"masked_select", Wait | KindPreserving},
    {"linalg_inv", Linalg},
    {"linalg_cholesky", Linalg},
    {"linalg_solve", Linalg},
    {"inverse", Linalg},
    {"cholesky", Linalg},
    {"linalg_ldl_factor", Linalg},
    {"linalg_lu_factor", Linalg},
    {"linalg_inv_ex_checked", Linalg},
    // Data-dependent output sizes.
    {"nonzero", Dyn | IntegerResult},
    {"argwhere", Dyn | IntegerResult},
    {"unique", Dyn},
    {"_unique", Dyn},
    {"_unique2", Dyn},
    {"unique_consecutive", Dyn},
    {"unique_dim", Dyn},
    {"repeat_interleave", Dyn},
    {"bincount", Dyn | IntegerResult},
    {"histc", Dyn},
    // Barriers.
    {"synchronize", Barrier},
    {"device_synchronize", Barrier},
    {"cudaDeviceSynchronize", Barrier},
    {"cudaStreamSynchronize", Barrier},
    {"cudaEventSynchronize", Barrier},
    {"cudaMemcpy", Barrier},
    {"clip_grad_norm_", Barrier | FloatingResult},
    // Factories.
    {"zeros", Factory | DeterministicFill},
    {"ones", Factory | DeterministicFill},
    {"empty", Factory | DeterministicFill},
    {"full", Factory | DeterministicFill},
    {"rand", Factory},
    {"randn", Factory},
    {"randint", Factory},
    {"randperm", Factory | IntegerResult},
    {"arange", Factory | DeterministicFill},
    {"range", Factory | DeterministicFill},
    {"linspace", Factory | DeterministicFill},
    {"logspace", Factory | DeterministicFill},
    {"eye", Factory | DeterministicFill},
    {"tensor", Factory},
    {"scalar_tensor", Factory},
    {"from_blob", Factory},
    {"empty_strided", Factory},
    // Device moves.
    {"to", DeviceMove | CopyToDevice},
    {"cuda", DeviceMove | CopyToDevice | KindPreserving},
    // Bool results.
    {"gt", BoolResult},
    {"lt", BoolResult},
    {"ge", BoolResult},
    {"le", BoolResult},
    {"eq", BoolResult},
    {"ne", BoolResult},
    {"greater", BoolResult},
    {"less", BoolResult},
    {"greater_equal", BoolResult},
    {"less_equal", BoolResult},
    {"not_equal", BoolResult},
    {"logical_and", BoolResult},
    {"logical_or", BoolResult},
    {"logical_not", BoolResult},
    {"logical_xor", BoolResult},
    {"isnan", BoolResult},
    {"isinf", BoolResult},
    {"isfinite", BoolResult},
    {"isposinf", BoolResult},
    {"isneginf", BoolResult},
    {"isreal", BoolResult},
    {"signbit", BoolResult},
    {"isclose", BoolResult},
    {"any", BoolResult | FullReduction},
    {"all", BoolResult | FullReduction},
    {"bitwise_not", BoolResult},
    // Integer results.
    {"argmax", IntegerResult | FullReduction},
    {"argmin", IntegerResult | FullReduction},
    {"argsort", IntegerResult},
    {"searchsorted", IntegerResult},
    {"bucketize", IntegerResult},
    {"multinomial", IntegerResult},
    // (values, indices) pairs.
    {"topk", ValuesAndIndices},
    {"sort", ValuesAndIndices},
    {"max", ValuesAndIndices | KindPreserving | FullReduction},
    {"min", ValuesAndIndices | KindPreserving | FullReduction},
    {"kthvalue", ValuesAndIndices},
    {"mode", ValuesAndIndices},
    {"median", ValuesAndIndices | FullReduction},
    {"cummax", ValuesAndIndices},
    {"cummin", ValuesAndIndices},
    // Kind-preserving shape, order and selection ops.
    {"view", KindPreserving | View},
    {"reshape", KindPreserving | View},
    {"squeeze", KindPreserving | View},
    {"unsqueeze", KindPreserving | View},
    {"flatten", KindPreserving | View},
    {"clone", KindPreserving},
    {"detach", KindPreserving | View},
    {"contiguous", KindPreserving | View},
    {"t", KindPreserving | View},
    {"transpose", KindPreserving | View},
    {"permute", KindPreserving | View},
    {"expand", KindPreserving | View},
    {"index_select", KindPreserving},
    {"slice", KindPreserving | View},
    {"select", KindPreserving | View},
    {"narrow", KindPreserving | View},
    {"repeat", KindPreserving},
    {"index", KindPreserving | View},
    {"gather", KindPreserving},
    {"take", KindPreserving},
    {"flip", KindPreserving},
    {"roll", KindPreserving},
    {"amax", KindPreserving | FullReduction},
    {"amin", KindPreserving | FullReduction},
    {"abs", KindPreserving},
    {"neg", KindPreserving},
    {"clamp", KindPreserving},
    {"clamp_min", KindPreserving},
    {"clamp_max", KindPreserving},
    {"relu", KindPreserving},
    {"pin_memory", KindPreserving},
    {"expand_as", KindPreserving | View},
    {"view_as", KindPreserving | View},
    {"reshape_as", KindPreserving | View},
    // Full reductions.
    {"sum", FullReduction},
    {"mean", FullReduction | FloatingResult},
    {"prod", FullReduction},
    {"norm", FullReduction | FloatingResult},
    {"std", FullReduction | FloatingResult},
    {"var", FullReduction | FloatingResult},
    {"count_nonzero", FullReduction},
    // Losses.
    {"cross_entropy", Loss | FloatingResult},
    {"mse_loss", Loss | FloatingResult},
    {"nll_loss", Loss | FloatingResult},
    {"l1_loss", Loss | FloatingResult},
    {"smooth_l1_loss", Loss | FloatingResult},
    {"huber_loss", Loss | FloatingResult},
    {"binary_cross_entropy", Loss | FloatingResult},
    {"binary_cross_entropy_with_logits", Loss | FloatingResult},
    {"kl_div", Loss | FloatingResult},
    {"cross_entropy_loss", Loss},
    // Floating results.
    {"softmax", FloatingResult},
    {"log_softmax", FloatingResult},
    {"sigmoid", FloatingResult},
    {"tanh", FloatingResult},
    {"exp", FloatingResult},
    {"log", FloatingResult},
    {"sqrt", FloatingResult},
    {"rsqrt", FloatingResult},
    {"matmul", FloatingResult},
    {"mm", FloatingResult},
    {"bmm", FloatingResult},
    {"linear", FloatingResult},
    {"conv1d", FloatingResult},
    {"conv2d", FloatingResult},
    {"conv3d", FloatingResult},
    {"forward", FloatingResult},
    {"logsumexp", FloatingResult},
    {"randn_like", FloatingResult},
    {"rand_like", FloatingResult},
    {"dist", FloatingResult},
    {"cosine_similarity", FloatingResult},
    {"pairwise_distance", FloatingResult},
    // Views.
    {"operator[]", View},
    {"as_strided", View},
    {"unfold", View},
};

/// The table indexed once: immutable after its thread-safe initialisation.
struct Index {
  llvm::StringMap<unsigned> ByName;
  llvm::DenseMap<unsigned, std::vector<llvm::StringRef>> ByTrait;
  Index() {
    for (const ApiFact &F : Facts) {
      bool Inserted = ByName.insert({F.Name, F.Traits}).second;
      (void)Inserted;
      assert(Inserted && "a name appears once in the table");
      for (unsigned Bit = 1; Bit && Bit <= LastApiTrait; Bit <<= 1)
        if (F.Traits & Bit)
          ByTrait[Bit].push_back(F.Name);
    }
  }
};

const Index &index() {
  static const Index I;
  return I;
}

} // namespace

unsigned apiTraits(llvm::StringRef Name) {
  auto Found = index().ByName.find(Name);
  return Found == index().ByName.end() ? 0 : Found->second;
}

llvm::ArrayRef<llvm::StringRef> namesWithTrait(ApiTrait Trait) {
  auto Found = index().ByTrait.find(Trait);
  if (Found == index().ByTrait.end())
    return {};
  return Found->second;
}

bool isInPlaceName(llvm::StringRef Name) { return Name.size() > 1 && Name.ends_with("_"); }

bool mayWriteTensorMemory(llvm::StringRef Name) {
  return isInPlaceName(Name) || Name.contains("data_ptr") || Name.contains("accessor");
}

} // namespace torch_syncfree
