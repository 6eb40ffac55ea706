// The scheduling of batch and serve, without GPUs: which job each runner gets, in a fixed order of calls.
#include <future>
#include <set>

#include "sandbox/job_queue.h"

#include "catch.h"

using kbench::sandbox::JobQueue;

namespace {

// A batch's queue: `sizes[p]` jobs of problem p, pushed in problem order (ids consecutive per problem), then closed.
JobQueue& batch_of(JobQueue& queue, const std::vector<size_t>& sizes) {
  for (size_t p = 0; p < sizes.size(); ++p)
    for (size_t j = 0; j < sizes[p]; ++j) queue.push("problem " + std::to_string(p));
  queue.close();
  return queue;
}

}  // namespace

TEST_CASE("each runner keeps to its problem while it has jobs", "[batch]") {
  JobQueue queue(2);
  batch_of(queue, {3, 1, 2});  // jobs 0-2: problem A, 3: B, 4-5: C
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
  JobQueue queue(2);
  batch_of(queue, {2, 5});  // A: 0-1, B: 2-6
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
  JobQueue queue(3);
  batch_of(queue, {0, 4, 0, 3, 1});
  std::multiset<size_t> seen;
  for (size_t r = 0; auto job = queue.next(r % 3); ++r) seen.insert(*job);
  CHECK(seen == std::multiset<size_t>{0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_CASE("a runner waits for the next job to arrive, and stops once the queue is closed", "[serve]") {
  JobQueue queue(1);
  auto waiting = std::async(std::launch::async, [&] { return queue.next(0); });
  CHECK(waiting.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout);
  CHECK(queue.push("A") == 0u);
  CHECK(waiting.get() == 0u);
  auto after_close = std::async(std::launch::async, [&] { return queue.next(0); });
  queue.close();
  CHECK(after_close.get() == std::nullopt);
}

TEST_CASE("a job arriving for a loaded problem goes to its runner, unless another runner is free", "[serve]") {
  JobQueue queue(2);
  queue.push("A");
  CHECK(queue.next(0) == 0u);  // runner 0 loads A
  queue.push("B");
  queue.push("A");
  CHECK(queue.next(0) == 2u);  // runner 0 takes its A before the older B
  CHECK(queue.next(1) == 1u);  // runner 1 takes B
  queue.push("A");
  CHECK(queue.next(1) == 3u);  // runner 0 is busy and runner 1 is free: it shares A rather than idle
}

TEST_CASE("a free runner goes back to a problem it has had, then to one nobody has had, before another runner's", "[serve]") {
  JobQueue queue(2);
  queue.push("A"), queue.push("B");
  CHECK(queue.next(0) == 0u);
  CHECK(queue.next(1) == 1u);
  queue.push("C"), queue.push("D");
  CHECK(queue.next(0) == 2u);  // runner 0 has had A and C
  CHECK(queue.next(1) == 3u);  // runner 1 has had B and D
  queue.push("B"), queue.push("A");
  CHECK(queue.next(0) == 5u);  // its own A before the older B, which runner 1 has had
  CHECK(queue.next(1) == 4u);
  queue.push("D"), queue.push("E");
  CHECK(queue.next(0) == 7u);  // E, which nobody has had, before runner 1's D
  CHECK(queue.next(1) == 6u);
}

TEST_CASE("a job passed over too often for a runner's problem goes first", "[serve]") {
  JobQueue queue(1, 2);
  queue.push("A");
  CHECK(queue.next(0) == 0u);
  queue.push("B");  // id 1
  for (int i = 0; i < 3; ++i) queue.push("A");  // ids 2-4
  CHECK(queue.next(0) == 2u);  // B passed over once
  CHECK(queue.next(0) == 3u);  // twice: its limit
  CHECK(queue.next(0) == 1u);
  CHECK(queue.next(0) == 4u);  // the runner is on B now, and A is waiting with nobody on it
  CHECK(queue.waiting() == 0u);
}

TEST_CASE("a runner learns the problem it will get next, so that its worker can read it ahead", "[batch]") {
  JobQueue queue(1);
  batch_of(queue, {2, 1});  // A: 0-1, B: 2
  CHECK(queue.next(0) == 0u);
  CHECK(queue.upcoming(0) == "problem 0");  // A still has a job
  CHECK(queue.next(0) == 1u);
  CHECK(queue.upcoming(0) == "problem 1");  // A done: B comes next
  CHECK(queue.next(0) == 2u);               // asking handed nothing out
  CHECK(queue.upcoming(0) == std::nullopt);
}

TEST_CASE("a problem's queue key gives its level and problem back", "[batch]") {
  using kbench::sandbox::level_and_problem;
  using kbench::sandbox::problem_queue_key;
  CHECK(problem_queue_key(2, 12) == "2/12");
  CHECK(level_and_problem(problem_queue_key(3, 4)) == std::pair{3, 4});
}
