// One measurement at a time on a GPU, across processes. kbench's evaluations and its eager
// baselines hold the GPU's lock file exclusively while they run; a compiled baseline made on demand
// (scripts/tools/compile_baselines.py, given the same file) holds it exclusively while it is timed
// and shared for its other GPU work. So no candidate is timed beside a baseline's compile or timing,
// and no baseline beside a candidate. Held with compile::FileLock on gpu_lock_path(device).
#pragma once

#include <filesystem>

namespace kbench::sandbox {

// The lock file of CUDA device `device` as this process sees it: named after the GPU that
// CUDA_VISIBLE_DEVICES maps it to, so that processes with different visible sets agree. Touches no
// CUDA API (a parent that forks workers must not initialise CUDA).
std::filesystem::path gpu_lock_path(int device);

}  // namespace kbench::sandbox
