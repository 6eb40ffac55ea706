// The GPU as kbench sees it: device properties, and candidate modules loaded through the driver API.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compile/kernel_signature.h"

namespace kbench::launch {

// True only in the CUDA-enabled build (libtorch with CUDA, driver API linked).
constexpr bool built_with_cuda() {
#ifdef KBENCH_WITH_CUDA
  return true;
#else
  return false;
#endif
}

struct DeviceInfo {
  bool present = false;
  std::string why_absent;       // one line, when !present
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0;
  int multiprocessors = 0;
  int64_t memory_bytes = 0;
  int l2_bytes = 0;
  int max_threads_per_block = 0;
  int max_threads_per_multiprocessor = 0;
  int max_block[3] = {0, 0, 0};
  int max_grid[3] = {0, 0, 0};
  int max_shared_optin = 0;     // per block, with the opt-in attribute
  // What bounds how many blocks an SM holds (the profile's occupancy limiter).
  int registers_per_multiprocessor = 0;
  int shared_per_multiprocessor = 0;
  int max_blocks_per_multiprocessor = 0;
  int sm_clock_khz = 0;         // the SM's peak clock
  double fp32_flops = 0;        // peak FP32 FLOP/s on the CUDA cores (FMA = 2): SMs x FP32 lanes x 2 x clock
  double memory_bandwidth = 0;  // peak device memory bandwidth, bytes/s (memory clock x bus width, DDR)
  int driver_version = 0;       // e.g. 13000
  int runtime_version = 0;

  std::string arch() const;     // "sm_90a" on Hopper (the a-variant unlocks wgmma/TMA), else "sm_XY"
};

int device_count();                   // 0 without a GPU, a driver, or a CUDA build
DeviceInfo query_device(int ordinal);

// FP32 lanes per SM by compute capability (the CUDA programming guide's arithmetic throughput
// table); 0 for an architecture kbench does not know, which leaves the FLOP/s peak unknown.
int fp32_lanes_per_multiprocessor(int major, int minor);

// A CUBIN loaded into the current context, with each kernel's function handle and signature.
class LoadedModule {
 public:
  struct Kernel {
    void* function = nullptr;  // CUfunction
    compile::KernelSignature signature;
    int max_threads_per_block = 0;
    int static_shared_bytes = 0;
    int local_bytes_per_thread = 0;  // stack and spills: the driver reserves it for all resident threads
    int registers_per_thread = 0;
  };

  LoadedModule(const std::string& cubin, const std::vector<compile::KernelSignature>& signatures);
  ~LoadedModule();
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  const Kernel* find(const std::string& name) const;
  std::string kernel_list() const;  // for "no kernel named ..." messages

  // Device memory the driver takes for local memory when the hungriest kernel launches (per-thread
  // local size × every thread the GPU can hold). It must stay free, or that launch fails.
  int64_t local_memory_reserve(const DeviceInfo& gpu) const;

 private:
  void* module_ = nullptr;  // CUmodule
  std::map<std::string, Kernel> kernels_;
};

}  // namespace kbench::launch
