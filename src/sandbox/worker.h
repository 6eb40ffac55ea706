// Isolation: each evaluation runs in a child process (`kbench __worker`). Whatever the candidate does
// there — segfault, abort, sticky CUDA error, endless kernel, a flood of output — the parent records
// a verdict and carries on with a fresh worker and a fresh CUDA context.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sandbox/evaluation.h"

namespace kbench::sandbox {

struct Budgets {
  double compile_s = 60;       // split + NVRTC + host program
  double correctness_s = 180;  // inputs, reference and 5 candidate trials
  double timing_s = 300;       // candidate and eager timing
};

// Runs `request` in a worker and returns its record; never throws for anything the worker does.
// `worker_exe` is the kbench binary (it re-executes itself with the hidden __worker command).
nlohmann::json evaluate_isolated(const EvalRequest& request, const Budgets& budgets, const std::string& worker_exe);

// The worker side: reads one request (JSON) from stdin, reports stages and the record on `fd`.
int run_worker(int fd);

}  // namespace kbench::sandbox
