#include "check/memory_guard.h"

#include <algorithm>
#include <mutex>

#ifdef KBENCH_WITH_CUDA
#include <ATen/ATen.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

namespace kbench::check {

#ifdef KBENCH_WITH_CUDA
namespace {

// The caching allocator reports every allocation to attached trackers; one tracker per process,
// attached on first use, records while a guard is active.
struct AllocationLog {
  std::mutex mutex;
  bool recording = false;
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;  // [begin, end)
};

AllocationLog& allocation_log() {
  static AllocationLog* log = [] {
    auto* l = new AllocationLog;  // lives as long as the allocator that calls into it
    using c10::cuda::CUDACachingAllocator::TraceEntry;
    c10::cuda::CUDACachingAllocator::attachAllocatorTraceTracker([l](const TraceEntry& e) {
      if (e.action_ != TraceEntry::Action::ALLOC) return;
      std::lock_guard<std::mutex> lock(l->mutex);
      constexpr uintptr_t kRound = 512;  // the allocator's granularity: a block's tail belongs to it
      if (l->recording) l->ranges.emplace_back(e.addr_, e.addr_ + (e.size_ + kRound - 1) / kRound * kRound);
    });
    return l;
  }();
  return *log;
}

}  // namespace

FreeMemoryGuard::FreeMemoryGuard(int64_t keep_free_bytes) {
  auto& log = allocation_log();
  c10::cuda::CUDACachingAllocator::emptyCache();
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return;
  // Room for the driver, small-allocation segments and the kernels' local memory.
  const int64_t margin = (int64_t{1} << 30) + keep_free_bytes;
  if (static_cast<int64_t>(free_bytes) <= margin) return;
  {
    auto poison = at::empty({static_cast<int64_t>(free_bytes) - margin}, at::dtype(at::kByte).device(at::kCUDA));
    poison.fill_(0xFF);
    begin_ = reinterpret_cast<uintptr_t>(poison.data_ptr());
    end_ = begin_ + static_cast<uintptr_t>(poison.numel());
  }  // freed into the allocator's cache: the candidate's large allocations are carved from it
  std::lock_guard<std::mutex> lock(log.mutex);
  log.ranges.clear();
  log.recording = true;
}

FreeMemoryGuard::~FreeMemoryGuard() {
  auto& log = allocation_log();
  std::lock_guard<std::mutex> lock(log.mutex);
  log.recording = false;
  log.ranges.clear();
}

std::string FreeMemoryGuard::stray_writes() {
  if (begin_ == end_) return "";
  auto& log = allocation_log();
  uintptr_t at = begin_, first_bad = 0;
  int64_t bad_regions = 0;
  while (at < end_) {
    // Re-read the log each step: the checks' own reductions may allocate, and those ranges are
    // excluded from the regions checked after them.
    std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
    {
      std::lock_guard<std::mutex> lock(log.mutex);
      ranges = log.ranges;
    }
    std::sort(ranges.begin(), ranges.end());
    uintptr_t gap_end = end_;
    for (const auto& r : ranges) {
      if (r.second <= at) continue;
      if (r.first <= at) {
        at = r.second;
        continue;
      }
      gap_end = std::min(r.first, end_);
      break;
    }
    if (at >= end_) break;
    const auto bytes = static_cast<int64_t>(gap_end - at);
    if (bytes > 0) {
      // All bytes 0xFF <=> every 32-bit word is -1: one min/max pass over words where aligned.
      const bool as_words = at % 4 == 0 && bytes % 4 == 0;
      auto region = at::from_blob(reinterpret_cast<void*>(at), {as_words ? bytes / 4 : bytes},
                                  at::dtype(as_words ? at::kInt : at::kByte).device(at::kCUDA));
      const auto [lo, hi] = at::aminmax(region);
      const bool intact = as_words ? (lo.item<int32_t>() == -1 && hi.item<int32_t>() == -1) : lo.item<uint8_t>() == 0xFF;
      if (!intact && bad_regions++ == 0) first_bad = at;
    }
    at = gap_end;
  }
  if (bad_regions == 0) return "";
  return "wrote into GPU memory that it had not allocated (" + std::to_string(bad_regions) +
         " free region(s) changed, the first " + std::to_string(first_bad - begin_) +
         " bytes into the poisoned pool): an out-of-bounds write";
}

#else

FreeMemoryGuard::FreeMemoryGuard(int64_t) {}
FreeMemoryGuard::~FreeMemoryGuard() = default;
std::string FreeMemoryGuard::stray_writes() { return ""; }

#endif

}  // namespace kbench::check
