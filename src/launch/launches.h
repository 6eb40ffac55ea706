// The submission's launches, whichever way they were made: kbench.launch in kbench's format, or a
// kernel launch of a ModelNew extension (launch/extension_launches.h). Both count here, record the
// device memory their kernels were given, and are skipped during the ablation run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kbench::launch {

// Successful launches since the last reset: a forward with none is `no_custom_kernel`.
int64_t launch_count();
void reset_launch_count();  // also forgets the arguments below

// Whether some launch since the reset was given an address inside [base, base + bytes) (a tensor's
// storage): an output whose memory no launched kernel was given came from PyTorch ops, not from the
// submission's kernels.
bool storage_was_launched(const void* base, size_t bytes);

// While set, launches are checked as always but not made: the ablation run, which asks whether
// forward's outputs are right without the submission's kernels. Skipped launches are not counted.
void set_skip_launches(bool skip);
bool launches_skipped();

// A launch that was made: counted, with the words of its arguments that may be device addresses.
void record_launch(const std::vector<uintptr_t>& addresses);

}  // namespace kbench::launch
