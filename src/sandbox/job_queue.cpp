#include "sandbox/job_queue.h"

namespace kbench::sandbox {

JobQueue::JobQueue(const std::vector<size_t>& problem_sizes, size_t runners) : current_(runners) {
  size_t begin = 0;
  for (const size_t n : problem_sizes) {
    problems_.push_back({begin, begin + n});
    begin += n;
  }
}

std::optional<size_t> JobQueue::next(size_t runner) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& current = current_.at(runner);
  if (current && problems_[*current].left() > 0) return problems_[*current].next++;
  current.reset();
  for (; next_unstarted_ < problems_.size() && !current; ++next_unstarted_)
    if (problems_[next_unstarted_].left() > 0) current = next_unstarted_;
  // Every problem started: help with the one that has the most jobs left.
  if (!current)
    for (size_t p = 0; p < problems_.size(); ++p)
      if (problems_[p].left() > 0 && (!current || problems_[p].left() > problems_[*current].left())) current = p;
  if (!current) return std::nullopt;
  return problems_[*current].next++;
}

}  // namespace kbench::sandbox
