#include "sandbox/compile_ahead.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sys/resource.h>
#include <unistd.h>

#include "compile/build_pass_forks.h"
#include "compile/child_process.h"
#include "compile/compile_cache.h"
#include "compile/extension_build.h"
#include "compile/modelnew.h"
#include "compile/submission.h"
#include "problems/catalog.h"
#include "problems/reference.h"

namespace kbench::sandbox {
namespace {

// A ModelNew build pass's environment: this process's, with no GPU visible, and `jobs` compilers at
// once (its MAX_JOBS, unless the user's environment sets one; none for jobs 0).
std::vector<std::string> build_pass_environment(int jobs) {
  std::vector<std::string> environment;
  bool jobs_given = false;
  for (const auto& e : compile::current_environment()) {
    if (e.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0) continue;
    jobs_given = jobs_given || e.rfind("MAX_JOBS=", 0) == 0;
    environment.push_back(e);
  }
  environment.push_back("CUDA_VISIBLE_DEVICES=");
  if (!jobs_given && jobs > 0) environment.push_back("MAX_JOBS=" + std::to_string(jobs));
  return environment;
}

// A ModelNew's build pass: a child process imports it and constructs ModelNew on the CPU, so that
// its extensions are in the cache before a GPU needs them; no GPU. A fork of `forks` where it has
// one, else a fresh process. Returns the records of the builds it asked for.
nlohmann::json prebuild_modelnew(const std::filesystem::path& file, const PrepareOptions& prepare, int jobs,
                                 compile::BuildPassForks* forks) {
  compile::ChildOptions options;
  options.environment = build_pass_environment(jobs);
  options.timeout_s = prepare.build_timeout_s;
  options.own_process_group = true;
  static std::atomic<int> passes{0};
  const auto report = std::filesystem::temp_directory_path() /
                      ("kbench-prebuild-" + std::to_string(::getpid()) + "-" + std::to_string(passes++) + ".json");
  const std::vector<std::string> arguments = {"__prebuild-modelnew", file.string(), prepare.problem_source.string(),
                                              prepare.compile.arch, report.string()};
  auto child = forks ? forks->run(arguments, options.environment, options.timeout_s) : std::nullopt;
  if (!child) child = compile::run_child(prepare.worker_exe, arguments, options);
  std::ifstream in(report);
  auto builds = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  std::remove(report.c_str());
  if (!builds.is_discarded()) return builds;
  return {{"error", child->timed_out ? "the build pass ran out of time (--build-budget)"
                                     : "the build pass ended without a report (wait status " +
                                           std::to_string(child->status) + ")"}};
}

// What a ModelNew file's build pass asked for, kept under <cache>/prebuild/<key>.json: the same file
// with the same problem, architecture, route and toolchain asks for the same extensions, so while
// they are all in the extension cache no build process (Python, `import torch`, the file imported:
// about 2 s) starts again. A file whose extensions depend on something else (the time, a random
// draw) finds its worker building them: a stale memo costs the worker's time, never a verdict.
std::filesystem::path prebuild_memo(const std::string& submission_bytes, const PrepareOptions& prepare) {
  const nlohmann::json material = {{"file", submission_bytes},
                                   {"problem", compile::file_bytes(prepare.problem_source)},
                                   {"arch", prepare.compile.arch},
                                   {"route", compile::route_name(compile::requested_build_route())},
                                   {"light_headers", compile::light_headers_requested()},
                                   {"kbench", KBENCH_VERSION},
                                   {"libtorch", problems::libtorch_version()}};
  return problems::cache_dir() / "prebuild" / (compile::content_hash(material.dump()) + ".json");
}

// The memo's builds, each found in the extension cache again; nothing when one is missing.
std::optional<nlohmann::json> builds_from_memo(const std::filesystem::path& memo) {
  std::ifstream in(memo);
  const auto keys = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!keys.is_array()) return std::nullopt;
  const compile::ExtensionCache cache(problems::cache_dir() / "extensions");
  auto builds = nlohmann::json::array();
  for (const auto& entry : keys) {
    auto hit = entry.is_object() ? cache.lookup(entry.value("key", "")) : std::nullopt;
    if (!hit) return std::nullopt;
    hit->name = entry.value("name", "");
    builds.push_back(hit->to_json());
  }
  return builds;
}

void remember_prebuild(const std::filesystem::path& memo, const nlohmann::json& builds) {
  auto keys = nlohmann::json::array();
  for (const auto& b : builds) {
    if (!b.is_object() || !b.contains("key")) return;  // an error report: nothing to remember
    keys.push_back({{"name", b.value("name", "")}, {"key", b["key"]}});
  }
  std::error_code ec;
  std::filesystem::create_directories(memo.parent_path(), ec);
  try {
    compile::write_file_atomically(memo, keys.dump() + "\n");  // a reader sees the whole memo or none
  } catch (const std::runtime_error&) {
    // No memo: the next request of this file runs its build pass again.
  }
}

// How many ModelNew build passes run at once on `cores`. Files that start together end together: one
// per core, 50 files on 16 cores built in four waves, the last of two files alone on two cores (118 s
// where the CPU work was 97 s at full use, H200 machine). Twice as many as the cores, the kernel
// shares the cores among them, and a wave's end leaves them busy with the next. Each pass at its
// peak holds about kBuildPassGiB (nvcc's host compiler over PyTorch's headers), so no more run than
// the memory available holds.
int build_passes_at_once(int cores) {
  constexpr double kBuildPassGiB = 2.0;
  std::ifstream meminfo("/proc/meminfo");
  double available_gib = 0;
  for (std::string key; meminfo >> key;) {
    double kib = 0;
    meminfo >> kib;
    if (key == "MemAvailable:") available_gib = kib / (1024 * 1024);
    meminfo.ignore(64, '\n');
  }
  const int by_memory = available_gib > 0 ? static_cast<int>(available_gib / kBuildPassGiB) : 2 * cores;
  return std::max(cores, std::min(2 * cores, by_memory));
}

}  // namespace

CompileAhead::CompileAhead(int cores)
    : cores_(cores > 0 ? cores : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {
  const int n = build_passes_at_once(cores_);
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

compile::BuildPassForks* CompileAhead::build_pass_forks(const std::string& worker_exe) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!forks_) {
    forks_exe_ = worker_exe;
    forks_ = std::make_unique<compile::BuildPassForks>(worker_exe, build_pass_environment(0));
  }
  return forks_exe_ == worker_exe ? forks_.get() : nullptr;
}

void CompileAhead::run() {
  // Below the workers: NVRTC runs while GPUs time candidates, and a timed call's launches must not
  // wait for a core.
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10);
  const compile::CompileCache cache(problems::cache_dir() / "compile");
  for (;;) {
    Task task;
    int jobs = 1;
    bool nvrtc = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return !tasks_.empty() || stopping_; });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
      // The cores shared among the files being built and those waiting: one compiler each while
      // there are as many files as cores, a file's C++ and CUDA compiles side by side when fewer.
      jobs = std::max(1, cores_ / (busy_ + 1 + static_cast<int>(tasks_.size())));
      ++busy_;
      // NVRTC compiles in this process, one core each: no more at once than the cores.
      nvrtc = !compile::is_modelnew_file(task.submission);
      if (nvrtc) {
        changed_.wait(lock, [&] { return nvrtc_busy_ < cores_; });
        ++nvrtc_busy_;
      }
    }
    nlohmann::json builds;
    try {
      if (!nvrtc) {
        // A file that never names load_inline (a Triton one, a PyTorch-only one) has nothing to build
        // ahead: no process is started for it. One that builds under another spelling builds in its worker.
        const auto bytes = compile::file_bytes(task.submission);
        if (bytes.find("load_inline") == std::string::npos) {
          builds = nlohmann::json::array();
        } else if (!task.options.problem_source.empty()) {
          const auto memo = prebuild_memo(bytes, task.options);
          if (auto remembered = builds_from_memo(memo)) {
            builds = std::move(*remembered);
          } else {
            builds = prebuild_modelnew(task.submission, task.options, jobs, build_pass_forks(task.options.worker_exe));
            remember_prebuild(memo, builds);
          }
        }
      } else {
        const auto split = compile::read_submission(task.submission);
        compile::compile_device_source(split.device_source, task.submission.filename().string(), task.options.compile,
                                       &cache);
      }
    } catch (const std::exception&) {
      // A malformed or unreadable file: its worker reports the verdict.
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --busy_;
      if (nvrtc) --nvrtc_busy_;
    }
    changed_.notify_all();  // a thread waiting for an NVRTC core
    if (task.done) task.done();
    task.compiled.set_value(std::move(builds));
  }
}

}  // namespace kbench::sandbox
