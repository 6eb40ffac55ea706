// What the out-of-bounds check reads after a candidate ran: the poisoned free blocks (or guard zones)
// and the segments mapped meanwhile, less every range the candidate allocated (overlapping, repeated
// and straddling ranges included). On the GPU: a stray write into a segment the allocator maps
// while a guard is on is found; the adversarial tests cover the rest on the GPU.
#include "check/memory_guard.h"
#include "fixtures.h"

#ifdef KBENCH_WITH_CUDA
#include <ATen/ATen.h>
#include <cuda_runtime_api.h>
#endif

#include "catch.h"

using kbench::check::ByteRange;
using kbench::check::guard_zone;
using kbench::check::unallocated_parts;

TEST_CASE("the unallocated parts of poisoned blocks are what the allocations leave", "[check]") {
  const std::vector<ByteRange> blocks = {{100, 200}, {300, 400}, {500, 600}};
  CHECK(unallocated_parts(blocks, {}) == blocks);
  // Allocations inside, straddling a block's end, repeated, overlapping, and outside every block.
  const auto parts = unallocated_parts(blocks, {{120, 130}, {190, 310}, {120, 130}, {340, 360}, {350, 370},
                                                {0, 50}, {700, 800}});
  CHECK(parts == std::vector<ByteRange>{{100, 120}, {130, 190}, {310, 340}, {370, 400}, {500, 600}});
  // A block allocated whole, or by pieces that meet, leaves nothing of it.
  CHECK(unallocated_parts({{100, 200}}, {{100, 200}}).empty());
  CHECK(unallocated_parts({{100, 200}}, {{150, 200}, {90, 150}}).empty());
}

TEST_CASE("a guard checks the poisoned regions and the segments mapped meanwhile, less what was allocated", "[check]") {
  using kbench::check::regions_to_check;
  // Guard zones that overlap each other and a segment mapped during the run; a second segment apart.
  const std::vector<ByteRange> zones = {{100, 300}, {250, 400}, {900, 1000}};
  const std::vector<ByteRange> mapped = {{350, 600}, {2000, 3000}};
  // The candidate's blocks: one inside the first segment, one at the start of the second.
  const auto parts = regions_to_check(zones, mapped, {{400, 450}, {2000, 2500}});
  CHECK(parts == std::vector<ByteRange>{{100, 400}, {450, 600}, {900, 1000}, {2500, 3000}});
  // Nothing mapped: the poisoned regions alone, joined.
  CHECK(regions_to_check({{10, 20}, {15, 30}}, {}, {}) == std::vector<ByteRange>{{10, 30}});
  // A segment mapped and allocated whole leaves nothing to check.
  CHECK(regions_to_check({}, {{0, 64}}, {{0, 64}}).empty());
}

TEST_CASE("an allocation's guard zone is what follows it and was free when the guard began", "[check]") {
  const std::vector<ByteRange> free_at_start = {{1000, 5000}, {6000, 6500}, {8000, 9000}};
  // Carved from the start of a free block: the zone is the rest of it, up to the zone's size.
  CHECK(guard_zone({1000, 1512}, 1024, free_at_start, {}) == std::vector<ByteRange>{{1512, 2536}});
  // Near a block's end: the zone stops where the block did, and goes on in the next free block.
  CHECK(guard_zone({4000, 4800}, 2000, free_at_start, {}) == std::vector<ByteRange>{{4800, 5000}, {6000, 6500}});
  // Followed by memory that was in use (a live tensor's): no zone there.
  CHECK(guard_zone({6500, 7000}, 512, free_at_start, {}).empty());
  CHECK(guard_zone({9000, 9512}, 512, free_at_start, {}).empty());
}

TEST_CASE("a guard zone leaves out what the candidate allocated since the guard began and still holds", "[check]") {
  // L3#3's pattern: a layer's output is allocated just past where the next layer's output lands;
  // the next allocation's zone must not poison the tensor that the next layer reads.
  const std::vector<ByteRange> free_at_start = {{0, 100000}};
  const std::vector<ByteRange> live = {{4096, 8192}};
  CHECK(guard_zone({0, 4096}, 2048, free_at_start, live).empty());
  // A live allocation inside the zone splits it; one that was freed (no longer live) does not.
  CHECK(guard_zone({0, 1024}, 4096, free_at_start, {{2048, 3072}}) == std::vector<ByteRange>{{1024, 2048}, {3072, 5120}});
  CHECK(guard_zone({0, 1024}, 4096, free_at_start, {}) == std::vector<ByteRange>{{1024, 5120}});
}

TEST_CASE("a stray write into a segment mapped during a guard is found", "[gpu]") {
  if (!kbench::testing::gpu_or_skip()) return;
#ifdef KBENCH_WITH_CUDA
  using kbench::check::FreeMemoryGuard;
  using kbench::check::Poison;
  constexpr int64_t MiB = int64_t{1} << 20;
  for (const auto extent : {Poison::all_free, Poison::guard_zones}) {
    kbench::check::return_cached_memory();  // nothing cached: the block below comes from a new segment
    FreeMemoryGuard guard(extent);
    // 30 MiB and 4 KiB: the allocator maps 32 MiB for it. 1 MiB past its end lies in that segment,
    // outside any guard zone that free memory at the guard's start would give it.
    const auto block = at::empty({30 * MiB + 4096}, at::dtype(at::kByte).device(at::kCUDA));
    REQUIRE(cudaMemset(static_cast<char*>(block.data_ptr()) + block.numel() + MiB, 0, 256) == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK_THAT(guard.stray_writes(), contains_text("out-of-bounds write"));
  }
  {  // the same block written within bounds: nothing found
    kbench::check::return_cached_memory();
    FreeMemoryGuard guard(Poison::guard_zones);
    const auto block = at::empty({30 * MiB + 4096}, at::dtype(at::kByte).device(at::kCUDA));
    block.fill_(7);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(guard.stray_writes().empty());
  }
#endif
}
