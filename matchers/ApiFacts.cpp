#include "ApiFacts.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include <cassert>
#include <vector>

namespace torch_syncfree {

namespace {

struct ApiFact {
  llvm::StringRef Name;
  unsigned Traits;
  /// The fully-qualified spellings matchers use, space-separated (where a check
  /// names the function's homes); each ends in `::Name`.
  llvm::StringRef Qualified = "";
};

// LibTorch's table. A name appears once, with all its traits.
constexpr unsigned Wait = WaitingOp, Dyn = DataDependentShape | WaitingOp, Linalg = WaitingOp | CheckedLinalg;
constexpr ApiFact Facts[] = {
    // Value reads and waiting ops (docs/catalog.md, measured on an H200).
    {"item", ValueRead},
    {"_local_scalar_dense", ValueRead},
    {"cpu", ValueRead | DeviceMove | KindPreserving},
    {"print", ValueRead},
    {"toString", ValueRead},
    {"is_nonzero", Wait | HostBool},
    {"equal", Wait | HostBool},
    {"allclose", Wait | HostBool},
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
    // Barriers (the CUDA runtime's are in the host table: RuntimeWait).
    {"synchronize", Barrier | Synchronize,
     "::torch::cuda::synchronize ::c10::cuda::CUDAStream::synchronize ::at::cuda::CUDAEvent::synchronize "
     "::c10::cuda::CUDAEvent::synchronize "
     "::c10::Stream::synchronize ::c10::Event::synchronize"},
    {"device_synchronize", Barrier | Synchronize, "::c10::cuda::device_synchronize"},
    {"clip_grad_norm_", Barrier | FloatingResult},
    // Waits that depend on the LibTorch version (`multinomial` below).
    {"index_put_", ValidatedOnHostBeforeV2},
    // Serialization: copies every GPU tensor to the host.
    {"save", SerializesToHost, "::torch::save"},
    // Completion queries: a loop polling one until it says done waits.
    {"query", CompletionQuery,
     "::at::cuda::CUDAEvent::query ::c10::cuda::CUDAEvent::query ::c10::cuda::CUDAStream::query "
     "::c10::Event::query ::c10::Stream::query"},
    // Stream switches: work queued after them runs on another stream.
    {"CUDAStreamGuard", SwitchesStream, "::c10::cuda::CUDAStreamGuard"},
    {"OptionalCUDAStreamGuard", SwitchesStream, "::c10::cuda::OptionalCUDAStreamGuard"},
    {"StreamGuard", SwitchesStream, "::c10::StreamGuard"},
    {"OptionalStreamGuard", SwitchesStream, "::c10::OptionalStreamGuard"},
    {"setCurrentCUDAStream", SwitchesStream, "::c10::cuda::setCurrentCUDAStream"},
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
    // Factories like a source tensor: its device unless the options name one
    // (TensorBody.h's `new_*`, ATen/ops' `*_like`, in 1.13 and 2.11 alike).
    {"new_empty", SourceDevice},
    {"new_empty_strided", SourceDevice},
    {"new_zeros", SourceDevice},
    {"new_ones", SourceDevice},
    {"new_full", SourceDevice},
    {"empty_like", SourceDevice},
    {"zeros_like", SourceDevice},
    {"ones_like", SourceDevice},
    {"full_like", SourceDevice},
    {"randint_like", SourceDevice},
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
    {"multinomial", IntegerResult | ValidatedOnHostBeforeV2},
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
    {"forward", FloatingResult | ModuleKeepsDevice},
    {"logsumexp", FloatingResult},
    {"randn_like", FloatingResult | SourceDevice},
    {"rand_like", FloatingResult | SourceDevice},
    {"dist", FloatingResult},
    {"cosine_similarity", FloatingResult},
    {"pairwise_distance", FloatingResult},
    // Shape reads: host integers, no wait.
    {"numel", ShapeRead},
    {"size", ShapeRead},
    // Views.
    {"operator[]", View},
    {"as_strided", View},
    {"unfold", View},
    // Views split off one tensor.
    {"split", SplitsIntoViews},
    {"chunk", SplitsIntoViews},
    {"unbind", SplitsIntoViews},
    {"tensor_split", SplitsIntoViews},
    {"split_with_sizes", SplitsIntoViews},
    // Check and assert macros (c10/util/Exception.h).
    {"TORCH_CHECK", CheckMacro},
    {"TORCH_CHECK_VALUE", CheckMacro},
    {"TORCH_CHECK_INDEX", CheckMacro},
    {"TORCH_CHECK_TYPE", CheckMacro},
    {"TORCH_CHECK_LINALG", CheckMacro},
    {"TORCH_CHECK_NOT_IMPLEMENTED", CheckMacro},
    {"TORCH_INTERNAL_ASSERT", CheckMacro},
    {"TORCH_INTERNAL_ASSERT_DEBUG_ONLY", CheckMacro},
    {"AT_ASSERT", CheckMacro},
    {"AT_ASSERTM", CheckMacro},
    {"TORCH_CHECK_WITH", CheckMacro | ErrorTypeFirst},
    // Warnings and the text they are built from.
    {"TORCH_WARN", WarningMacro},
    {"TORCH_WARN_ONCE", WarningMacro},
    {"C10_LOG_FIRST_N", WarningMacro},
    {"str", MessageText},
    {"_str", MessageText},
    {"_str_wrapper", MessageText},
    // torch::nn::Module methods that leave the module where it is (`forward` above).
    {"parameters", ModuleKeepsDevice | ModuleTensors},
    {"buffers", ModuleKeepsDevice | ModuleTensors},
    {"named_parameters", ModuleKeepsDevice},
    {"train", ModuleKeepsDevice},
    {"eval", ModuleKeepsDevice},
    {"is_training", ModuleKeepsDevice},
    {"zero_grad", ModuleKeepsDevice},
    {"pretty_print", ModuleKeepsDevice},
    {"name", ModuleKeepsDevice},
};

// The host table: names that are not LibTorch's. A name appears once, with all
// its traits (it may also be in LibTorch's table).
constexpr unsigned Logged = StdioOutput | LoggingFunction;
constexpr ApiFact HostFacts[] = {
    // The CUDA runtime: waits, then calls that leave no host access unordered.
    {"cudaDeviceSynchronize", RuntimeWait, "::cudaDeviceSynchronize"},
    {"cudaStreamSynchronize", RuntimeWait, "::cudaStreamSynchronize"},
    {"cudaEventSynchronize", RuntimeWait, "::cudaEventSynchronize"},
    {"cudaMemcpy", RuntimeWait, "::cudaMemcpy"},
    {"cudaMemcpyAsync", RuntimeStreamOrdered},
    {"cudaMemsetAsync", RuntimeStreamOrdered},
    {"cudaLaunchKernel", RuntimeStreamOrdered},
    {"cudaEventRecord", RuntimeStreamOrdered},
    {"cudaStreamWaitEvent", RuntimeStreamOrdered},
    {"cudaGetLastError", RuntimeStreamOrdered},
    {"cudaPeekAtLastError", RuntimeStreamOrdered},
    {"cudaSetDevice", RuntimeStreamOrdered},
    {"cudaGetDevice", RuntimeStreamOrdered},
    {"cudaEventCreate", RuntimeStreamOrdered},
    {"cudaEventDestroy", RuntimeStreamOrdered},
    {"cudaStreamCreate", RuntimeStreamOrdered},
    {"cudaStreamDestroy", RuntimeStreamOrdered},
    {"cudaGetErrorString", RuntimeStreamOrdered},
    {"cudaEventQuery", RuntimeQuery, "::cudaEventQuery"},
    {"cudaStreamQuery", RuntimeQuery, "::cudaStreamQuery"},
    // Timers and the release of host buffers.
    {"now", TimerOrRelease},
    {"cudaEventElapsedTime", TimerOrRelease},
    {"clock_gettime", TimerOrRelease},
    {"gettimeofday", TimerOrRelease},
    {"clock", TimerOrRelease},
    {"elapsed", TimerOrRelease},
    {"elapsed_time", TimerOrRelease},
    {"stop", TimerOrRelease},
    {"Stop", TimerOrRelease},
    {"reset", TimerOrRelease},
    {"free", TimerOrRelease},
    {"cudaFree", TimerOrRelease},
    {"cudaFreeHost", TimerOrRelease},
    // C stdio.
    {"printf", Logged},
    {"fprintf", Logged},
    {"puts", Logged},
    {"fputs", Logged},
    {"snprintf", Logged},
    {"sprintf", Logged},
    {"putchar", StdioOutput},
    {"fflush", StdioOutput},
    // Logging functions of std (C++20/23), {fmt}, spdlog and glog.
    {"print", LoggingFunction | SinkWord},
    {"println", LoggingFunction},
    {"format", LoggingFunction},
    {"info", LoggingFunction},
    {"debug", LoggingFunction},
    {"warn", LoggingFunction},
    {"warning", LoggingFunction},
    {"error", LoggingFunction},
    {"critical", LoggingFunction},
    {"trace", LoggingFunction},
    {"log", LoggingFunction | ValueTransforming | SinkWord},
    // Logging macros of glog and spdlog.
    {"LOG", LoggingMacro},
    {"VLOG", LoggingMacro},
    {"DLOG", LoggingMacro},
    {"LOG_IF", LoggingMacro},
    {"LOG_EVERY_N", LoggingMacro},
    {"LOG_FIRST_N", LoggingMacro},
    {"SPDLOG_INFO", LoggingMacro},
    {"SPDLOG_DEBUG", LoggingMacro},
    {"SPDLOG_WARN", LoggingMacro},
    {"SPDLOG_ERROR", LoggingMacro},
    {"SPDLOG_TRACE", LoggingMacro},
    // plog: `PLOG_INFO << v` streams into plog's own Record.
    {"PLOG", LoggingMacro},
    {"PLOG_VERBOSE", LoggingMacro},
    {"PLOG_DEBUG", LoggingMacro},
    {"PLOG_INFO", LoggingMacro},
    {"PLOG_WARNING", LoggingMacro},
    {"PLOG_ERROR", LoggingMacro},
    {"PLOG_FATAL", LoggingMacro},
    {"PLOG_NONE", LoggingMacro},
    {"PLOGV", LoggingMacro},
    {"PLOGD", LoggingMacro},
    {"PLOGI", LoggingMacro},
    {"PLOGW", LoggingMacro},
    {"PLOGE", LoggingMacro},
    {"PLOGF", LoggingMacro},
    {"PLOGN", LoggingMacro},
    // Metric writers (TensorBoard, MLflow).
    {"add_scalar", MetricWriter},
    {"add_scalars", MetricWriter},
    {"add_histogram", MetricWriter},
    {"log_scalar", MetricWriter},
    {"log_metric", MetricWriter},
    {"log_metrics", MetricWriter},
    // Math and conversions of the C and C++ libraries (`log` above).
    {"abs", ValueTransforming},
    {"fabs", ValueTransforming},
    {"sqrt", ValueTransforming},
    {"exp", ValueTransforming},
    {"log2", ValueTransforming},
    {"log10", ValueTransforming},
    {"pow", ValueTransforming},
    {"min", ValueTransforming},
    {"max", ValueTransforming},
    {"round", ValueTransforming},
    {"floor", ValueTransforming},
    {"ceil", ValueTransforming},
    {"isnan", ValueTransforming},
    {"isinf", ValueTransforming},
    {"isfinite", ValueTransforming},
    {"to_string", ValueTransforming},
    {"lround", ValueTransforming},
    {"llround", ValueTransforming},
    {"clamp", ValueTransforming},
    {"static_cast", ValueTransforming},
    // Words of a sink's name (`log`, `print` above).
    {"logs", SinkWord},
    {"record", SinkWord},
    {"update", SinkWord},
    {"add", SinkWord},
    {"report", SinkWord},
    {"track", SinkWord},
    {"observe", SinkWord},
    {"show", SinkWord},
    {"display", SinkWord},
    {"emit", SinkWord},
    {"metric", SinkWord},
    {"metrics", SinkWord},
    {"progress", SinkWord},
    {"stat", SinkWord},
    {"stats", SinkWord},
    {"tally", SinkWord},
    {"meter", SinkWord},
    {"summary", SinkWord},
    {"write", SinkWord},
    {"push", SinkWord},
    {"append", SinkWord},
    // Standard containers and what their methods do (analysis/Containers.h).
    {"vector", HostContainer | IndexedSequence},
    {"deque", HostContainer | IndexedSequence},
    {"array", HostContainer | IndexedSequence},
    {"list", HostContainer},
    {"map", HostContainer},
    {"unordered_map", HostContainer},
    {"push_back", ContainerAdd},
    {"emplace_back", ContainerAdd},
    {"insert", ContainerAdd},
    {"push_front", ContainerAdd},
    {"emplace", ContainerAdd},
    {"assign", ContainerAdd},
    {"resize", ContainerAdd},
    {"at", ContainerElement},
    {"front", ContainerElement},
    {"back", ContainerElement},
    {"operator[]", ContainerElement},
    {"value", ContainerElement},
    {"size", ContainerInspect},
    {"empty", ContainerInspect},
    {"capacity", ContainerInspect},
    {"has_value", ContainerInspect},
    {"begin", ContainerIterate},
    {"end", ContainerIterate},
    {"cbegin", ContainerIterate},
    {"cend", ContainerIterate},
    {"rbegin", ContainerIterate},
    {"rend", ContainerIterate},
    {"clear", ContainerRemove},
    {"pop_back", ContainerRemove},
    {"erase", ContainerRemove},
    {"reset", ContainerRemove},
    {"reserve", ContainerRemove},
    // Tuple builders of the standard library.
    {"make_tuple", TupleMaker},
    {"make_pair", TupleMaker},
    {"tie", TupleMaker},
    {"forward_as_tuple", TupleMaker},
};

/// A table indexed once: immutable after its thread-safe initialisation.
struct Index {
  llvm::StringMap<unsigned> ByName;
  llvm::DenseMap<unsigned, std::vector<llvm::StringRef>> ByTrait, QualifiedByTrait;
  Index(llvm::ArrayRef<ApiFact> Table, unsigned LastTrait) {
    for (const ApiFact &F : Table) {
      bool Inserted = ByName.insert({F.Name, F.Traits}).second;
      (void)Inserted;
      assert(Inserted && "a name appears once in its table");
      llvm::SmallVector<llvm::StringRef, 4> Spellings;
      F.Qualified.split(Spellings, ' ', -1, /*KeepEmpty=*/false);
      for (unsigned Bit = 1; Bit && Bit <= LastTrait; Bit <<= 1) {
        if (!(F.Traits & Bit))
          continue;
        ByTrait[Bit].push_back(F.Name);
        for (llvm::StringRef Spelling : Spellings) {
          assert(Spelling.ends_with(("::" + F.Name).str()) && "a spelling qualifies its name");
          QualifiedByTrait[Bit].push_back(Spelling);
        }
      }
    }
  }
  unsigned traits(llvm::StringRef Name) const {
    auto Found = ByName.find(Name);
    return Found == ByName.end() ? 0 : Found->second;
  }
  static llvm::ArrayRef<llvm::StringRef>
  lookUp(const llvm::DenseMap<unsigned, std::vector<llvm::StringRef>> &Map, unsigned Trait) {
    auto Found = Map.find(Trait);
    if (Found == Map.end())
      return {};
    return Found->second;
  }
};

const Index &index() {
  static const Index I(Facts, LastApiTrait);
  return I;
}

const Index &hostIndex() {
  static const Index I(HostFacts, LastHostApiTrait);
  return I;
}

} // namespace

unsigned apiTraits(llvm::StringRef Name) { return index().traits(Name); }

bool isElementwiseMethod(llvm::StringRef Name) {
  static constexpr llvm::StringLiteral Elementwise[] = {
      "gt",  "lt",         "ge",        "le",        "eq",    "ne",     "mul",     "add",    "sub",
      "div", "reciprocal", "abs",       "neg",       "exp",   "log",    "sqrt",    "square", "pow",
      "to",  "clamp",      "clamp_min", "clamp_max", "float", "double", "sigmoid", "tanh",   "relu"};
  return llvm::is_contained(Elementwise, Name);
}

DeviceKind deviceKindOfSpelling(llvm::StringRef Spelling) {
  // Device strings are lower case (`Device("CUDA")` throws); enumerators are
  // upper case, their constants prefixed with `k`.
  llvm::StringRef Name = Spelling.take_until([](char C) { return C == ':'; });
  if (Name == "cpu" || Name == "CPU" || Name == "kCPU")
    return DeviceKind::Cpu;
  if (Name == "cuda" || Name == "CUDA" || Name == "kCUDA")
    return DeviceKind::Cuda;
  return DeviceKind::Other;
}

llvm::ArrayRef<llvm::StringRef> namesWithTrait(ApiTrait Trait) {
  return Index::lookUp(index().ByTrait, Trait);
}

llvm::ArrayRef<llvm::StringRef> qualifiedNamesWithTrait(ApiTrait Trait) {
  return Index::lookUp(index().QualifiedByTrait, Trait);
}

unsigned hostApiTraits(llvm::StringRef Name) { return hostIndex().traits(Name); }

llvm::ArrayRef<llvm::StringRef> hostNamesWithTrait(HostApiTrait Trait) {
  return Index::lookUp(hostIndex().ByTrait, Trait);
}

llvm::ArrayRef<llvm::StringRef> qualifiedHostNamesWithTrait(HostApiTrait Trait) {
  return Index::lookUp(hostIndex().QualifiedByTrait, Trait);
}

bool isInPlaceName(llvm::StringRef Name) { return Name.size() > 1 && Name.ends_with("_"); }

bool mayWriteTensorMemory(llvm::StringRef Name) {
  return isInPlaceName(Name) || Name.contains("data_ptr") || Name.contains("accessor");
}

} // namespace torch_syncfree
