// Poisoned memory for the candidate's runs. Every block the candidate allocates while a guard is on
// is filled with 0xFF as it is handed out (a NaN in float32), so an output it never writes cannot
// pass by inheriting an earlier answer, the reference's included. Out-of-bounds writes are found by
// poisoning memory around its buffers and checking, after it ran, that what it had not allocated is
// still 0xFF. Two extents:
// - all free memory: every free byte the caching allocator holds is poisoned before the run and
//   checked after it (tens of milliseconds on an 80 GB GPU). The first trial of an evaluation runs
//   so: a stray write anywhere is found, and whatever earlier evaluations left in free memory (a
//   reference's output for the same seed, in a batch) is wiped before this candidate runs.
// - guard zones: the 2 MiB after each block the candidate allocates (what of it was free) is
//   poisoned as the block is handed out and checked after the run: the writes past the end of a
//   buffer that indexing bugs make. Later trials run so, at a cost of what they allocate.
//
// The allocator is first made to hold nearly all of the GPU's free memory, once per process: the
// memory stays in its cache between guards, so later guards only refill the free blocks (tens of
// milliseconds) instead of returning and re-allocating tens of GiB (hundreds).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace kbench::check {

// --gpu-memory: the caching allocator of this process may hold at most `bytes` of GPU `device` (0:
// all of it), as if the GPU had that much memory; an allocation past it fails as on a GPU that
// small. Memory held beyond a new, lower limit is given back first. hold_free_memory keeps within
// it. Makes `device` the current one.
void limit_gpu_memory(int device, int64_t bytes);

// Makes the caching allocator hold all free device memory but a margin of 1 GiB and
// `keep_free_bytes` (under --gpu-memory: all the limit leaves but kLimitReserve): what a
// FreeMemoryGuard poisons. Memory freed since the last call is taken in;
// only when the driver has less than `keep_free_bytes` and a little room left is the cached memory
// returned and taken again (hundreds of milliseconds for tens of GiB). Returns false when even
// then `keep_free_bytes` are not free: tensors still alive (a warm worker's kept reference outputs)
// sit in the segment the memory is held in, which the allocator can only return whole.
bool hold_free_memory(int64_t keep_free_bytes = 0);

// A process that evaluates once (a ModelNew's) holds what its problem needs rather than all free
// memory: taking ~140 GiB and giving it back at the process's end cost hundreds of milliseconds
// a request. `bytes`: the most the allocator reserves through hold_free_memory (0: no ceiling).
// The candidate may still allocate past it (new segments, poisoned as they are handed out); memory
// never held is not mapped in this process, so a stray write there faults instead of passing.
void cap_memory_hold(int64_t bytes);

// Returns every free block the caching allocator holds (what hold_free_memory took among them) to
// the driver, for another process on this GPU; live tensors keep their memory. The next
// hold_free_memory takes it again. Nothing in a process that never held memory (and never started
// CUDA for it).
void give_back_free_memory();

// Under --gpu-memory, what the held memory leaves of the limit: room for the segments of small
// allocations, which the held block cannot serve. The driver's own needs (the kernels' local
// memory, library workspaces) lie outside the limit, on the GPU's real free memory. An evaluation
// can give tensors the limit less this (sandbox/evaluation.h's MemoryPlan counts with it).
inline constexpr int64_t kLimitReserve = int64_t{256} << 20;

// What hold_free_memory does when the driver reports `free_bytes` free, a --gpu-memory limit
// leaves `limit_room` more bytes to the allocator and cap_memory_hold `hold_room`: return the
// allocator's cached memory first or not, then take `take` more bytes (0: not worth it).
struct HoldPlan {
  bool release = false;
  int64_t take = 0;
};
HoldPlan plan_hold(int64_t free_bytes, int64_t keep_free_bytes,
                   int64_t limit_room = std::numeric_limits<int64_t>::max(),
                   int64_t hold_room = std::numeric_limits<int64_t>::max());

using ByteRange = std::pair<uintptr_t, uintptr_t>;  // [begin, end)

// The parts of `regions` (sorted, disjoint) that no range of `allocated` covers: what is left to check.
std::vector<ByteRange> unallocated_parts(const std::vector<ByteRange>& regions, std::vector<ByteRange> allocated);

// The guard zone of an allocation: the `bytes` after its end, as far as they lie in `free_at_start`
// (sorted, disjoint: memory no live tensor owned when the guard began) and outside `live` (the
// allocations made since then and not yet freed: an earlier layer's output that the next layer
// still reads may lie just past a new allocation, and poisoning it would corrupt the candidate's
// own data).
std::vector<ByteRange> guard_zone(const ByteRange& allocation, uintptr_t bytes, const std::vector<ByteRange>& free_at_start,
                                  const std::vector<ByteRange>& live);

inline constexpr uintptr_t kGuardZoneBytes = uintptr_t{2} << 20;

// What poisoned memory holds: 0xFF bytes are a NaN in every floating-point type, so an output a
// candidate never writes cannot pass. The ablation run also fills with kFinitePoisonByte (0x3F: 0.747
// in float32, 1.81 in half), under which an output that does not depend on the kernels' results
// (x - x, x * 0 of what they wrote) stays right where NaN would have spoilt it.
inline constexpr uint8_t kPoisonByte = 0xFF;
inline constexpr uint8_t kFinitePoisonByte = 0x3F;

enum class Poison {
  all_free,     // all free memory poisoned before the run and checked after it
  guard_zones,  // the candidate's allocations and the 2 MiB after each
};

class FreeMemoryGuard {
 public:
  // Poisons (see Poison) with `fill` and starts recording allocations, filling each as it is handed
  // out. `keep_free_bytes` is memory left to the driver (local memory for the candidate's kernels)
  // besides a fixed margin. No-op without a GPU.
  explicit FreeMemoryGuard(int64_t keep_free_bytes = 0, Poison extent = Poison::all_free, uint8_t fill = kPoisonByte);
  ~FreeMemoryGuard();
  FreeMemoryGuard(const FreeMemoryGuard&) = delete;
  FreeMemoryGuard& operator=(const FreeMemoryGuard&) = delete;

  // After the device is synchronised: "" when no stray byte was found, else what was found.
  std::string stray_writes();

 private:
  Poison extent_;
  uint8_t fill_;
  std::vector<ByteRange> poisoned_;  // all_free: [begin, end) free blocks, in address order
};

}  // namespace kbench::check
