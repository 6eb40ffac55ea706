// Correctness: the candidate against the reference on fresh inputs, trial by trial.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/compare.h"
#include "check/verdict.h"
#include "compile/host_program.h"
#include "problems/reference.h"

namespace kbench::check {

struct CheckOptions {
  int trials = 5;
  uint64_t base_seed = 42;  // trial i uses base_seed + i
  Tolerance tolerance;
};

struct TrialResult {
  int trial = 0;
  uint64_t seed = 0;
  Verdict verdict = Verdict::correct;
  std::string message;
  double max_abs_error = 0;
  double max_rel_error = 0;
  int64_t launches = 0;
};

struct CorrectnessResult {
  Verdict verdict = Verdict::correct;
  std::string message;
  std::string details;  // full error text (TorchScript traceback, CUDA error) when there is one
  std::vector<TrialResult> trials;
  bool context_poisoned = false;  // a sticky CUDA error: this process must not run another candidate
};

// Memory the candidate allocates may come from blocks freed earlier (a previous trial's or a previous
// candidate's correct output). Filling every free byte with NaN first means an output the candidate
// never writes cannot pass by inheriting someone else's answer. No-op without a GPU.
void poison_free_device_memory();

// Maps an exception from the candidate's forward to a verdict, using the tags of launch/launch_op.h.
Verdict classify_exception(const std::string& what);
std::string first_line_of_interest(const std::string& what);

// Trial order: inputs → candidate → input check → reference → compare. The reference runs after the
// candidate, so no reference output of this trial exists in memory while the candidate runs.
CorrectnessResult check_correctness(problems::Reference& reference, const compile::HostProgram& host,
                                    const c10::Dict<std::string, at::Tensor>& candidate_params,
                                    const CheckOptions& options);

nlohmann::json to_json(const TrialResult& t);

}  // namespace kbench::check
