#include "sandbox/job_queue.h"

#include <map>

namespace kbench::sandbox {

std::string problem_queue_key(int level, int problem) { return std::to_string(level) + "/" + std::to_string(problem); }

std::pair<int, int> level_and_problem(const std::string& queue_key) {
  const auto slash = queue_key.find('/');
  return {std::stoi(queue_key.substr(0, slash)), std::stoi(queue_key.substr(slash + 1))};
}

JobQueue::JobQueue(size_t runners, size_t max_pass_overs)
    : current_(runners), ran_(runners), max_pass_overs_(max_pass_overs) {}

size_t JobQueue::push(const std::string& problem) {
  std::lock_guard<std::mutex> lock(mutex_);
  waiting_.push_back({next_id_, problem});
  changed_.notify_all();
  return next_id_++;
}

void JobQueue::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  closed_ = true;
  changed_.notify_all();
}

size_t JobQueue::waiting() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return waiting_.size();
}

bool JobQueue::taken_by_other(const std::string& problem, size_t runner) const {
  for (size_t r = 0; r < current_.size(); ++r)
    if (r != runner && current_[r] == problem) return true;
  return false;
}

JobQueue::Iter JobQueue::pick(size_t runner) {
  // A job passed over too often goes first, whatever its problem.
  if (max_pass_overs_ > 0)
    for (auto it = waiting_.begin(); it != waiting_.end(); ++it)
      if (it->passed_over >= max_pass_overs_) return it;
  // The runner's own problem, then one that no other runner is on (the oldest first): one this
  // runner has run before (its GPU timed the baselines already), else one no runner has run, else
  // any. A problem thus stays with one GPU where it can, and its baselines are timed once.
  auto& current = current_.at(runner);
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it)
    if (current && it->problem == *current) return it;
  const auto rank = [&](const std::string& problem) {
    if (ran_[runner].count(problem)) return 0;
    for (size_t r = 0; r < ran_.size(); ++r)
      if (r != runner && ran_[r].count(problem)) return 2;
    return 1;
  };
  auto best = waiting_.end();
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it)
    if (!taken_by_other(it->problem, runner) && (best == waiting_.end() || rank(it->problem) < rank(best->problem)))
      best = it;
  if (best != waiting_.end()) return best;
  // Every waiting problem has a runner: help with the one that has the most jobs waiting.
  std::map<std::string, size_t> counts;
  for (const auto& job : waiting_) ++counts[job.problem];
  best = waiting_.begin();
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it)
    if (counts[it->problem] > counts[best->problem]) best = it;
  return best;
}

std::optional<size_t> JobQueue::next(size_t runner) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !waiting_.empty() || closed_; });
  if (waiting_.empty()) return std::nullopt;
  const auto job = pick(runner);
  for (auto it = waiting_.begin(); it != job; ++it) ++it->passed_over;
  current_[runner] = job->problem;
  ran_[runner].insert(job->problem);
  const size_t id = job->id;
  waiting_.erase(job);
  return id;
}

std::optional<std::string> JobQueue::upcoming(size_t runner) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (waiting_.empty()) return std::nullopt;
  return pick(runner)->problem;
}

}  // namespace kbench::sandbox
