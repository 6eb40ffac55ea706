#include "check/memory_guard.h"

#include <algorithm>
#include <map>
#include <mutex>

#ifdef KBENCH_WITH_CUDA
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

namespace kbench::check {

std::vector<ByteRange> unallocated_parts(const std::vector<ByteRange>& regions, std::vector<ByteRange> allocated) {
  std::sort(allocated.begin(), allocated.end());
  std::vector<ByteRange> out;
  for (auto [at, end] : regions) {
    for (const auto& [begin, stop] : allocated) {
      if (stop <= at) continue;
      if (begin >= end) break;
      if (begin > at) out.emplace_back(at, begin);
      at = std::max(at, stop);
      if (at >= end) break;
    }
    if (at < end) out.emplace_back(at, end);
  }
  return out;
}

std::vector<ByteRange> guard_zone(const ByteRange& allocation, uintptr_t bytes, const std::vector<ByteRange>& free_at_start,
                                  const std::vector<ByteRange>& live) {
  const ByteRange zone{allocation.second, allocation.second + bytes};
  std::vector<ByteRange> parts;
  auto it = std::upper_bound(free_at_start.begin(), free_at_start.end(), ByteRange{zone.first, UINTPTR_MAX});
  if (it != free_at_start.begin()) --it;  // the free block that may hold the zone's start
  for (; it != free_at_start.end() && it->first < zone.second; ++it) {
    const auto begin = std::max(it->first, zone.first), end = std::min(it->second, zone.second);
    if (begin < end) parts.emplace_back(begin, end);
  }
  return unallocated_parts(parts, live);
}

HoldPlan plan_hold(int64_t free_bytes, int64_t keep_free_bytes, int64_t limit_room, int64_t hold_room) {
  // Taking leaves 1 GiB besides `keep_free_bytes` to the driver: new small-allocation segments,
  // library workspaces; under a limit, which the driver's needs lie outside of, kLimitReserve of
  // it. Giving back is needed only once the kernels' local memory (`keep_free_bytes`) would no
  // longer fit beside a 256 MiB reserve: the margin left by an earlier hold usually covers a later
  // one's `keep_free_bytes`, and returning tens of GiB to take them again costs hundreds of
  // milliseconds.
  constexpr int64_t kMargin = int64_t{1} << 30, kReserve = int64_t{256} << 20, kWorthTaking = int64_t{64} << 20;
  HoldPlan plan;
  plan.release = free_bytes < keep_free_bytes + kReserve;
  const int64_t take = std::min({free_bytes - kMargin - keep_free_bytes, limit_room - kLimitReserve, hold_room});
  if (!plan.release && take >= kWorthTaking) plan.take = take;
  return plan;
}

#ifdef KBENCH_WITH_CUDA
namespace {

namespace allocator = c10::cuda::CUDACachingAllocator;

// The caching allocator reports every allocation to attached trackers; one tracker per process,
// attached on first use, works while a guard is active: it fills each block as it is handed out
// (on the allocation's stream, so before anything uses it) and the block's guard zone, and records
// both. It records the segments returned to the driver too: when an allocation finds the GPU full,
// the allocator releases its free segments (a poisoned one among them) and the driver may hand that
// memory to others (cuBLAS, local memory), whose writes there are not the candidate's.
struct AllocationLog {
  std::mutex mutex;
  bool recording = false;
  std::vector<ByteRange> ranges;         // allocated (or returned to the driver) while recording
  std::map<uintptr_t, uintptr_t> live;   // allocated while recording and not yet freed: begin -> end
  std::vector<ByteRange> free_at_start;  // guard zones: memory that was free when the guard began
  std::vector<ByteRange> zones;          // guard zones poisoned so far
  bool zoned = false;
  uint8_t fill = kPoisonByte;            // what new blocks are filled with
};

void poison(const ByteRange& r, uint8_t fill, cudaStream_t stream) {
  cudaMemsetAsync(reinterpret_cast<void*>(r.first), fill, r.second - r.first, stream);
}

AllocationLog& allocation_log() {
  static AllocationLog* log = [] {
    auto* l = new AllocationLog;  // lives as long as the allocator that calls into it
    allocator::attachAllocatorTraceTracker([l](const allocator::TraceEntry& e) {
      using Action = allocator::TraceEntry::Action;
      if (e.action_ != Action::ALLOC && e.action_ != Action::SEGMENT_FREE && e.action_ != Action::FREE_COMPLETED) return;
      std::lock_guard<std::mutex> lock(l->mutex);
      if (!l->recording) return;
      if (e.action_ == Action::FREE_COMPLETED) {
        l->live.erase(static_cast<uintptr_t>(e.addr_));
        return;
      }
      constexpr uintptr_t kRound = 512;  // the allocator's granularity: a block's tail belongs to it
      const ByteRange range{static_cast<uintptr_t>(e.addr_),
                            static_cast<uintptr_t>(e.addr_) + (static_cast<uintptr_t>(e.size_) + kRound - 1) / kRound * kRound};
      l->ranges.push_back(range);
      if (e.action_ != Action::ALLOC) return;
      poison(range, l->fill, static_cast<cudaStream_t>(e.stream_));
      if (!l->zoned) return;
      const std::vector<ByteRange> live(l->live.begin(), l->live.end());
      l->live.emplace(range);
      for (const auto& zone : guard_zone(range, kGuardZoneBytes, l->free_at_start, live)) {
        poison(zone, l->fill, static_cast<cudaStream_t>(e.stream_));
        l->zones.push_back(zone);
      }
    });
    return l;
  }();
  return *log;
}

// The free blocks of every segment the allocator holds on the current device, in address order.
std::vector<ByteRange> free_blocks() {
  int device = 0;
  cudaGetDevice(&device);
  std::vector<ByteRange> out;
  for (const auto& segment : allocator::snapshot().segments) {
    if (segment.device != device) continue;
    auto at = static_cast<uintptr_t>(segment.address);
    for (const auto& block : segment.blocks) {
      const auto size = static_cast<uintptr_t>(block.size);
      if (!block.allocated && !block.active) out.emplace_back(at, at + size);
      at += size;
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Sorted, overlapping ranges joined.
std::vector<ByteRange> merged(std::vector<ByteRange> ranges) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<ByteRange> out;
  for (const auto& r : ranges) {
    if (!out.empty() && r.first <= out.back().second) out.back().second = std::max(out.back().second, r.second);
    else out.push_back(r);
  }
  return out;
}

at::Tensor device_bytes(uintptr_t begin, uintptr_t end, at::ScalarType type) {
  const auto element = static_cast<uintptr_t>(c10::elementSize(type));
  return at::from_blob(reinterpret_cast<void*>(begin), {static_cast<int64_t>((end - begin) / element)},
                       at::dtype(type).device(at::kCUDA));
}

int64_t g_memory_limit = 0;  // --gpu-memory, in bytes; 0: none
int64_t g_hold_cap = 0;      // cap_memory_hold, in bytes; 0: none
bool g_held = false;         // hold_free_memory has run in this process

// What the caching allocator has reserved on the current GPU.
int64_t reserved_bytes() {
  static const bool set_up = [] {  // its statistics exist once its first allocation has set it up
    at::empty({1}, at::dtype(at::kByte).device(at::kCUDA));
    return true;
  }();
  (void)set_up;
  int device = 0;
  cudaGetDevice(&device);
  // Index 0 is StatType::AGGREGATE (all pools), whose namespace differs between libtorch versions.
  return allocator::getDeviceStats(device).reserved_bytes[0].current;
}

HoldPlan plan_hold_now(int64_t keep_free_bytes) {
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return {};
  constexpr auto unlimited = std::numeric_limits<int64_t>::max();
  return plan_hold(static_cast<int64_t>(free_bytes), keep_free_bytes,
                   g_memory_limit > 0 ? g_memory_limit - reserved_bytes() : unlimited,
                   g_hold_cap > 0 ? g_hold_cap - reserved_bytes() : unlimited);
}

}  // namespace

void limit_gpu_memory(int device, int64_t bytes) {
  cudaSetDevice(device);
  if (bytes == g_memory_limit) return;
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess || total == 0) return;
  at::empty({1}, at::dtype(at::kByte).device(at::kCUDA));  // the allocator is set up by its first use
  if (bytes > 0 && reserved_bytes() > bytes) allocator::emptyCache();
  allocator::setMemoryFraction(bytes > 0 ? std::min(1.0, static_cast<double>(bytes) / static_cast<double>(total)) : 1.0,
                               static_cast<c10::DeviceIndex>(device));
  g_memory_limit = bytes;
}

void cap_memory_hold(int64_t bytes) { g_hold_cap = bytes; }

bool hold_free_memory(int64_t keep_free_bytes) {
  g_held = true;
  auto plan = plan_hold_now(keep_free_bytes);
  if (plan.release) {
    give_back_free_memory();  // the allocator returns only segments with nothing alive in them
    plan = plan_hold_now(keep_free_bytes);
    if (plan.release) return false;
  }
  // Allocated and freed at once: it stays in the allocator's cache as one free block.
  if (plan.take > 0) at::empty({plan.take}, at::dtype(at::kByte).device(at::kCUDA));
  return true;
}

void give_back_free_memory() {
  if (!g_held) return;
  // cuBLAS keeps its workspace, made by the first matmul after a hold, in the held segment.
  at::cuda::clearCublasWorkspaces();
  allocator::emptyCache();
}

FreeMemoryGuard::FreeMemoryGuard(int64_t keep_free_bytes, Poison extent, uint8_t fill) : extent_(extent), fill_(fill) {
  auto& log = allocation_log();
  hold_free_memory(keep_free_bytes);
  auto free_now = free_blocks();
  if (extent == Poison::all_free)
    for (const auto& [begin, end] : free_now) device_bytes(begin, end, at::kByte).fill_(fill);
  std::lock_guard<std::mutex> lock(log.mutex);
  log.fill = fill;
  log.ranges.clear();
  log.live.clear();
  log.zones.clear();
  log.zoned = extent == Poison::guard_zones;
  if (extent == Poison::all_free) poisoned_ = std::move(free_now);
  else log.free_at_start = std::move(free_now);
  log.recording = true;
}

FreeMemoryGuard::~FreeMemoryGuard() {
  auto& log = allocation_log();
  std::lock_guard<std::mutex> lock(log.mutex);
  log.recording = false;
  log.ranges.clear();
  log.live.clear();
  log.zones.clear();
  log.free_at_start.clear();
}

std::string FreeMemoryGuard::stray_writes() {
  auto& log = allocation_log();
  const auto recorded = [&] {
    std::lock_guard<std::mutex> lock(log.mutex);
    return log.ranges;
  };
  int64_t bad_regions = 0;
  std::string first_bad;
  const auto note = [&](bool intact, const ByteRange& r) {
    if (!intact && bad_regions++ == 0) first_bad = std::to_string(r.second - r.first);
  };
  // What was poisoned: all free memory, or the guard zones (sorted and merged, as zones of
  // neighbouring blocks may overlap). The reductions below allocate: their blocks are still recorded
  // (and left out of what is checked), but get no guard zone of their own.
  std::vector<ByteRange> poisoned = poisoned_;
  {
    std::lock_guard<std::mutex> lock(log.mutex);
    log.zoned = false;
    if (extent_ == Poison::guard_zones) poisoned = merged(log.zones);
  }
  // Small regions first, copied to the host before anything here allocates on the device: the
  // reductions below take their temporaries from the small-allocation pool, perhaps from one of
  // these regions, and would find their own results there.
  constexpr uintptr_t kOnHost = uintptr_t{2} << 20;
  std::vector<ByteRange> large;
  std::vector<uint8_t> bytes;
  for (const auto& r : unallocated_parts(poisoned, recorded())) {
    if (r.second - r.first > kOnHost) {
      large.push_back(r);
      continue;
    }
    bytes.resize(r.second - r.first);
    cudaMemcpy(bytes.data(), reinterpret_cast<void*>(r.first), bytes.size(), cudaMemcpyDeviceToHost);
    note(std::all_of(bytes.begin(), bytes.end(), [&](uint8_t b) { return b == fill_; }), r);
  }
  // Large regions on the device, one min/max pass each. The log is read again for each: what these
  // reductions allocate is left out of the regions checked after them.
  for (const auto& region : large) {
    for (const auto& r : unallocated_parts({region}, recorded())) {
      // All bytes the fill <=> every 32-bit word is four of it: words where aligned.
      const bool words = r.first % 4 == 0 && r.second % 4 == 0;
      const auto [lo, hi] = at::aminmax(device_bytes(r.first, r.second, words ? at::kInt : at::kByte));
      const auto word = static_cast<int32_t>(uint32_t{fill_} * 0x01010101u);
      note(words ? (lo.item<int32_t>() == word && hi.item<int32_t>() == word)
                 : (lo.item<uint8_t>() == fill_ && hi.item<uint8_t>() == fill_),
           r);
    }
  }
  if (bad_regions == 0) return "";
  return "wrote into GPU memory that it had not allocated (" + std::to_string(bad_regions) +
         " free region(s) changed, the first of " + first_bad + " bytes): an out-of-bounds write";
}

#else

void limit_gpu_memory(int, int64_t) {}
void cap_memory_hold(int64_t) {}
bool hold_free_memory(int64_t) { return true; }
void give_back_free_memory() {}
FreeMemoryGuard::FreeMemoryGuard(int64_t, Poison extent, uint8_t fill) : extent_(extent), fill_(fill) {}
FreeMemoryGuard::~FreeMemoryGuard() = default;
std::string FreeMemoryGuard::stray_writes() { return ""; }

#endif

}  // namespace kbench::check
