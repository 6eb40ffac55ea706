// Correctness: the candidate against the reference on fresh inputs, trial by trial, under two rules.
// KernelBench's: five trials on the problem's own inputs, its tolerance (check/kernelbench_rule.h).
// kbench's: the same trials with atol scaled to the output (check/compare.h), then robustness
// trials whose floating-point inputs come from other distributions, so that a kernel right only on
// the problem's own inputs (a constant where the output barely varies, a copy where ReLU of [0, 1)
// inputs is the identity) is `fragile`, not `correct`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/compare.h"
#include "check/reference_outputs.h"
#include "check/torch_op_observer.h"
#include "check/verdict.h"
#include "compile/host_program.h"
#include "problems/reference.h"

namespace kbench::check {

struct CheckOptions {
  int trials = 5;
  uint64_t base_seed = 42;  // trial i uses base_seed + i
  // One trial per distribution of problems::kRobustnessDistributions (cycling when more). Three:
  // one signed, one heavy-tailed and large, one small; each catches a different kind of kernel
  // that is right only on [0, 1) inputs.
  int robust_trials = 3;
  // Seed of the first robustness trial (then +1, +2, ...). Drawn afresh for each evaluation (a batch
  // draws one for all its samples, so reference outputs stay reusable): a submission cannot
  // precompute answers for inputs it cannot predict. The record keeps it for reproduction.
  uint64_t robust_seed = 0;
  Tolerance tolerance;
  int64_t keep_free_bytes = 0;  // device memory left unpoisoned for the kernels' local memory
  // --torch-ops forbid: a value-computing PyTorch op in forward is no_custom_kernel (KernelBench
  // leaves the question open; its static checker makes it a setting, and so does kbench).
  bool forbid_torch_ops = false;
  // Under a --gpu-memory limit that only fits so (sandbox/evaluation.h's MemoryPlan): the
  // candidate's output waits in host memory while the reference computes its own.
  bool offload_candidate_output = false;
};

// A fresh seed for the robustness trials (never 0, which means "draw one").
uint64_t draw_robust_seed();

// Which inputs a trial runs on.
struct TrialInputs {
  uint64_t seed = 0;
  std::string distribution = problems::kOwnDistribution;
};

struct TrialResult {
  int trial = 0;
  TrialInputs inputs;
  Verdict verdict = Verdict::correct;           // kbench's rule
  std::string message;
  Verdict kernelbench_verdict = Verdict::correct;  // KernelBench's rule (meaningful on its own inputs)
  std::string kernelbench_message;
  std::string skipped;  // non-empty: a robustness trial that did not count, and why
  double max_abs_error = 0;
  double max_rel_error = 0;
  double scaled_atol = -1;  // kbench's smallest atol over the output tensors
  int64_t launches = 0;
};

// Where trials spent their time, summed over trials (ms). `candidate` includes the memory guard
// (`guard`: poisoning and the out-of-bounds check) and the digests of PyTorch ops' results;
// `checks` the input, parameter and output-ownership checks.
struct TrialPhases {
  double inputs_ms = 0;
  double candidate_ms = 0;
  double guard_ms = 0;
  double checks_ms = 0;
  double reference_ms = 0;
  double compare_ms = 0;
};
struct CorrectnessPhases {
  TrialPhases own;         // the trials on the problem's own inputs
  TrialPhases robustness;  // the robustness trials
};

struct CorrectnessResult {
  Verdict verdict = Verdict::correct;  // kbench's rules, robustness trials included
  std::string message;
  Verdict kernelbench_verdict = Verdict::correct;  // KernelBench's: the problem's own inputs, its tolerance
  std::string kernelbench_message;
  std::string details;  // full error text (TorchScript traceback, CUDA error) when there is one
  std::vector<TrialResult> trials;
  bool context_poisoned = false;  // a sticky CUDA error: this process must not run another candidate
  int64_t output_bytes = 0;       // bytes of one reference output
  std::vector<OutputSpec> output_specs;  // each tensor of the reference's output
  // Inputs on which the submission's kernels must be needed (see check_without_kernels): those of
  // the first robustness trial that counted, else the first trial's.
  TrialInputs ablation_inputs;
  // Of a program that settles (compile/host_program.h): the launches of one settled call, which every
  // timed call must make too (TimedCallOptions::settled_launches); -1 for others.
  int64_t settled_launches = -1;
  // The robustness distributions whose trials counted: the ones the timed calls use beside the own.
  std::vector<std::string> robustness_distributions;
  // The value-computing PyTorch ops forward called in the trials, with how often (all trials).
  std::map<std::string, int64_t> computing_ops_ran;
  CorrectnessPhases phases;
};

// Maps an exception from the candidate's forward to a verdict, using the tags of launch/launch_op.h.
Verdict classify_exception(const std::string& what);
// An allocation failed (PyTorch's "out of memory", also inside a TorchScript traceback): the GPU,
// or the --gpu-memory limit, is too small, whatever the inputs.
bool is_out_of_memory(const std::string& what);
std::string first_line_of_interest(const std::string& what);

// What a failed robustness trial makes of the candidate: a wrong answer on other inputs is
// `fragile`; a crash, a mutation or a missing kernel stays what it is.
Verdict robustness_verdict(Verdict trial_verdict);

// Failures of integrity (kernels that do not do the work, inputs written): kbench's own checks.
// Wherever a robustness trial finds one, it is kbench's verdict whatever the inputs; KernelBench's
// rule never sees them (its verdict comes from the comparisons on its own inputs alone).
bool is_integrity_failure(Verdict v);

// Trial order: inputs → candidate → input and parameter check → reference → compare. The reference
// runs (or a kept output of it comes back from host memory) after the candidate, so no reference
// output of this trial exists on the GPU while the candidate runs. The trials on the problem's own
// inputs run while either rule holds, and compare the output whenever forward returned, so that
// KernelBench's verdict is decided by its rule alone; the robustness trials run only while kbench's
// rule holds.
// Every trial runs under a memory guard (check/memory_guard.h): the first one poisons all free
// memory and checks it for stray writes, the others poison what the candidate allocates and check
// the guard zones after it. Every trial watches the PyTorch ops the host program calls
// (check/torch_op_observer.h): which compute values (forbidden under --torch-ops forbid) and, from
// the second trial on, whether an output is one of their results handed through a kernel
// (no_custom_kernel).
CorrectnessResult check_correctness(problems::Reference& reference, const compile::HostProgram& host,
                                    const c10::Dict<std::string, at::Tensor>& candidate_params,
                                    const CheckOptions& options, ReferenceOutputCache& reference_outputs);

// The ablation run: forward once more on `inputs` with every launch of the submission's kernels
// skipped and free memory poisoned as in a trial, then once more with a finite poison (see
// memory_guard.h). If the outputs still match the reference (kbench's rule) either time, the
// submission's kernels did not compute them: the host program's PyTorch ops did. A forward that
// ends in PyTorch ops on its kernels' results passes: without them its outputs are wrong.
struct AblationResult {
  TrialInputs inputs;
  bool outputs_right = false;
  std::string message;           // what was found
  bool context_poisoned = false; // the host program's ops failed stickily without the kernels' outputs
  TrialPhases phases;            // over both fills (the guard: the free memory's poisoning)
};
AblationResult check_without_kernels(problems::Reference& reference, const compile::HostProgram& host,
                                     const c10::Dict<std::string, at::Tensor>& candidate_params,
                                     const CheckOptions& options, ReferenceOutputCache& reference_outputs,
                                     const TrialInputs& inputs);

// The candidate's own copy of the reference's parameters and buffers: writing into it cannot change
// the reference's weights.
c10::Dict<std::string, at::Tensor> copy_of_state(const c10::Dict<std::string, at::Tensor>& state);

// The reference's forward on `inputs` (run with `forward_seed`), the device synchronised. A CUDA
// error surfacing there throws, tagged as a runtime error: the kernels still in flight are the
// candidate's.
c10::IValue run_reference(problems::Reference& reference, const std::vector<c10::IValue>& inputs, uint64_t forward_seed);

// The same, kept in `outputs` where that pays (see ReferenceOutputCache).
c10::IValue reference_output(problems::Reference& reference, const std::vector<c10::IValue>& inputs,
                             const TrialInputs& made_from, uint64_t forward_seed, ReferenceOutputCache& outputs);

nlohmann::json to_json(const TrialResult& t);
nlohmann::json to_json(const TrialPhases& p);
nlohmann::json to_json(const CorrectnessPhases& p);
nlohmann::json to_json(const AblationResult& a);

}  // namespace kbench::check
