// What the out-of-bounds check reads after a candidate ran: the poisoned free blocks less every
// range the candidate allocated (overlapping, repeated and straddling ranges included). The GPU
// side (poisoning, detection of stray writes) is covered by the adversarial tests on the GPU.
#include "check/memory_guard.h"

#include <limits>

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

TEST_CASE("memory is held to a 1 GiB margin and given back only when local memory would not fit", "[check]") {
  using kbench::check::plan_hold;
  constexpr int64_t MiB = int64_t{1} << 20, GiB = int64_t{1} << 30;
  // A fresh GPU: everything but the margin and the kernels' local memory is taken.
  auto plan = plan_hold(80 * GiB, 10 * MiB);
  CHECK_FALSE(plan.release);
  CHECK(plan.take == 79 * GiB - 10 * MiB);
  // The margin an earlier hold left covers a small local-memory need: nothing given back or taken.
  plan = plan_hold(GiB, 10 * MiB);
  CHECK_FALSE(plan.release);
  CHECK(plan.take == 0);
  // Freed memory since the last hold is taken in once it is worth it.
  CHECK(plan_hold(GiB + 100 * MiB, 0).take == 100 * MiB);
  CHECK(plan_hold(GiB + 10 * MiB, 0).take == 0);
  // Local memory beyond what is left (less a 256 MiB reserve): the cache must be given back.
  CHECK(plan_hold(GiB, 800 * MiB).release);
  CHECK(plan_hold(300 * MiB, 0).take == 0);
  CHECK(plan_hold(200 * MiB, 0).release);
  // Under --gpu-memory 22 on a bigger GPU: all of the limit but the small allocations' reserve.
  CHECK(plan_hold(139 * GiB, 10 * MiB, 22 * GiB).take == 22 * GiB - kbench::check::kLimitReserve);
  CHECK(plan_hold(139 * GiB, 10 * MiB, 22 * GiB - 7 * GiB).take == 15 * GiB - kbench::check::kLimitReserve);
  CHECK(plan_hold(139 * GiB, 0, 100 * MiB).take == 0);  // the limit is reached
  CHECK(plan_hold(2 * GiB, 0, 22 * GiB).take == GiB);     // the GPU itself is nearly full
  // A process that evaluates once holds what its problem needs (cap_memory_hold), within the limit.
  const auto unlimited = std::numeric_limits<int64_t>::max();
  CHECK(plan_hold(139 * GiB, 10 * MiB, unlimited, 26 * GiB).take == 26 * GiB);
  CHECK(plan_hold(139 * GiB, 10 * MiB, 22 * GiB, 26 * GiB).take == 22 * GiB - kbench::check::kLimitReserve);
  CHECK(plan_hold(139 * GiB, 0, unlimited, 10 * MiB).take == 0);  // what it needs is held already
  CHECK(plan_hold(139 * GiB, 0, unlimited, -GiB).take == 0);      // the weights alone passed it
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
