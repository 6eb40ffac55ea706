// Correctness: the candidate against the reference on fresh inputs, trial by trial.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/compare.h"
#include "check/reference_outputs.h"
#include "check/verdict.h"
#include "compile/host_program.h"
#include "problems/reference.h"

namespace kbench::check {

struct CheckOptions {
  int trials = 5;
  uint64_t base_seed = 42;  // trial i uses base_seed + i
  Tolerance tolerance;
  int64_t keep_free_bytes = 0;  // device memory left unpoisoned for the kernels' local memory
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

// Where the trials spent their time, summed over trials (ms). `candidate` includes poisoning free
// memory and the out-of-bounds check; `checks` the input, parameter and output-ownership checks.
struct CorrectnessPhases {
  double inputs_ms = 0;
  double candidate_ms = 0;
  double checks_ms = 0;
  double reference_ms = 0;
  double compare_ms = 0;
};

struct CorrectnessResult {
  Verdict verdict = Verdict::correct;
  std::string message;
  std::string details;  // full error text (TorchScript traceback, CUDA error) when there is one
  std::vector<TrialResult> trials;
  bool context_poisoned = false;  // a sticky CUDA error: this process must not run another candidate
  CorrectnessPhases phases;
};

// Maps an exception from the candidate's forward to a verdict, using the tags of launch/launch_op.h.
Verdict classify_exception(const std::string& what);
std::string first_line_of_interest(const std::string& what);

// Trial order: inputs → candidate (free memory poisoned, out-of-bounds writes checked; see
// check/memory_guard.h) → input and parameter check → reference → compare. The reference runs (or a
// kept output of it comes back from host memory) after the candidate, so no reference output of this
// trial exists on the GPU while the candidate runs.
CorrectnessResult check_correctness(problems::Reference& reference, const compile::HostProgram& host,
                                    const c10::Dict<std::string, at::Tensor>& candidate_params,
                                    const CheckOptions& options, ReferenceOutputCache& reference_outputs);

// The reference's output on `inputs` (made from `input_seed`, run with `forward_seed`): kept in
// `outputs`, or computed and the device synchronised. A CUDA error surfacing there throws, tagged as
// a runtime error: the kernels still in flight are the candidate's.
c10::IValue reference_output(problems::Reference& reference, const std::vector<c10::IValue>& inputs,
                             uint64_t input_seed, uint64_t forward_seed, ReferenceOutputCache& outputs);

nlohmann::json to_json(const TrialResult& t);
nlohmann::json to_json(const CorrectnessPhases& p);

}  // namespace kbench::check
