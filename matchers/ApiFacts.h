// What the engine knows about functions, methods and macros by name, in one
// file (ApiFacts.cpp) with two tables. LibTorch's (ApiTrait): which calls read a
// value to the host, which wait, which have data-dependent output sizes, which
// make tensors, move them between devices, write them in place, what element
// kind or rank their results have, and which macros check or log. The host's
// (HostApiTrait): names that are not LibTorch's but decide a finding (the CUDA
// runtime, C stdio, std math, logging libraries, timers, standard containers).
// The checks and analyses ask here; no other file keeps its own list of names.
// Measured facts (which calls wait on an H200) are in docs/catalog.md and
// ../shared/reference/sync-probe-libtorch-2.11-h200.md.
#ifndef TORCH_SYNCFREE_APIFACTS_H
#define TORCH_SYNCFREE_APIFACTS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace torch_syncfree {

enum ApiTrait : unsigned {
  /// Reads a tensor's value on the host (`item`, `cpu`, `print`): waits.
  ValueRead = 1u << 0,
  /// A tensor op that waits for the GPU (a host decision inside LibTorch).
  WaitingOp = 1u << 1,
  /// The output's size is computed from the data (waits; `where` with one argument too).
  DataDependentShape = 1u << 2,
  /// A device-wide or stream barrier (the CUDA runtime's are RuntimeWait).
  Barrier = 1u << 3,
  /// Makes a new tensor from sizes or values, on the CPU unless its options name a device.
  Factory = 1u << 4,
  /// A factory whose contents do not depend on the device it runs on.
  DeterministicFill = 1u << 5,
  /// Moves or copies a tensor to another device (`to`, `cuda`, `cpu`).
  DeviceMove = 1u << 6,
  /// Copies toward the device named by its argument (`to`, `cuda`).
  CopyToDevice = 1u << 7,
  /// The result is a bool tensor (a comparison, a predicate).
  BoolResult = 1u << 8,
  /// The result is an integer tensor (indices, counts).
  IntegerResult = 1u << 9,
  /// Returns (values, indices): `std::get<1>` of it is an integer tensor.
  ValuesAndIndices = 1u << 10,
  /// Keeps the element kind of its input (shape, order and selection ops).
  KindPreserving = 1u << 11,
  /// Called as `x.op()` with no arguments, reduces to a 0-dim tensor.
  FullReduction = 1u << 12,
  /// A loss: with its default reduction (mean) the result is 0-dim.
  Loss = 1u << 13,
  /// The result is floating whatever the input (means, norms, losses, layers).
  FloatingResult = 1u << 14,
  /// The result shares its base's memory (a view: slicing, reshaping).
  View = 1u << 15,
  /// A linear-algebra op that checks its result's info on the host (waits), and
  /// has an `_ex` variant that does not (torch-sync-checked-linalg).
  CheckedLinalg = 1u << 16,
  /// Turns tensor values into a host `bool` (`equal`, `allclose`, `is_nonzero`):
  /// waits (torch-sync-host-bool).
  HostBool = 1u << 17,
  /// An explicit synchronize of the device, a stream or an event
  /// (torch-sync-explicit-sync matches its qualifiedNamesWithTrait spellings).
  Synchronize = 1u << 18,
  /// Splits a tensor into views of it (`split`, `chunk`, `unbind`).
  SplitsIntoViews = 1u << 19,
  /// A check or assert macro: its arguments after the condition only build the
  /// failure's message (`TORCH_CHECK(cond, "msg", v)`).
  CheckMacro = 1u << 20,
  /// A check macro whose first argument is the error type, the condition second
  /// (`TORCH_CHECK_WITH`).
  ErrorTypeFirst = 1u << 21,
  /// A warning or logging macro: a value in its arguments is only logged (`TORCH_WARN`).
  WarningMacro = 1u << 22,
  /// Builds the text of a warning or message (`c10::str`): a value passed on is only logged.
  MessageText = 1u << 23,
  /// A torch::nn::Module method that neither moves nor loads its parameters
  /// (`forward`, `parameters`, `eval`): the module stays where it is.
  ModuleKeepsDevice = 1u << 24,
  /// A torch::nn::Module method that returns its tensors (`parameters`,
  /// `buffers`): they are where the module is.
  ModuleTensors = 1u << 25,
  /// Makes a tensor like its source tensor (`x.new_zeros(...)`, `zeros_like(x, ...)`):
  /// on the source's device unless its options name one.
  SourceDevice = 1u << 26,
  /// Reads a tensor's shape, not its values (`numel()`, `size(d)`): a host integer.
  ShapeRead = 1u << 27,
  /// Waits on LibTorch 1.x only, in a check of its arguments that later versions
  /// moved to the device (issue 43, item 3): `index_put_` with `accumulate=true`
  /// range-checks its indices with `item()`, `multinomial` without replacement
  /// validates its probabilities with `item()` inside `TORCH_CHECK` (read in
  /// 1.13's ATen sources; 2.x checks with `_assert_async`, measured on 2.11).
  /// The checks that report them ask for the TU's version
  /// (SyncCheck::libTorchVersion); the condition on the arguments is theirs.
  ValidatedOnHostBeforeV2 = 1u << 28,
  /// Writes tensors or modules to a file or stream (`torch::save`): every GPU
  /// tensor it holds is copied to the host first, a blocking copy each, on every
  /// version (torch-sync-device-to-host).
  SerializesToHost = 1u << 29,
  /// A query of whether the GPU work behind an event or stream is done
  /// (`CUDAEvent::query`, `CUDAStream::query`, `c10::Event::query`): it returns
  /// at once, but a loop that polls it until it says done waits like
  /// `synchronize()` (torch-sync-explicit; the CUDA runtime's are RuntimeQuery).
  CompletionQuery = 1u << 30,
  /// Makes later work of its scope run on another CUDA stream (a stream guard,
  /// `setCurrentCUDAStream`): device-side state shared across iterations is then
  /// written from several streams without ordering.
  SwitchesStream = 1u << 31,
  /// The last trait: the index covers every bit up to it (the 32 bits are used).
  LastApiTrait = SwitchesStream,
};

/// The first LibTorch major version on which the ValidatedOnHostBeforeV2 calls
/// no longer wait (the versions between 1.13 and 2.11 were neither read nor
/// measured: docs/catalog.md).
constexpr unsigned FirstMajorValidatingOnDevice = 2;

/// The traits of a LibTorch function or method name (0 for a name the table lacks).
unsigned apiTraits(llvm::StringRef Name);
inline bool hasApiTrait(llvm::StringRef Name, ApiTrait Trait) {
  return (apiTraits(Name) & Trait) != 0;
}
/// Every name with Trait, in table order (for matchers: `hasAnyName`).
llvm::ArrayRef<llvm::StringRef> namesWithTrait(ApiTrait Trait);
/// The fully-qualified spellings the table gives the names with Trait
/// (`::torch::cuda::synchronize`), for matchers that name their homes.
llvm::ArrayRef<llvm::StringRef> qualifiedNamesWithTrait(ApiTrait Trait);

/// The second table: names that are not LibTorch's (the CUDA runtime, C stdio,
/// std math, logging libraries, timers, standard containers), with their own
/// traits. A name may be in both tables (`print`, `abs`): each answers for its own.
enum HostApiTrait : unsigned {
  /// A CUDA runtime call that blocks the host until device work is done
  /// (`cudaDeviceSynchronize`, `cudaMemcpy`; torch-sync-explicit-sync).
  RuntimeWait = 1u << 0,
  /// A CUDA runtime call that is stream ordered or only reads the runtime's
  /// state (`cudaMemcpyAsync`, `cudaGetLastError`): it leaves no host access unordered.
  RuntimeStreamOrdered = 1u << 1,
  /// C stdio output (`printf`, `puts`, `fflush`): it touches no device memory.
  StdioOutput = 1u << 2,
  /// Reads a clock or frees a host buffer (`now`, `cudaFreeHost`): a synchronize
  /// next to it is deliberate.
  TimerOrRelease = 1u << 3,
  /// A logging or text-building function of the C and C++ libraries, {fmt},
  /// spdlog or glog (UseClassifier::isLoggingCall checks its namespace).
  LoggingFunction = 1u << 4,
  /// A logging macro of glog or spdlog (`LOG`, `SPDLOG_INFO`).
  LoggingMacro = 1u << 5,
  /// Writes a metric to a log in any namespace (TensorBoard's `add_scalar`,
  /// MLflow's `log_metric`).
  MetricWriter = 1u << 6,
  /// A math or conversion helper whose result carries its argument's value on
  /// (`std::abs(v) < eps` is a condition on v).
  ValueTransforming = 1u << 7,
  /// A word of a function's name that marks a metrics or progress sink (`log`,
  /// `record`; UseClassifier splits names into words).
  SinkWord = 1u << 8,
  /// A standard container class that keeps host values (`vector`, `map`).
  HostContainer = 1u << 9,
  /// A standard sequence class read by index and iteration (`vector`, `deque`, `array`).
  IndexedSequence = 1u << 10,
  /// Container methods by what they do to the elements (analysis/Containers.h):
  /// add some (`push_back`, `insert`, `resize`),
  ContainerAdd = 1u << 11,
  /// yield one (`at`, `front`, `operator[]`, `value`),
  ContainerElement = 1u << 12,
  /// inspect none (`size`, `empty`, `has_value`),
  ContainerInspect = 1u << 13,
  /// hand out iterators to them (`begin`, `end`),
  ContainerIterate = 1u << 14,
  /// remove some and add none (`clear`, `pop_back`, `erase`, `reserve`).
  ContainerRemove = 1u << 15,
  /// Builds a tuple or pair of its arguments (`make_tuple`, `tie`): element I
  /// is argument I.
  TupleMaker = 1u << 16,
  /// A CUDA runtime query of whether work is done (`cudaEventQuery`,
  /// `cudaStreamQuery`): `cudaSuccess` when done, `cudaErrorNotReady` while not;
  /// polled in a loop until done, it waits like the matching synchronize.
  RuntimeQuery = 1u << 17,
  /// The last trait: the index covers every bit up to it.
  LastHostApiTrait = RuntimeQuery,
};

/// The traits of a name in the host table (0 for a name the table lacks).
unsigned hostApiTraits(llvm::StringRef Name);
inline bool hasHostApiTrait(llvm::StringRef Name, HostApiTrait Trait) {
  return (hostApiTraits(Name) & Trait) != 0;
}
/// Every host name with Trait, in table order.
llvm::ArrayRef<llvm::StringRef> hostNamesWithTrait(HostApiTrait Trait);
/// The fully-qualified spellings the host table gives the names with Trait (`::cudaMemcpy`).
llvm::ArrayRef<llvm::StringRef> qualifiedHostNamesWithTrait(HostApiTrait Trait);

/// LibTorch's convention: an op whose name ends in `_` (`add_`, `copy_`)
/// writes its object in place.
bool isInPlaceName(llvm::StringRef Name);
/// A method that writes the tensor's memory: in place, or by handing out a
/// pointer or accessor to it.
bool mayWriteTensorMemory(llvm::StringRef Name);

/// A LibTorch method that maps each element on its own, given host scalars
/// (`abs`, `exp`, `to`, `gt`, `mul`): f(x)[i] == f(x[i]), and f of a selection
/// is the selection of f. A list beside the traits: ApiTrait's 32 bits are used.
bool isElementwiseMethod(llvm::StringRef Name);

/// What a device spelling names: a `c10::DeviceType` enumerator or its
/// constant (`CUDA`, `kCUDA`, `CPU`, `kCPU`) or a device string (`"cuda:1"`,
/// `"cpu"`; the index after `:` is ignored). Everything else (`meta`, `kMPS`,
/// a name that is no device) is Other.
enum class DeviceKind { Cpu, Cuda, Other };
DeviceKind deviceKindOfSpelling(llvm::StringRef Spelling);

} // namespace torch_syncfree

#endif
