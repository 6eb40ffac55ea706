// The batch's scheduling, without GPUs: which job each runner gets, in a fixed order of calls.
#include <set>

#include "sandbox/job_queue.h"

#include "catch.h"

using kbench::sandbox::JobQueue;

TEST_CASE("each runner keeps to its problem while it has jobs", "[batch]") {
  JobQueue queue({3, 1, 2}, 2);  // jobs 0-2: problem A, 3: B, 4-5: C
  CHECK(queue.next(0) == 0u);
  CHECK(queue.next(1) == 3u);  // runner 1 starts B rather than share A
  CHECK(queue.next(0) == 1u);
  CHECK(queue.next(1) == 4u);  // B is done: C, which nobody started
  CHECK(queue.next(0) == 2u);
  CHECK(queue.next(1) == 5u);
  CHECK(queue.next(0) == std::nullopt);
  CHECK(queue.next(1) == std::nullopt);
}

TEST_CASE("once every problem is started, a free runner helps with the largest rest", "[batch]") {
  JobQueue queue({2, 5}, 2);  // A: 0-1, B: 2-6
  CHECK(queue.next(0) == 0u);
  CHECK(queue.next(1) == 2u);
  CHECK(queue.next(0) == 1u);
  CHECK(queue.next(0) == 3u);  // A done, nothing unstarted: joins B
  CHECK(queue.next(1) == 4u);
  std::set<size_t> rest;
  for (size_t r = 0; auto job = queue.next(r % 2); ++r) rest.insert(*job);
  CHECK(rest == std::set<size_t>{5, 6});
}

TEST_CASE("every job is handed out exactly once, empty problems included", "[batch]") {
  JobQueue queue({0, 4, 0, 3, 1}, 3);
  std::multiset<size_t> seen;
  for (size_t r = 0; auto job = queue.next(r % 3); ++r) seen.insert(*job);
  CHECK(seen == std::multiset<size_t>{0, 1, 2, 3, 4, 5, 6, 7});
}
