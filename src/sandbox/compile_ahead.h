// Compiling ahead of the GPUs, on a pool of threads: a submission handed in is compiled into the
// caches where the worker that evaluates it finds the result (a batch hands in every file up front;
// serve each request as it arrives): NVRTC for kbench's format, the extension builds of a ModelNew
// file (in a child process without a GPU: a fork of one that started Python once for all files,
// compile/build_pass_forks.h, else a fresh `kbench __prebuild-modelnew`). A file that does not
// split, compile or build is left to its worker, which reports the verdict. Its threads run at a
// lower priority than the workers.
#pragma once

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/build_pass_forks.h"
#include "compile/nvrtc_compiler.h"

namespace kbench::sandbox {

// What a submission is compiled with: NVRTC's options (sandbox::compile_options_for, as its worker
// will), and for a ModelNew file what its build pass needs.
struct PrepareOptions {
  compile::CompileOptions compile;
  std::filesystem::path problem_source;  // the reference problem's file (ModelNew: get_init_inputs)
  std::string worker_exe;                // the kbench executable that builds extensions
  double build_timeout_s = 600;
};

class CompileAhead {
 public:
  // On `cores` cores (0: all): that many NVRTC compiles at once, and up to twice as many ModelNew
  // build passes, which share them (see compile_ahead.cpp).
  explicit CompileAhead(int cores = 0);
  ~CompileAhead();                         // compiles what was handed in, then stops
  CompileAhead(const CompileAhead&) = delete;
  CompileAhead& operator=(const CompileAhead&) = delete;

  // Compiles `submission` with `options`. The future is ready, and `done` has been called, once the
  // result is in the caches. Its value: a ModelNew file's extension builds, as records
  // (compile::ExtensionBuild::to_json) in an array, or {"error": why} when the build pass left none;
  // null for kbench's format.
  std::shared_future<nlohmann::json> submit(const std::filesystem::path& submission, const PrepareOptions& options,
                                            std::function<void()> done = {});

  int cores() const { return cores_; }

 private:
  struct Task {
    std::filesystem::path submission;
    PrepareOptions options;
    std::function<void()> done;
    std::promise<nlohmann::json> compiled;
  };
  void run();
  // The server that the build passes fork from, made at the first that needs it; null for a
  // worker executable other than the one it was made with.
  compile::BuildPassForks* build_pass_forks(const std::string& worker_exe);

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Task> tasks_;
  int cores_;
  int busy_ = 0;        // tasks being compiled
  int nvrtc_busy_ = 0;  // of them, NVRTC compiles
  bool stopping_ = false;
  std::string forks_exe_;
  std::unique_ptr<compile::BuildPassForks> forks_;
  std::vector<std::thread> threads_;  // last: joined before the members above go
};

}  // namespace kbench::sandbox
