// The submission's launches, whichever way they were made: kbench.launch in kbench's format, or a
// kernel launch of a ModelNew extension or of its Triton kernels (launch/extension_launches.cpp).
// All count here and are skipped during the ablation run.
#pragma once

#include <cstdint>

namespace kbench::launch {

// Successful launches since the last reset: a forward with none is `no_custom_kernel`.
int64_t launch_count();
void reset_launch_count();

// While set, launches are checked as always but not made: the ablation run, which asks whether
// forward's outputs are right without the submission's kernels. Skipped launches are not counted.
void set_skip_launches(bool skip);
bool launches_skipped();

// A launch that was made: counted.
void record_launch();

// Kernel modules the submission's JIT loaded (Triton's cuModuleLoadData, through kbench's wrapper):
// a load is a compile, or a cached binary of a new specialisation. Never reset: callers take the
// difference over a span of calls.
int64_t module_load_count();
void record_module_load();

}  // namespace kbench::launch
