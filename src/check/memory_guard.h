// Out-of-bounds writes into free GPU memory. Before the candidate runs, every free byte the caching
// allocator holds is filled with 0xFF (a NaN in float32, so an output the candidate never writes
// cannot pass by inheriting an earlier answer, the reference's included). While it runs, every
// allocation it makes is recorded. Afterwards, a byte of that free memory outside all those
// allocations that is no longer 0xFF was written past the end of some buffer.
//
// The allocator is first made to hold nearly all of the GPU's free memory, once per process: the
// memory stays in its cache between guards, so later guards only refill the free blocks (tens of
// milliseconds) instead of returning and re-allocating tens of GiB (hundreds).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kbench::check {

// Makes the caching allocator hold all free device memory but a margin of 1 GiB and
// `keep_free_bytes`: what a FreeMemoryGuard poisons. Memory freed since the last call is taken in;
// only when the driver has less than `keep_free_bytes` and a little room left is the cached memory
// returned and taken again (hundreds of milliseconds for tens of GiB).
void hold_free_memory(int64_t keep_free_bytes = 0);

// What hold_free_memory does when the driver reports `free_bytes` free: return the allocator's
// cached memory first or not, then take `take` more bytes (0: not worth it).
struct HoldPlan {
  bool release = false;
  int64_t take = 0;
};
HoldPlan plan_hold(int64_t free_bytes, int64_t keep_free_bytes);

using ByteRange = std::pair<uintptr_t, uintptr_t>;  // [begin, end)

// The parts of `regions` (sorted, disjoint) that no range of `allocated` covers: what is left to check.
std::vector<ByteRange> unallocated_parts(const std::vector<ByteRange>& regions, std::vector<ByteRange> allocated);

class FreeMemoryGuard {
 public:
  // Poisons the free memory and starts recording allocations. `keep_free_bytes` is memory left to
  // the driver (local memory for the candidate's kernels) besides a fixed margin. No-op without a GPU.
  explicit FreeMemoryGuard(int64_t keep_free_bytes = 0);
  ~FreeMemoryGuard();
  FreeMemoryGuard(const FreeMemoryGuard&) = delete;
  FreeMemoryGuard& operator=(const FreeMemoryGuard&) = delete;

  // After the device is synchronised: "" when no stray byte was found, else what was found.
  std::string stray_writes();

 private:
  std::vector<ByteRange> poisoned_;  // [begin, end) free blocks, in address order
};

}  // namespace kbench::check
