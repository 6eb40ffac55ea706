// The kernel launches of a ModelNew extension (the library torch.utils.cpp_extension builds from a
// submission's sources). The extension is linked with `-Wl,--wrap=<entry point>` for every launch
// entry point of the CUDA runtime and driver that compile::wrapped_launch_functions() lists, so its
// calls come here: to the `__wrap_<entry point>` functions below, which the kbench executable exports
// (CMakeLists.txt). They count each launch and record its arguments in launch/launches.h, and skip it
// during the ablation run, as kbench.launch does. PyTorch's own libraries are linked without the
// flags: only the submission's launches are seen. A launch replayed from a CUDA graph is not.
#include "launch/launches.h"

#ifdef KBENCH_WITH_CUDA
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <unordered_map>

#include <cuda.h>
#include <cuda_runtime_api.h>

namespace {

using kbench::launch::launches_skipped;
using kbench::launch::record_launch;

// Each parameter's size in bytes, as the driver lays the kernel's parameters out; looked up once
// per kernel. The driver API keeps no "last error", so probing past the last parameter leaves
// nothing for the extension's own cudaGetLastError() to find.
template <typename Handle, typename Query>
std::vector<size_t> parameter_sizes(Handle handle, Query query) {
  static std::mutex mutex;
  static std::unordered_map<const void*, std::vector<size_t>> known;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = reinterpret_cast<const void*>(handle);
  if (const auto it = known.find(key); it != known.end()) return it->second;
  std::vector<size_t> sizes;
  size_t offset = 0, size = 0;
  while (query(handle, sizes.size(), &offset, &size) == CUDA_SUCCESS) sizes.push_back(size);
  return known[key] = sizes;
}

std::vector<size_t> function_parameters(CUfunction f) { return parameter_sizes(f, cuFuncGetParamInfo); }
std::vector<size_t> kernel_parameters(cudaKernel_t k) {
  return parameter_sizes(reinterpret_cast<CUkernel>(k), cuKernelGetParamInfo);
}

// A runtime launch names its kernel by the host stub's address (or a cudaKernel_t cast to one).
std::vector<size_t> entry_parameters(const void* func) {
  cudaFunction_t f = nullptr;
  const cudaError_t pending = cudaPeekAtLastError();
  if (cudaGetFuncBySymbol(&f, func) == cudaSuccess) return function_parameters(reinterpret_cast<CUfunction>(f));
  if (pending == cudaSuccess) cudaGetLastError();  // our failed lookup must not become the extension's error
  return kernel_parameters(static_cast<cudaKernel_t>(const_cast<void*>(func)));
}

// Every 8-byte word of every parameter: those that are device addresses tell which tensors the
// kernel was given (a struct of pointers included). Parameters read byte-wise: they need not be aligned.
std::vector<uintptr_t> address_words(void** args, const std::vector<size_t>& sizes) {
  std::vector<uintptr_t> words;
  if (!args) return words;
  for (size_t i = 0; i < sizes.size(); ++i)
    for (size_t at = 0; at + sizeof(uintptr_t) <= sizes[i]; at += sizeof(uintptr_t)) {
      uintptr_t word = 0;
      std::memcpy(&word, static_cast<const char*>(args[i]) + at, sizeof word);
      words.push_back(word);
    }
  return words;
}

// The driver's alternative to a parameter array: one packed buffer passed through `extra`.
std::vector<uintptr_t> extra_words(void** extra) {
  std::vector<uintptr_t> words;
  const char* buffer = nullptr;
  size_t size = 0;
  for (size_t i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = static_cast<const char*>(extra[i + 1]);
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) size = *static_cast<const size_t*>(extra[i + 1]);
  }
  for (size_t at = 0; buffer && at + sizeof(uintptr_t) <= size; at += sizeof(uintptr_t)) {
    uintptr_t word = 0;
    std::memcpy(&word, buffer + at, sizeof word);
    words.push_back(word);
  }
  return words;
}

// Skipped during the ablation run; otherwise made, and counted with its arguments if it succeeded.
template <typename Result, typename Launch>
Result intercept(Result success, const std::vector<uintptr_t>& words, Launch launch) {
  if (launches_skipped()) return success;
  const Result r = launch();
  if (r == success) record_launch(words);
  return r;
}

}  // namespace

// The per-thread-default-stream variants, which the headers declare only under their macro.
extern "C" {
cudaError_t cudaLaunchKernel_ptsz(const void*, dim3, dim3, void**, size_t, cudaStream_t);
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t*, const void*, void**);
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void*, dim3, dim3, void**, size_t, cudaStream_t);
CUresult cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void**, void**);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig*, CUfunction, void**, void**);
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, CUstream, void**);
}

// The runtime's entry point of `<<<...>>>` since CUDA 12.8 or so; found at run time, so that kbench
// also links against a runtime without it (whose extensions then never call it).
using KernelLaunch = cudaError_t (*)(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);
static KernelLaunch runtime_function(const char* name) {
  return reinterpret_cast<KernelLaunch>(::dlsym(RTLD_DEFAULT, name));
}
#define KBENCH_RUNTIME_KERNEL_LAUNCH(name)                                         \
  [](auto... args) {                                                               \
    static const KernelLaunch real = runtime_function(#name);                      \
    return real ? real(args...) : cudaErrorNotSupported;                           \
  }

// The wrappers, exported by the kbench executable (see CMakeLists.txt) for extensions to bind to.
#define KBENCH_WRAP_KERNEL_LAUNCH(name)                                                                        \
  extern "C" cudaError_t __wrap_##name(cudaKernel_t k, dim3 grid, dim3 block, void** args, size_t shared,      \
                                       cudaStream_t stream) {                                                  \
    return intercept(cudaSuccess, address_words(args, kernel_parameters(k)), [&] {                           \
      return KBENCH_RUNTIME_KERNEL_LAUNCH(name)(k, grid, block, args, shared, stream);                         \
    });                                                                                                        \
  }
#define KBENCH_WRAP_RUNTIME_LAUNCH(name)                                                                       \
  extern "C" cudaError_t __wrap_##name(const void* func, dim3 grid, dim3 block, void** args, size_t shared,    \
                                       cudaStream_t stream) {                                                  \
    return intercept(cudaSuccess, address_words(args, entry_parameters(func)),                                 \
                     [&] { return name(func, grid, block, args, shared, stream); });                           \
  }
#define KBENCH_WRAP_RUNTIME_LAUNCH_EX(name)                                                                    \
  extern "C" cudaError_t __wrap_##name(const cudaLaunchConfig_t* config, const void* func, void** args) {      \
    return intercept(cudaSuccess, address_words(args, entry_parameters(func)),                                 \
                     [&] { return name(config, func, args); });                                                \
  }
#define KBENCH_WRAP_DRIVER_LAUNCH(name)                                                                        \
  extern "C" CUresult __wrap_##name(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,          \
                                    unsigned by, unsigned bz, unsigned shared, CUstream stream, void** params, \
                                    void** extra) {                                                            \
    return intercept(CUDA_SUCCESS, params ? address_words(params, function_parameters(f)) : extra_words(extra), \
                     [&] { return name(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra); });          \
  }
#define KBENCH_WRAP_DRIVER_LAUNCH_EX(name)                                                                     \
  extern "C" CUresult __wrap_##name(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {  \
    return intercept(CUDA_SUCCESS, params ? address_words(params, function_parameters(f)) : extra_words(extra), \
                     [&] { return name(config, f, params, extra); });                                          \
  }
#define KBENCH_WRAP_DRIVER_COOPERATIVE(name)                                                                   \
  extern "C" CUresult __wrap_##name(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,          \
                                    unsigned by, unsigned bz, unsigned shared, CUstream stream, void** params) { \
    return intercept(CUDA_SUCCESS, address_words(params, function_parameters(f)),                              \
                     [&] { return name(f, gx, gy, gz, bx, by, bz, shared, stream, params); });                 \
  }

KBENCH_WRAP_KERNEL_LAUNCH(__cudaLaunchKernel)
KBENCH_WRAP_KERNEL_LAUNCH(__cudaLaunchKernel_ptsz)
KBENCH_WRAP_RUNTIME_LAUNCH(cudaLaunchKernel)
KBENCH_WRAP_RUNTIME_LAUNCH(cudaLaunchKernel_ptsz)
KBENCH_WRAP_RUNTIME_LAUNCH(cudaLaunchCooperativeKernel)
KBENCH_WRAP_RUNTIME_LAUNCH(cudaLaunchCooperativeKernel_ptsz)
KBENCH_WRAP_RUNTIME_LAUNCH_EX(cudaLaunchKernelExC)
KBENCH_WRAP_RUNTIME_LAUNCH_EX(cudaLaunchKernelExC_ptsz)
KBENCH_WRAP_DRIVER_LAUNCH(cuLaunchKernel)
KBENCH_WRAP_DRIVER_LAUNCH(cuLaunchKernel_ptsz)
KBENCH_WRAP_DRIVER_LAUNCH_EX(cuLaunchKernelEx)
KBENCH_WRAP_DRIVER_LAUNCH_EX(cuLaunchKernelEx_ptsz)
KBENCH_WRAP_DRIVER_COOPERATIVE(cuLaunchCooperativeKernel)
KBENCH_WRAP_DRIVER_COOPERATIVE(cuLaunchCooperativeKernel_ptsz)
#endif
