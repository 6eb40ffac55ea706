// The order in which a batch's GPUs take its jobs. Each GPU keeps to one problem while it has
// samples left, so a problem's reference is loaded and its eager figure timed on one GPU; GPUs share
// a problem only once no problem is left that none has started, so none idles at the end.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <vector>

namespace kbench::sandbox {

class JobQueue {
 public:
  // `problem_sizes`: the number of jobs of each problem, in job order (job indices are consecutive
  // per problem). `runners`: how many GPUs take jobs.
  JobQueue(const std::vector<size_t>& problem_sizes, size_t runners);

  // The next job for `runner` (thread-safe), or nothing once every job is handed out.
  std::optional<size_t> next(size_t runner);

 private:
  struct Problem {
    size_t next, end;
    size_t left() const { return end - next; }
  };
  std::mutex mutex_;
  std::vector<Problem> problems_;
  std::vector<std::optional<size_t>> current_;  // each runner's problem
  size_t next_unstarted_ = 0;
};

}  // namespace kbench::sandbox
