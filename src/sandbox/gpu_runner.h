// One GPU's evaluations, for batch and serve alike: a worker process that keeps the problem it has
// loaded (reference, kept reference outputs, baselines) from one request to the next; a spare
// process, started ahead with libtorch loaded, that replaces it after a verdict that ends a worker
// (crash, timeout, runtime error); and the baseline figures measured on this GPU, handed to every
// later worker so that a problem's baselines are timed once per GPU.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox/worker.h"

namespace kbench::sandbox {

// The GPUs to run on: `chosen`, or every visible one; device 0 where there is none (its worker then
// gives the verdicts that need no GPU).
std::vector<int> gpus_to_use(const std::vector<int>& chosen);

class GpuRunner {
 public:
  // `worker_exe` as for Worker; kForkWithoutExec gets no spare (only a parent without threads may
  // fork it, and such a parent evaluates once).
  GpuRunner(int device, std::string worker_exe);

  // Evaluates `request` on this GPU (its device is set here) and returns the record. A request the
  // worker could not evaluate (a problem whose archive is missing) gets verdict `not_checked` with
  // a "harness error" message, and keeps the reason in "error". Not thread-safe: one caller.
  nlohmann::json evaluate(EvalRequest request, const Budgets& budgets);

  // Starts the worker and its spare now rather than at the first request (evaluate() calls it too).
  void start_workers();

  struct Status {
    int device = 0;
    long pid = -1;              // the worker's process, -1 before the first request
    int level = 0, problem = 0; // what the worker has loaded (0: nothing)
    int evaluations = 0;        // by this runner
    int workers_started = 0;    // by this runner, spares included
    bool busy = false;
    double busy_s = 0;          // time inside evaluations
  };
  Status status() const;  // thread-safe

 private:
  int device_;
  std::string worker_exe_;
  std::unique_ptr<Worker> worker_, spare_;
  // Baseline figures by baseline_key of "L/P": {"eager": ..., "compiled": ...}.
  std::map<std::string, nlohmann::json> known_baselines_;
  mutable std::mutex mutex_;  // guards status_
  Status status_;
};

}  // namespace kbench::sandbox
