// The submission's launches, whichever way they were made: kbench.launch in kbench's format, or a
// kernel launch of a ModelNew extension (launch/extension_launches.h). Both count here and are
// skipped during the ablation run.
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

}  // namespace kbench::launch
