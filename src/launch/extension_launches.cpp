// The kernel launches of a ModelNew extension (the library torch.utils.cpp_extension builds from a
// submission's sources). The extension is linked with `-Wl,--wrap=<entry point>` for every launch
// entry point of the CUDA runtime and driver that compile::wrapped_launch_functions() lists, so its
// calls come here: to the `__wrap_<entry point>` functions below, which the kbench executable exports
// (CMakeLists.txt). They count each launch in launch/launches.h, and skip it during the ablation run,
// as kbench.launch does. PyTorch's own libraries are linked without the flags: only the
// submission's launches are seen. A launch captured into a CUDA graph is counted when the graph is
// replayed (launch/graph_launches.h).
#include "launch/graph_launches.h"
#include "launch/launches.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <string_view>

#ifdef KBENCH_WITH_CUDA

namespace {

using kbench::launch::launches_skipped;
using kbench::launch::record_launch;

// Skipped during the ablation run; otherwise made, and counted if it succeeded, unless it was
// captured into a CUDA graph (counted when the graph is replayed: launch/graph_launches.h).
template <typename Result, typename Launch>
Result intercept(Result success, void* stream, Launch launch) {
  if (launches_skipped()) return success;
  const Result r = launch();
  if (r == success && !kbench::launch::captured_into_graph(stream)) record_launch();
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

#define KBENCH_LAUNCH(success, stream, launch) return intercept(success, stream, [&] { return launch; })
#else
// kbench built without CUDA (CI) makes no launch, but it builds extensions and loads them, as
// PyTorch's build does, and they bind to these entry points: each refuses the launch.
namespace {
cudaError_t refused(cudaError_t) { return cudaErrorNoDevice; }
CUresult refused(CUresult) { return CUDA_ERROR_NO_DEVICE; }
}  // namespace
#define KBENCH_LAUNCH(success, stream, launch) return refused(success)
#endif

// The wrappers, exported by the kbench executable (see CMakeLists.txt) for extensions to bind to.
#define KBENCH_WRAP_KERNEL_LAUNCH(name)                                                                           \
  extern "C" cudaError_t __wrap_##name(cudaKernel_t k, dim3 grid, dim3 block, void** args, size_t shared,         \
                                       cudaStream_t stream) {                                                     \
    KBENCH_LAUNCH(cudaSuccess, stream, KBENCH_RUNTIME_KERNEL_LAUNCH(name)(k, grid, block, args, shared, stream)); \
  }
#define KBENCH_WRAP_RUNTIME_LAUNCH(name)                                                                          \
  extern "C" cudaError_t __wrap_##name(const void* func, dim3 grid, dim3 block, void** args, size_t shared,       \
                                       cudaStream_t stream) {                                                     \
    KBENCH_LAUNCH(cudaSuccess, stream, name(func, grid, block, args, shared, stream));                            \
  }
#define KBENCH_WRAP_RUNTIME_LAUNCH_EX(name)                                                                       \
  extern "C" cudaError_t __wrap_##name(const cudaLaunchConfig_t* config, const void* func, void** args) {         \
    KBENCH_LAUNCH(cudaSuccess, config->stream, name(config, func, args));                                         \
  }
#define KBENCH_WRAP_DRIVER_LAUNCH(name)                                                                           \
  extern "C" CUresult __wrap_##name(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,             \
                                    unsigned by, unsigned bz, unsigned shared, CUstream stream, void** params,    \
                                    void** extra) {                                                               \
    KBENCH_LAUNCH(CUDA_SUCCESS, stream, name(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra));          \
  }
#define KBENCH_WRAP_DRIVER_LAUNCH_EX(name)                                                                        \
  extern "C" CUresult __wrap_##name(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {    \
    KBENCH_LAUNCH(CUDA_SUCCESS, config->hStream, name(config, f, params, extra));                                 \
  }
#define KBENCH_WRAP_DRIVER_COOPERATIVE(name)                                                                      \
  extern "C" CUresult __wrap_##name(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,             \
                                    unsigned by, unsigned bz, unsigned shared, CUstream stream, void** params) {  \
    KBENCH_LAUNCH(CUDA_SUCCESS, stream, name(f, gx, gy, gz, bx, by, bz, shared, stream, params));                 \
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

// Triton's native stubs (the per-signature launcher and cuda_utils, which kbench builds: see
// compile/triton_runtime.h) are linked with -Wl,--wrap=dlsym,--wrap=cuModuleLoadData. Its launcher
// finds cuLaunchKernelEx with dlsym(dlopen("libcuda.so.1"), ...), which no link-time wrap of the
// launch itself would see: the lookup is answered with kbench's wrapper above, so a Triton launch is
// counted and skipped like an extension's. Every other name is the real dlsym's.
extern "C" void* __wrap_dlsym(void* handle, const char* name) {
  if (name) {
    const std::string_view wanted(name);
    if (wanted == "cuLaunchKernelEx") return reinterpret_cast<void*>(&__wrap_cuLaunchKernelEx);
    if (wanted == "cuLaunchKernel") return reinterpret_cast<void*>(&__wrap_cuLaunchKernel);
    if (wanted == "cuLaunchCooperativeKernel") return reinterpret_cast<void*>(&__wrap_cuLaunchCooperativeKernel);
  }
  return ::dlsym(handle, name);
}

// cuda_utils' load_binary: each load is a Triton compile (or a cached binary of a new
// specialisation) coming into the process, which the timed calls may not contain.
extern "C" CUresult __wrap_cuModuleLoadData(CUmodule* module, const void* image) {
  kbench::launch::record_module_load();
#ifdef KBENCH_WITH_CUDA
  return cuModuleLoadData(module, image);
#else
  (void)module, (void)image;
  return CUDA_ERROR_NO_DEVICE;
#endif
}
