// kbench::launch — the operator a host program calls as
//   kbench.launch(kernel, grid, block, args, shared_mem=0)
// It checks every argument against the kernel's PTX signature and the device limits, then launches
// on the current stream. Errors carry a verdict tag that the checker turns into a verdict.
#pragma once

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

}  // namespace kbench::launch
