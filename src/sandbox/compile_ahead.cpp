#include "sandbox/compile_ahead.h"

#include <sys/resource.h>
#include <unistd.h>

#include "compile/compile_cache.h"
#include "compile/submission.h"
#include "problems/catalog.h"

namespace kbench::sandbox {

CompileAhead::CompileAhead(int threads) {
  const int n = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int t = 0; t < n; ++t) threads_.emplace_back([this] { run(); });
}

CompileAhead::~CompileAhead() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (auto& t : threads_) t.join();
}

std::shared_future<void> CompileAhead::submit(const std::filesystem::path& submission,
                                              const compile::CompileOptions& options, std::function<void()> done) {
  Task task{submission, options, std::move(done), {}};
  auto future = task.compiled.get_future().share();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  changed_.notify_one();
  return future;
}

void CompileAhead::run() {
  // Below the workers: NVRTC runs while GPUs time candidates, and a timed call's launches must not
  // wait for a core.
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10);
  const compile::CompileCache cache(problems::cache_dir() / "compile");
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return !tasks_.empty() || stopping_; });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    try {
      const auto split = compile::read_submission(task.submission);
      compile::compile_device_source(split.device_source, task.submission.filename().string(), task.options, &cache);
    } catch (const std::exception&) {
      // A malformed or unreadable file: its worker reports the verdict.
    }
    if (task.done) task.done();
    task.compiled.set_value();
  }
}

}  // namespace kbench::sandbox
