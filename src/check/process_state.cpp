#include "check/process_state.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>
#include <c10/core/DefaultDtype.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/version.h>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#ifdef KBENCH_WITH_CUDA
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace kbench::check {
namespace {

template <typename T>
std::string text(T value) {
  return std::to_string(static_cast<long long>(value));
}

std::string hex(uint64_t value) {
  std::ostringstream out;
  out << std::hex << value;
  return out.str();
}

void capture_backend_flags(ProcessState& s) {
  auto& c = at::globalContext();
  s["cudnn.enabled"] = text(c.userEnabledCuDNN());
  s["cudnn.benchmark"] = text(c.benchmarkCuDNN());
  s["cudnn.benchmark_limit"] = text(c.benchmarkLimitCuDNN());
  s["cudnn.deterministic"] = text(c.deterministicCuDNN());
  s["cudnn.allow_tf32"] = text(c.allowTF32CuDNN());
  s["matmul.allow_tf32"] = text(c.allowTF32CuBLAS());
  s["float32_matmul_precision"] = text(c.float32MatmulPrecision());
  s["matmul.allow_fp16_reduced_precision_reduction"] = text(c.allowFP16ReductionCuBLAS());
  s["deterministic_algorithms"] = text(c.deterministicAlgorithms());
  s["deterministic_algorithms.warn_only"] = text(c.deterministicAlgorithmsWarnOnly());
  s["sdp.flash"] = text(c.userEnabledFlashSDP());
  s["sdp.math"] = text(c.userEnabledMathSDP());
  s["mkldnn.enabled"] = text(c.userEnabledMkldnn());
  s["linalg.preferred_backend"] = text(c.linalgPreferredBackend());
#if TORCH_VERSION_MAJOR >= 2
  s["matmul.allow_bf16_reduced_precision_reduction"] = text(c.allowBF16ReductionCuBLAS());
  s["sdp.mem_efficient"] = text(c.userEnabledMemEfficientSDP());
  s["sdp.cudnn"] = text(c.userEnabledCuDNNSDP());
  s["blas.preferred_backend"] = text(c.blasPreferredBackend());
  s["deterministic_fill_uninitialized_memory"] = text(c.deterministicFillUninitializedMemory());
#endif
  s["default_dtype"] = std::string(c10::get_default_dtype().name());
  s["threads.intra_op"] = text(at::get_num_threads());
  s["threads.inter_op"] = text(at::get_num_interop_threads());
}

// The calling thread's: what its ops dispatch through (autocast, a Python dispatch mode) and how
// its floats round (flush-denormal sets the SSE control register's FTZ and DAZ bits).
void capture_thread_settings(ProcessState& s) {
  auto keys = c10::impl::tls_local_dispatch_key_set();  // raw_repr() is not const in libtorch 1.13
  s["thread.dispatch_keys.included"] = hex(keys.included_.raw_repr());
  s["thread.dispatch_keys.excluded"] = hex(keys.excluded_.raw_repr());
#if defined(__x86_64__)
  s["thread.flush_denormal"] = text((_mm_getcsr() & 0x8040) != 0);
#endif
}

#ifdef KBENCH_WITH_CUDA
void capture_gpu_settings(ProcessState& s, int device) {
  int current = -1;
  cudaGetDevice(&current);
  s["cuda.current_device"] = text(current);
  const auto stream = c10::cuda::getCurrentCUDAStream(device);
  s["cuda.current_stream"] = text(stream.id());
  // The stack size is left out: the driver raises it itself for kernels that need more.
  for (const auto& [name, limit] : {std::pair{"cuda.limit.persisting_l2_cache_size", cudaLimitPersistingL2CacheSize},
                                    std::pair{"cuda.limit.max_l2_fetch_granularity", cudaLimitMaxL2FetchGranularity},
                                    std::pair{"cuda.limit.malloc_heap_size", cudaLimitMallocHeapSize},
                                    std::pair{"cuda.limit.printf_fifo_size", cudaLimitPrintfFifoSize}}) {
    size_t value = 0;
    s[name] = cudaDeviceGetLimit(&value, limit) == cudaSuccess ? text(value) : "?";
  }
  cudaFuncCache cache{};
  s["cuda.cache_config"] = cudaDeviceGetCacheConfig(&cache) == cudaSuccess ? text(cache) : "?";
  unsigned flags = 0;
  // Without cudaDeviceLmemResizeToMax, which the runtime sets itself when a graph is captured: it
  // keeps local memory allocated, and changes no kernel's result or speed.
  s["cuda.device_flags"] = cudaGetDeviceFlags(&flags) == cudaSuccess ? text(flags & ~cudaDeviceLmemResizeToMax) : "?";
  for (const auto& [name, handle] : {std::pair{"cuda.current_stream.access_policy_window", stream.stream()},
                                     std::pair{"cuda.default_stream.access_policy_window", cudaStreamLegacy}}) {
    cudaStreamAttrValue value{};
    if (cudaStreamGetAttribute(handle, cudaStreamAttributeAccessPolicyWindow, &value) != cudaSuccess) {
      s[name] = "?";
      continue;
    }
    const auto& w = value.accessPolicyWindow;
    s[name] = w.num_bytes == 0 ? "none"
                               : std::to_string(w.num_bytes) + " bytes at " + hex(reinterpret_cast<uintptr_t>(w.base_ptr)) +
                                     ", hit ratio " + std::to_string(w.hitRatio) + ", hit property " + text(w.hitProp);
  }
  cudaGetLastError();  // a query refused above is not the next launch's error
}
#endif

// The dispatch keys whose kernels a forward on dense CPU or CUDA tensors can reach, autograd and
// autocast included. Others (Meta, functorch, quantized, sparse, ...) are left out: torch's own
// Python registers kernels for some of them as it imports its modules.
bool reachable_key(const std::string& key) {
  for (const char* prefix : {"CPU", "CUDA", "Autograd", "Autocast", "CompositeImplicitAutograd",
                             "CompositeExplicitAutograd", "BackendSelect", "ADInplaceOrView", "catchall", "Undefined"})
    if (key.rfind(prefix, 0) == 0) return true;
  return false;
}

// The dispatch key a dumpState() line is about: "CUDA" of "CUDA: registered at <file>:<line> :: ..."
// and of "CUDA (inactive): ...", a kernel that a later registration overrides.
std::string dispatch_key_of(const std::string& line) {
  auto key = line.substr(0, line.find(": "));
  if (const auto inactive = key.find(" (inactive)"); inactive != std::string::npos) key.erase(inactive);
  return key;
}

// The lines of an op's dumpState() for the reachable keys, the overridden kernels' included: a
// registration may give itself the file and line of the kernel it overrides, and then only the
// kernel it pushed down shows that it is there.
std::string reachable_kernels(const c10::OperatorHandle& op) {
  std::istringstream lines(op.dumpState());
  std::string kept;
  for (std::string line; std::getline(lines, line);)
    if (line.find(": ") != std::string::npos && reachable_key(dispatch_key_of(line))) kept += line + "\n";
  return kept;
}

std::string full_name(const c10::OperatorName& name) {
  return name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
}

// The dispatch keys whose kernels differ between two reachable_kernels texts.
std::string changed_keys(const std::string& before, const std::string& after) {
  auto by_key = [](const std::string& kernels) {
    std::map<std::string, std::string> m;
    std::istringstream lines(kernels);
    for (std::string line; std::getline(lines, line);) m[dispatch_key_of(line)] += line + "\n";
    return m;
  };
  const auto b = by_key(before), a = by_key(after);
  std::string keys;
  for (const auto& [key, lines] : a)
    if (!b.count(key) || b.at(key) != lines) keys += (keys.empty() ? "" : ", ") + key + (b.count(key) ? " replaced" : " added");
  for (const auto& [key, lines] : b)
    if (!a.count(key)) keys += (keys.empty() ? "" : ", ") + key + " removed";
  return keys;
}

thread_local ProcessStateWatch* t_active = nullptr;
thread_local std::set<std::string>* t_ops_called = nullptr;

// The overload the dispatcher ran ("aten::add.Tensor"): what a later call of the same work runs
// again. A record that names no operator is not the dispatcher's, whose kernels are all a check reads.
std::unique_ptr<at::ObserverContext> note_op(const at::RecordFunction& fn) {
  if (!t_ops_called) return nullptr;
  if (const auto op = fn.operator_name()) t_ops_called->insert(full_name(*op));
  return nullptr;
}

// "aten::add.Tensor" as the dispatcher names it; an op's base name holds no dot.
c10::OperatorName operator_name(const std::string& full) {
  const auto names_space = full.find("::");
  const auto dot = full.find('.', names_space == std::string::npos ? 0 : names_space);
  return dot == std::string::npos ? c10::OperatorName(full, "") : c10::OperatorName(full.substr(0, dot), full.substr(dot + 1));
}

}  // namespace

ProcessState capture_settings(int device) {
  ProcessState s;
  capture_backend_flags(s);
  capture_thread_settings(s);
#ifdef KBENCH_WITH_CUDA
  if (device >= 0) capture_gpu_settings(s, device);
#else
  (void)device;
#endif
  return s;
}

ProcessState capture_dispatcher(const std::set<std::string>& ops) {
  auto& dispatcher = c10::Dispatcher::singleton();
  std::vector<c10::OperatorName> names;
  if (ops.empty()) names = dispatcher.getAllOpNames();
  for (const auto& op : ops) names.push_back(operator_name(op));
  // Reading every op's kernels (about 3,400 dumpState texts) is the costly part of a ModelNew's
  // checks; the reads are independent, so a full capture shares them among up to 8 threads.
  const size_t threads =
      names.size() < 512 ? 1 : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  std::vector<ProcessState> parts(threads);
  const auto read = [&](size_t part) {
    for (size_t i = part; i < names.size(); i += threads)
      if (const auto op = dispatcher.findOp(names[i])) parts[part][full_name(names[i])] = reachable_kernels(*op);
  };
  std::vector<std::thread> helpers;
  for (size_t part = 1; part < threads; ++part) helpers.emplace_back(read, part);
  read(0);
  for (auto& helper : helpers) helper.join();
  for (size_t part = 1; part < threads; ++part) parts[0].merge(parts[part]);
  return std::move(parts[0]);
}

std::set<std::string> ops_called_by(const std::function<void()>& work) {
  std::set<std::string> ops;
  t_ops_called = &ops;
  const auto handle = at::addThreadLocalCallback(at::RecordFunctionCallback(note_op).scopes({at::RecordScope::FUNCTION}));
  try {
    work();
  } catch (...) {
    at::removeCallback(handle);
    t_ops_called = nullptr;
    throw;
  }
  at::removeCallback(handle);
  t_ops_called = nullptr;
  return ops;
}

std::vector<std::string> state_changes(const ProcessState& before, const ProcessState& after) {
  std::vector<std::string> changes;
  for (const auto& [name, value] : before) {
    const auto it = after.find(name);
    if (it == after.end() || it->second == value || it->second == "?") continue;  // "?": the query failed
    // A dispatcher entry holds lines of kernels; a setting, one value.
    const bool kernels = value.find('\n') != std::string::npos || it->second.find('\n') != std::string::npos;
    changes.push_back(kernels ? "PyTorch's dispatcher: " + name + ": " + changed_keys(value, it->second)
                              : name + ": " + value + " -> " + it->second);
  }
  return changes;
}

ProcessStateWatch::ProcessStateWatch(int device, bool watch_dispatcher)
    : device_(device), watch_dispatcher_(watch_dispatcher), settings_(capture_settings(device)) {
  if (watch_dispatcher_) dispatcher_ = capture_dispatcher();
}

ProcessStateWatch::ProcessStateWatch(int device, ProcessState dispatcher)
    : device_(device), watch_dispatcher_(true), settings_(capture_settings(device)), dispatcher_(std::move(dispatcher)) {}

void ProcessStateWatch::watch_ops(const std::set<std::string>& ops) { watched_ops_.insert(ops.begin(), ops.end()); }

bool ProcessStateWatch::verify(Depth depth, const std::string& where) {
  if (changed()) return false;
  ++checks_;
  const auto start = std::chrono::steady_clock::now();
  auto changes = state_changes(settings_, capture_settings(device_));
  if (changes.empty() && watch_dispatcher_ && depth != Depth::settings && (depth == Depth::all_ops || !watched_ops_.empty()))
    changes = state_changes(dispatcher_, capture_dispatcher(depth == Depth::all_ops ? std::set<std::string>{} : watched_ops_));
  checking_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (changes.empty()) return true;
  for (const auto& c : changes) change_ += (change_.empty() ? "" : "; ") + c;
  change_ += " (" + where + ")";
  return false;
}

ActiveProcessStateWatch::ActiveProcessStateWatch(ProcessStateWatch* watch) : previous_(t_active) { t_active = watch; }
ActiveProcessStateWatch::~ActiveProcessStateWatch() { t_active = previous_; }

bool verify_process_state(ProcessStateWatch::Depth depth, const std::string& where) {
  return !t_active || t_active->verify(depth, where);
}

}  // namespace kbench::check
