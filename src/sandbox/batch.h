// `kbench batch`: a directory of model outputs scored end to end, resumably, on every GPU.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox/worker.h"

namespace kbench::sandbox {

struct DiscoveredSubmission {
  std::filesystem::path path;
  std::string relative;  // to the batch directory: the record's key
  int level = 0, problem = 0, sample = 0;
};

struct Discovery {
  std::vector<DiscoveredSubmission> submissions;  // sorted by (level, problem, relative path)
  std::vector<std::string> unmatched;  // .cu files, and .py files defining ModelNew, that follow no layout
};

// KernelBench's run naming `level_<L>_problem_<P>_sample_<S>_kernel.cu` (or `.py`, its own ModelNew
// format) anywhere under `dir`, the nested layout `level<L>/<P>/<anything>.cu` (or `.py`), or
// kbench's own `level<L>/<P>_<Name>.cu` (reference kernels beside their problems, whose `.py` are the
// problems themselves).
Discovery discover(const std::filesystem::path& dir);

// Deterministic split for many machines: by content hash, so identical files land in one shard.
bool in_shard(const std::string& content_hash, int index, int count);

struct BatchOptions {
  std::filesystem::path dir;
  std::filesystem::path out;        // results, one JSON line per submission
  std::vector<int> gpus;            // empty: every visible GPU
  int shard_index = 0, shard_count = 1;
  int compile_threads = 0;          // 0: all cores
  bool build_only = false;          // fill the compile and extension caches, evaluate nothing
  bool progress = true;
  EvalRequest base;                 // trials, timing, tolerance for every submission
  Budgets budgets;
  std::string worker_exe;
};

struct BatchSummary {
  int discovered = 0, unmatched = 0, in_shard = 0, resumed = 0, evaluated = 0, duplicates = 0;
  double wall_s = 0, compile_s = 0;
  int compile_threads = 0;          // NVRTC and extension builds ran on this many threads
  std::vector<double> gpu_busy_s;   // per GPU: time inside evaluations
  std::map<std::string, int> verdicts;
  // --build-only: per ModelNew file, {"file", "extensions": its builds' records, or {"error": why}}
  nlohmann::json builds = nlohmann::json::array();
  nlohmann::json to_json() const;
};

BatchSummary run_batch(const BatchOptions& options);

}  // namespace kbench::sandbox
