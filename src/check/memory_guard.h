// Out-of-bounds writes into free GPU memory. Before the candidate runs, every free byte the caching
// allocator can hand out is filled with 0xFF (a NaN in float32, so an output the candidate never
// writes cannot pass by inheriting an earlier answer). While it runs, every allocation it makes is
// recorded. Afterwards, a byte of that poisoned range outside all those allocations that is no
// longer 0xFF was written past the end of some buffer: a write past an output lands there.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kbench::check {

class FreeMemoryGuard {
 public:
  // Poisons the free memory, less `keep_free_bytes` (local memory the driver will need for the
  // candidate's kernels), and starts recording allocations. No-op without a GPU.
  explicit FreeMemoryGuard(int64_t keep_free_bytes = 0);
  ~FreeMemoryGuard();
  FreeMemoryGuard(const FreeMemoryGuard&) = delete;
  FreeMemoryGuard& operator=(const FreeMemoryGuard&) = delete;

  // After the device is synchronised: "" when no stray byte was found, else what was found.
  // Allocations under 1 MiB come from other segments and are not covered.
  std::string stray_writes();

 private:
  uintptr_t begin_ = 0, end_ = 0;  // the poisoned range, empty without a GPU
};

}  // namespace kbench::check
