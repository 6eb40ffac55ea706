#include "launch/cuda_driver.h"

#include <algorithm>

#include <stdexcept>

#ifdef KBENCH_WITH_CUDA
#include <cuda.h>
#include <cuda_runtime_api.h>
#endif

namespace kbench::launch {

std::string DeviceInfo::arch() const {
  const std::string base = "sm_" + std::to_string(major) + std::to_string(minor);
  return major == 9 && minor == 0 ? base + "a" : base;
}

int fp32_lanes_per_multiprocessor(int major, int minor) {
  if (major == 6) return minor == 0 ? 64 : 128;
  if (major == 7) return 64;
  if (major == 8) return minor == 0 ? 64 : 128;
  if (major >= 9 && major <= 12) return 128;
  return 0;
}

#ifdef KBENCH_WITH_CUDA

namespace {
void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* msg = nullptr;
    cuGetErrorString(r, &msg);
    throw std::runtime_error(std::string(what) + ": " + (msg ? msg : "unknown CUDA error"));
  }
}
}  // namespace

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear: "no device" must not poison later calls
    return 0;
  }
  return n;
}

DeviceInfo query_device(int ordinal) {
  DeviceInfo info;
  info.ordinal = ordinal;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || ordinal >= count) {
    cudaGetLastError();
    info.why_absent = err != cudaSuccess ? std::string("no usable GPU: ") + cudaGetErrorString(err)
                                         : "no GPU with ordinal " + std::to_string(ordinal);
    return info;
  }
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, ordinal);
  info.present = true;
  info.name = p.name;
  info.major = p.major;
  info.minor = p.minor;
  info.multiprocessors = p.multiProcessorCount;
  info.memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
  info.l2_bytes = p.l2CacheSize;
  info.max_threads_per_block = p.maxThreadsPerBlock;
  info.max_threads_per_multiprocessor = p.maxThreadsPerMultiProcessor;
  for (int i = 0; i < 3; ++i) {
    info.max_block[i] = p.maxThreadsDim[i];
    info.max_grid[i] = p.maxGridSize[i];
  }
  info.max_shared_optin = static_cast<int>(p.sharedMemPerBlockOptin);
  info.registers_per_multiprocessor = p.regsPerMultiprocessor;
  info.shared_per_multiprocessor = static_cast<int>(p.sharedMemPerMultiprocessor);
  info.max_blocks_per_multiprocessor = p.maxBlocksPerMultiProcessor;
  if (cudaDeviceGetAttribute(&info.sm_clock_khz, cudaDevAttrClockRate, ordinal) == cudaSuccess)
    info.fp32_flops = 2.0 * fp32_lanes_per_multiprocessor(p.major, p.minor) * p.multiProcessorCount * info.sm_clock_khz * 1e3;
  int memory_khz = 0;
  if (cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, ordinal) == cudaSuccess)
    info.memory_bandwidth = 2.0 * memory_khz * 1e3 * p.memoryBusWidth / 8.0;  // two transfers per clock
  cudaDriverGetVersion(&info.driver_version);
  cudaRuntimeGetVersion(&info.runtime_version);
  return info;
}

LoadedModule::LoadedModule(const std::string& cubin, const std::vector<compile::KernelSignature>& signatures) {
  CUmodule module = nullptr;
  check(cuModuleLoadData(&module, cubin.data()), "cuModuleLoadData");
  module_ = module;
  for (const auto& sig : signatures) {
    Kernel k;
    CUfunction fn = nullptr;
    check(cuModuleGetFunction(&fn, module, sig.name.c_str()), "cuModuleGetFunction");
    k.function = fn;
    k.signature = sig;
    check(cuFuncGetAttribute(&k.max_threads_per_block, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn), "cuFuncGetAttribute");
    check(cuFuncGetAttribute(&k.static_shared_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn), "cuFuncGetAttribute");
    check(cuFuncGetAttribute(&k.local_bytes_per_thread, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn), "cuFuncGetAttribute");
    check(cuFuncGetAttribute(&k.registers_per_thread, CU_FUNC_ATTRIBUTE_NUM_REGS, fn), "cuFuncGetAttribute");
    kernels_[sig.name] = k;
  }
}


LoadedModule::~LoadedModule() {
  if (module_) cuModuleUnload(static_cast<CUmodule>(module_));
}

#else  // a build without CUDA execution: report the absence instead of failing to link

int device_count() { return 0; }

DeviceInfo query_device(int ordinal) {
  DeviceInfo info;
  info.ordinal = ordinal;
  info.why_absent = "this kbench was built against a CPU-only libtorch; rebuild with the GPU preset "
                    "(cmake --preset gpu) on a machine with CUDA";
  return info;
}

LoadedModule::LoadedModule(const std::string&, const std::vector<compile::KernelSignature>&) {
  throw std::runtime_error("loading kernels needs a GPU build of kbench");
}

LoadedModule::~LoadedModule() = default;

#endif

const LoadedModule::Kernel* LoadedModule::find(const std::string& name) const {
  const auto it = kernels_.find(name);
  return it == kernels_.end() ? nullptr : &it->second;
}

std::string LoadedModule::kernel_list() const {
  std::string s;
  for (const auto& [name, k] : kernels_) s += (s.empty() ? "" : ", ") + k.signature.to_string();
  return s.empty() ? "(none: no extern \"C\" __global__ function)" : s;
}

int64_t LoadedModule::local_memory_reserve(const DeviceInfo& gpu) const {
  int64_t per_thread = 0;
  for (const auto& [name, k] : kernels_) per_thread = std::max<int64_t>(per_thread, k.local_bytes_per_thread);
  return per_thread * gpu.multiprocessors * gpu.max_threads_per_multiprocessor;
}

}  // namespace kbench::launch
