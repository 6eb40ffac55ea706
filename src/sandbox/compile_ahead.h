// NVRTC ahead of the GPUs, on a pool of threads: a submission handed in is compiled into the
// compile cache, where the worker that evaluates it finds the result (a batch hands in every file
// up front; serve each request as it arrives). A file that does not split or compile is left to
// its worker, which reports the verdict. Its threads run at a lower priority than the workers.
#pragma once

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "compile/nvrtc_compiler.h"

namespace kbench::sandbox {

class CompileAhead {
 public:
  explicit CompileAhead(int threads = 0);  // 0: one per core
  ~CompileAhead();                         // compiles what was handed in, then stops
  CompileAhead(const CompileAhead&) = delete;
  CompileAhead& operator=(const CompileAhead&) = delete;

  // Compiles `submission` with `options` (sandbox::compile_options_for, as its worker will). The
  // future is ready, and `done` has been called, once the result is in the cache.
  std::shared_future<void> submit(const std::filesystem::path& submission, const compile::CompileOptions& options,
                                  std::function<void()> done = {});

 private:
  struct Task {
    std::filesystem::path submission;
    compile::CompileOptions options;
    std::function<void()> done;
    std::promise<void> compiled;
  };
  void run();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Task> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kbench::sandbox
