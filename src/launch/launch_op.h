// kbench::launch — the operator a host program calls as
//   kbench.launch(kernel, grid, block, args, shared_mem=0)
// It checks every argument against the kernel's PTX signature and the device limits, then launches
// on the current stream. Errors carry a verdict tag that the checker turns into a verdict.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "launch/cuda_driver.h"
#include "launch/launches.h"  // its launches count there, with the ModelNew extensions'

namespace kbench::launch {

// Tags inside exception messages; TorchScript wraps op errors in its own text, so the checker
// finds the tag rather than relying on an exception type.
inline constexpr const char* kLaunchErrorTag = "[kbench:launch_error] ";
inline constexpr const char* kRuntimeErrorTag = "[kbench:runtime_error] ";

// The candidate whose kernels `kbench.launch` finds. One candidate per worker process at a time.
void set_active_module(const LoadedModule* module, const DeviceInfo* device);

// One launch as `kbench.launch` makes it, for a profiler: the kernel, its launch shape, and the
// stream it goes on (a cudaStream_t).
struct LaunchShape {
  const LoadedModule::Kernel* kernel = nullptr;
  std::array<unsigned, 3> grid{1, 1, 1}, block{1, 1, 1};
  unsigned shared_mem = 0;  // dynamic, bytes
  void* stream = nullptr;
};

// Hears every launch that passed its checks: before() right before the driver call, after() once
// it was enqueued (not after a failed launch). Off (no observer) unless a profile is being taken.
class LaunchObserver {
 public:
  virtual ~LaunchObserver() = default;
  virtual void before(const LaunchShape& launch) = 0;
  virtual void after(const LaunchShape& launch) = 0;
};
void set_launch_observer(LaunchObserver* observer);  // nullptr: none

}  // namespace kbench::launch
