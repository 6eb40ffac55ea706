// The order in which GPUs take evaluations, for a batch (every job known up front) and for serve
// (jobs arrive one at a time). Each runner keeps to its problem while jobs of it wait, so its
// worker's loaded reference, kept reference outputs and baselines serve them all; a free runner
// starts a problem that no other runner is on before sharing one (first one it has had before,
// whose baselines its GPU has timed), and shares one rather than idle.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kbench::sandbox {

// The key batch and serve queue a problem's jobs under ("2/12"), and its level and problem back.
std::string problem_queue_key(int level, int problem);
std::pair<int, int> level_and_problem(const std::string& queue_key);

class JobQueue {
 public:
  // `runners`: how many take jobs. `max_pass_overs`: how often a waiting job may be passed over for
  // a later job of a runner's problem before it goes first; 0: never (a batch, which wants the
  // fewest problem switches and has no caller waiting on a particular job).
  explicit JobQueue(size_t runners, size_t max_pass_overs = 0);

  // Adds a job of `problem` (any key); returns its id: 0, 1, 2, ... in the order of pushing.
  size_t push(const std::string& problem);

  // No more jobs will come: next() returns nothing once every job is handed out.
  void close();

  // The next job for `runner`, waiting until there is one; nothing once closed and empty.
  std::optional<size_t> next(size_t runner);

  // The problem of the job next(runner) would hand out now, if any waits: what a worker can start
  // loading while it evaluates the job in hand.
  std::optional<std::string> upcoming(size_t runner);

  size_t waiting() const;

 private:
  struct Job {
    size_t id;
    std::string problem;
    size_t passed_over = 0;
  };
  using Iter = std::list<Job>::iterator;
  Iter pick(size_t runner);  // under the lock, with jobs waiting
  bool taken_by_other(const std::string& problem, size_t runner) const;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::list<Job> waiting_;  // in the order of pushing
  std::vector<std::optional<std::string>> current_;  // each runner's problem
  std::vector<std::set<std::string>> ran_;            // the problems each runner has had
  size_t max_pass_overs_;
  size_t next_id_ = 0;
  bool closed_ = false;
};

}  // namespace kbench::sandbox
