// What the out-of-bounds check reads after a candidate ran: the poisoned free blocks less every
// range the candidate allocated (overlapping, repeated and straddling ranges included). The GPU
// side (poisoning, detection of stray writes) is covered by the adversarial tests on the GPU.
#include "check/memory_guard.h"
#include "catch.h"

using kbench::check::ByteRange;
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
