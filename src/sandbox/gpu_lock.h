// One measurement at a time on a GPU, across processes. kbench's evaluations and its eager
// baselines hold the GPU's lock file exclusively while they run; a compiled baseline made on demand
// (scripts/tools/compile_baselines.py, given the same file) holds it exclusively while it is timed
// and shared for its other GPU work. So no candidate is timed beside a baseline's compile or timing,
// and no baseline beside a candidate. Held with compile::FileLock on gpu_lock_path(device).
//
// A second lock, the GPU's quiet lock, is finer: whatever times on the GPU (an evaluation's timed
// calls and profile, a baseline) holds it exclusively while it times, and so does a ModelNew spare
// while it prepares the GPU ahead of its request (sandbox/gpu_runner.h), beside another evaluation
// whose GPU lock its runner holds. So a spare's GPU work never runs beside timed calls. Taken after
// the GPU lock where both are held. Among those waiting for it, timed work goes first (QuietLock):
// it waits for the spare's part under way, never for the parts queued behind it.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>

#include "compile/file_lock.h"

namespace kbench::sandbox {

// The lock file of CUDA device `device` as this process sees it: named after the GPU that
// CUDA_VISIBLE_DEVICES maps it to, so that processes with different visible sets agree. Touches no
// CUDA API (a parent that forks workers must not initialise CUDA).
std::filesystem::path gpu_lock_path(int device);

// The quiet lock's file of CUDA device `device`, named as gpu_lock_path's.
std::filesystem::path quiet_gpu_lock_path(int device);

// The GPU's quiet lock, held from construction to destruction. flock(2) wakes its waiters in no
// order, so the lock has a gate: timed work holds it shared from before it waits for the lock until
// it lets go, and a spare's part takes it exclusively (waiting while any timed work waits or runs)
// only until it holds the lock itself.
class QuietLock {
 public:
  enum class For { timing, spare_part };
  QuietLock(int device, For holder);

 private:
  std::unique_ptr<compile::FileLock> gate_;  // timed work's shared hold
  std::optional<compile::FileLock> quiet_;
};

// The quiet lock's gate file of CUDA device `device`, named as gpu_lock_path's.
std::filesystem::path quiet_gate_path(int device);

// The lock a GPU's runner in process `runner_pid` holds exclusively while its worker holds the GPU's
// free memory (sandbox/gpu_runner.h), and its ModelNew spares shared while they prepare their GPU: a
// spare prepares only while its worker holds no memory, and the worker takes it again only once no
// spare prepares. One per runner: another kbench's runner on the GPU waits for none of it.
std::filesystem::path spares_lock_path(int device, long runner_pid);

}  // namespace kbench::sandbox
