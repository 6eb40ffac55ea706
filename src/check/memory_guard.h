// Poisoned memory for the candidate's runs. Every block the candidate allocates while a guard is on
// is filled with 0xFF as it is handed out (a NaN in float32), so an output it never writes cannot
// pass by inheriting an earlier answer, the reference's included. Out-of-bounds writes are found by
// poisoning memory around its buffers and checking, after it ran, that what it had not allocated is
// still 0xFF. What a kernel can reach is the memory this process has mapped: the segments PyTorch's
// caching allocator holds (GPU memory the driver has not mapped here faults when touched: an illegal
// address, not a silent read or write). Two extents:
// - all free memory: every free byte of the allocator's segments is poisoned before the run and
//   checked after it. The first trial of an evaluation runs so: a stray write anywhere in them is
//   found, and whatever earlier evaluations left there (a reference's output for the same seed, in a
//   batch) is wiped before this candidate runs.
// - guard zones: the 2 MiB after each block the candidate allocates (what of it was free) is
//   poisoned as the block is handed out and checked after the run: the writes past the end of a
//   buffer that indexing bugs make. Later trials run so, at a cost of what they allocate.
// A segment the allocator maps while a guard is on (the driver may hand back memory this process
// used before) is poisoned whole as it is mapped and checked whole, with either extent.
// The cost follows the memory the problem's evaluations use, not the GPU's size: the allocator keeps
// what it freed for reuse, and a worker that changes problems gives the last problem's back.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kbench::check {

// --gpu-memory: the caching allocator of this process may hold at most `bytes` of GPU `device` (0:
// all of it), as if the GPU had that much memory; an allocation past it fails as on a GPU that
// small. Memory held beyond a new, lower limit is given back first. Makes `device` the current one.
void limit_gpu_memory(int device, int64_t bytes);

// Gives the memory the caching allocator keeps for reuse back to the driver (and cuBLAS's workspace,
// which pins the segment it lies in): before a new problem, whose first trial would otherwise
// poison and check what the last one used; and when a kernel's local memory, which the driver
// reserves at its first launch, would not fit beside it. No-op without a GPU.
void return_cached_memory();

// Whether the driver has `bytes` free for the kernels' local memory, beside a 256 MiB reserve.
bool local_memory_fits(int64_t bytes);

using ByteRange = std::pair<uintptr_t, uintptr_t>;  // [begin, end)

// The parts of `regions` (sorted, disjoint) that no range of `allocated` covers: what is left to check.
std::vector<ByteRange> unallocated_parts(const std::vector<ByteRange>& regions, std::vector<ByteRange> allocated);

// What a guard checks after the run: the poisoned regions (free blocks or guard zones, which may
// overlap) and the segments mapped while it was on, joined, less what was allocated meanwhile.
std::vector<ByteRange> regions_to_check(std::vector<ByteRange> poisoned, const std::vector<ByteRange>& mapped,
                                        const std::vector<ByteRange>& allocated);

// The guard zone of an allocation: the `bytes` after its end, as far as they lie in `free_at_start`
// (sorted, disjoint: memory no live tensor owned when the guard began) and outside `live` (the
// allocations made since then and not yet freed: an earlier layer's output that the next layer
// still reads may lie just past a new allocation, and poisoning it would corrupt the candidate's
// own data).
std::vector<ByteRange> guard_zone(const ByteRange& allocation, uintptr_t bytes, const std::vector<ByteRange>& free_at_start,
                                  const std::vector<ByteRange>& live);

inline constexpr uintptr_t kGuardZoneBytes = uintptr_t{2} << 20;

enum class Poison {
  all_free,     // all free memory poisoned before the run and checked after it
  guard_zones,  // the candidate's allocations and the 2 MiB after each
};

class FreeMemoryGuard {
 public:
  // Poisons (see Poison) and starts recording allocations, filling each as it is handed out.
  // No-op without a GPU.
  explicit FreeMemoryGuard(Poison extent = Poison::all_free);
  ~FreeMemoryGuard();
  FreeMemoryGuard(const FreeMemoryGuard&) = delete;
  FreeMemoryGuard& operator=(const FreeMemoryGuard&) = delete;

  // After the device is synchronised: "" when no stray byte was found, else what was found.
  std::string stray_writes();

 private:
  Poison extent_;
  std::vector<ByteRange> poisoned_;  // all_free: [begin, end) free blocks, in address order
};

}  // namespace kbench::check
