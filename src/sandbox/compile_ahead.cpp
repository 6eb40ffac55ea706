#include "sandbox/compile_ahead.h"

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sys/resource.h>
#include <unistd.h>

#include "compile/child_process.h"
#include "compile/compile_cache.h"
#include "compile/modelnew.h"
#include "compile/submission.h"
#include "problems/catalog.h"

extern char** environ;

namespace kbench::sandbox {
namespace {

// A ModelNew's build pass: a child process imports it and constructs ModelNew on the CPU, so that
// its extensions are in the cache before a GPU needs them. One compiler job each, since every core
// runs one; no GPU. Returns the records of the builds it asked for.
nlohmann::json prebuild_modelnew(const std::filesystem::path& file, const PrepareOptions& prepare) {
  compile::ChildOptions options;
  bool jobs_given = false;
  for (char** entry = environ; *entry; ++entry) {
    const std::string e = *entry;
    if (e.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0) continue;
    jobs_given = jobs_given || e.rfind("MAX_JOBS=", 0) == 0;
    options.environment.push_back(e);
  }
  options.environment.push_back("CUDA_VISIBLE_DEVICES=");
  if (!jobs_given) options.environment.push_back("MAX_JOBS=1");
  options.timeout_s = prepare.build_timeout_s;
  options.own_process_group = true;
  static std::atomic<int> passes{0};
  const auto report = std::filesystem::temp_directory_path() /
                      ("kbench-prebuild-" + std::to_string(::getpid()) + "-" + std::to_string(passes++) + ".json");
  const auto child = compile::run_child(
      prepare.worker_exe,
      {"__prebuild-modelnew", file.string(), prepare.problem_source.string(), prepare.compile.arch, report.string()},
      options);
  std::ifstream in(report);
  auto builds = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  std::remove(report.c_str());
  if (!builds.is_discarded()) return builds;
  return {{"error", child.timed_out ? "the build pass ran out of time (--build-budget)"
                                    : "the build pass ended without a report (wait status " +
                                          std::to_string(child.status) + ")"}};
}

}  // namespace

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

std::shared_future<nlohmann::json> CompileAhead::submit(const std::filesystem::path& submission, const PrepareOptions& options,
                                              std::function<void()> done) {
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
    nlohmann::json builds;
    try {
      if (compile::is_modelnew_file(task.submission)) {
        if (!task.options.problem_source.empty()) builds = prebuild_modelnew(task.submission, task.options);
      } else {
        const auto split = compile::read_submission(task.submission);
        compile::compile_device_source(split.device_source, task.submission.filename().string(), task.options.compile,
                                       &cache);
      }
    } catch (const std::exception&) {
      // A malformed or unreadable file: its worker reports the verdict.
    }
    if (task.done) task.done();
    task.compiled.set_value(std::move(builds));
  }
}

}  // namespace kbench::sandbox
