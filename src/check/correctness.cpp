#include "check/correctness.h"

#include <chrono>
#include <optional>
#include <random>

#include "check/exact_reference.h"
#include "check/memory_guard.h"
#include "check/process_state.h"
#include "check/reference_outputs.h"
#include "check/torch_op_observer.h"
#include "launch/launch_op.h"
#include "launch/launches.h"
#include "log/elapsed.h"

#ifdef KBENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace kbench::check {
namespace {

using log::PhaseTimer;
using log::timed;

void synchronize_device() {
#ifdef KBENCH_WITH_CUDA
  const cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(launch::kRuntimeErrorTag) + "CUDA error after the candidate's forward: " +
                             cudaGetErrorString(err));
#endif
}

bool is_sticky_cuda_error(const std::string& what) {
  for (const char* marker : {"illegal memory access", "illegal address", "unspecified launch failure",
                             "illegal instruction", "misaligned address", "device-side assert", "hardware stack error",
                             "an illegal", "unrecoverable"})
    if (what.find(marker) != std::string::npos) return true;
  return false;
}

// An output that is (a view of) an input was made by the host program alone. One that PyTorch
// ops computed after the kernels ran (a final F.linear, a division by n) is judged by the ablation
// run: it is the kernels' work if it is wrong without them.
std::string output_is_an_input(const c10::IValue& output, const std::vector<c10::IValue>& inputs) {
  std::vector<at::Tensor> outs, ins;
  collect_tensors(output, outs);
  for (const auto& v : inputs) collect_tensors(v, ins);
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].defined() || !outs[i].has_storage()) continue;
    const void* storage = outs[i].storage().data();
    for (const auto& in : ins)
      if (in.defined() && in.has_storage() && in.storage().data() == storage)
        return "output " + std::to_string(i) + " is (a view of) an input";
  }
  return "";
}

}  // namespace

bool is_out_of_memory(const std::string& what) { return what.find("out of memory") != std::string::npos; }

Verdict classify_exception(const std::string& what) {
  if (what.find(launch::kLaunchErrorTag) != std::string::npos) return Verdict::launch_error;
  if (what.find(launch::kRuntimeErrorTag) != std::string::npos) return Verdict::runtime_error;
  if (what.find("CUDA error") != std::string::npos || what.find("CUDA out of memory") != std::string::npos ||
      is_sticky_cuda_error(what))
    return Verdict::runtime_error;
  return Verdict::host_error;
}

std::string first_line_of_interest(const std::string& what) {
  for (const char* tag : {launch::kLaunchErrorTag, launch::kRuntimeErrorTag}) {
    const auto at = what.find(tag);
    if (at != std::string::npos) {
      const auto start = at + std::string(tag).size();
      return what.substr(start, what.find('\n', start) - start);
    }
  }
  // TorchScript puts the interesting line last ("RuntimeError: ..."); fall back to the first one.
  const auto marker = what.rfind("Error: ");
  if (marker != std::string::npos) {
    const auto line_start = what.rfind('\n', marker);
    const auto from = line_start == std::string::npos ? 0 : line_start + 1;
    return what.substr(from, what.find('\n', marker) - from);
  }
  return what.substr(0, what.find('\n'));
}

uint64_t draw_robust_seed() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 20 ^ device()) % 1000000000 + 1000;  // clear of 0 and of 42..46
}

bool is_integrity_failure(Verdict v) { return v == Verdict::no_custom_kernel || v == Verdict::input_mutated; }

Verdict robustness_verdict(Verdict trial_verdict) {
  switch (trial_verdict) {
    case Verdict::value_mismatch:
    case Verdict::shape_mismatch:
    case Verdict::dtype_mismatch:
      return Verdict::fragile;
    default:
      return trial_verdict;
  }
}

namespace {

// The settling calls' inputs: seeds no trial, timed call or profile draws.
constexpr uint64_t kSettleSeedOffset = 3000;

// What every trial shares: the candidate, its parameters (and their fingerprints), the options,
// the reference outputs, and where the results go.
struct TrialRunner {
  problems::Reference& reference;
  const compile::HostProgram& host;
  const c10::Dict<std::string, at::Tensor>& params;
  const Fingerprints params_before;
  const CheckOptions& options;
  ReferenceOutputCache& reference_outputs;
  CorrectnessResult& result;

  // The candidate's forward, the device synchronised, under a memory guard (check/memory_guard.h):
  // the first trial poisons all free memory (what earlier evaluations left there is wiped, and a
  // stray write anywhere is found), later trials what the candidate allocates and the guard zones
  // after it. Every trial observes the PyTorch ops it calls:
  // which compute values (into `ops_ran`), and once the reference's outputs are known, digests of
  // their results (into `observed`). Returns its output; on failure sets t's verdict and the
  // result's details.
  c10::IValue run_candidate(const std::vector<c10::IValue>& inputs, TrialResult& t, TrialPhases& phases,
                            std::vector<ObservedResult>& observed, std::map<std::string, int64_t>& ops_ran,
                            bool& returned) {
    PhaseTimer timer(phases.candidate_ms);
    std::optional<FreeMemoryGuard> guard;
    {
      PhaseTimer guarding(phases.guard_ms);
      guard.emplace(options.keep_free_bytes, t.trial == 0 ? Poison::all_free : Poison::guard_zones);
    }
    std::optional<TorchOpObserver> observer(std::in_place, result.output_specs);
    launch::reset_launch_count();
    c10::IValue out;
    try {
      torch::manual_seed(t.inputs.seed);
      out = host.forward(inputs, params);
      synchronize_device();
      // The observer's scope ends with forward: the guard's checks below are kbench's own ops.
      observed = observer->results();
      ops_ran = observer->computing_ops_ran();
      observer.reset();
      verify_process_state(ProcessStateWatch::Depth::watched_ops, "after the candidate's call in trial " + std::to_string(t.trial));
      returned = true;
      PhaseTimer guarding(phases.guard_ms);
      const auto stray = guard->stray_writes();
      if (!stray.empty()) {
        t.verdict = Verdict::runtime_error;
        t.message = stray;
      }
    } catch (const std::exception& e) {
      const std::string what = e.what();
      t.verdict = classify_exception(what);
      t.message = first_line_of_interest(what);
      result.details = what;
      result.context_poisoned = is_sticky_cuda_error(what);
    }
    t.launches = launch::launch_count();
    if (observer) {  // forward threw: what it called until then
      observed = observer->results();
      ops_ran = observer->computing_ops_ran();
      observer.reset();
    }
    for (const auto& [op, n] : ops_ran) result.computing_ops_ran[op] += n;
    return out;
  }

  // Integrity: kernels launched, inputs and parameters untouched, outputs written by the kernels.
  void check_integrity(const c10::IValue& out, const std::vector<c10::IValue>& inputs, const Fingerprints& inputs_before,
                       const std::vector<ObservedResult>& observed, const std::map<std::string, int64_t>& ops_ran,
                       TrialResult& t, TrialPhases& phases) {
    PhaseTimer timer(phases.checks_ms);
    if (t.verdict == Verdict::correct && options.forbid_torch_ops && !ops_ran.empty()) {
      t.verdict = Verdict::no_custom_kernel;
      t.message = "forward called " + ops_ran.begin()->first +
                  ", a PyTorch op or library function that computes values (--torch-ops forbid)";
    }
    if (t.verdict == Verdict::correct && t.launches == 0) {
      t.verdict = Verdict::no_custom_kernel;
      t.message = "forward returned without launching a kernel of the submission";
    }
    if (t.verdict == Verdict::correct && fingerprints(inputs) != inputs_before) {
      t.verdict = Verdict::input_mutated;
      t.message = "the candidate modified its inputs";
    }
    if (t.verdict == Verdict::correct && fingerprints(params) != params_before) {
      t.verdict = Verdict::input_mutated;
      t.message = "the candidate modified its parameters (params)";
    }
    if (t.verdict == Verdict::correct) {
      const auto why = output_is_an_input(out, inputs);
      if (!why.empty()) {
        t.verdict = Verdict::no_custom_kernel;
        t.message = why;
      }
    }
    if (t.verdict == Verdict::correct && !observed.empty()) {
      const auto why = pytorch_computed_answer(observed, out, t.launches);
      if (!why.empty()) {
        t.verdict = Verdict::no_custom_kernel;
        t.message = why;
      }
    }
  }

  // The reference's output for the trial, or nullopt (t.skipped says why) when a robustness trial
  // cannot count: the reference fails or is not finite on those inputs.
  std::optional<c10::IValue> reference_for(const std::vector<c10::IValue>& inputs, TrialResult& t, bool robustness,
                                           TrialPhases& phases) {
    PhaseTimer timer(phases.reference_ms);
    try {
      auto out = reference_output(reference, inputs, t.inputs, t.inputs.seed, reference_outputs);
      if (robustness && !all_finite(out)) {
        t.skipped = "the reference's output is not finite on " + t.inputs.distribution + " inputs";
        return std::nullopt;
      }
      result.output_bytes = bytes_of(out);
      std::vector<at::Tensor> tensors;
      collect_tensors(out, tensors);
      result.output_specs.clear();
      for (const auto& tensor : tensors) result.output_specs.push_back({tensor.numel(), tensor.scalar_type()});
      return out;
    } catch (const std::exception& e) {
      const std::string what = e.what();
      // Out of memory is kbench's GPU (or --gpu-memory) too small, not the inputs: an error of the
      // evaluation, never a trial that silently does not count.
      if (!robustness || what.find(launch::kRuntimeErrorTag) != std::string::npos || is_out_of_memory(what)) throw;
      t.skipped = "the reference fails on " + t.inputs.distribution + " inputs: " + first_line_of_interest(what);
      result.context_poisoned = is_sticky_cuda_error(what);
      return std::nullopt;
    }
  }

  TrialResult run(int index, const TrialInputs& made_from, bool robustness) {
    auto& phases = robustness ? result.phases.robustness : result.phases.own;
    TrialResult t;
    t.trial = index;
    t.inputs = made_from;
    std::vector<c10::IValue> inputs;
    Fingerprints before;
    {
      PhaseTimer timer(phases.inputs_ms);
      inputs = reference.make_inputs(made_from.seed, made_from.distribution);
      before = fingerprints(inputs);
    }
    std::vector<ObservedResult> observed;
    std::map<std::string, int64_t> ops_ran;
    bool returned = false;
    auto out = run_candidate(inputs, t, phases, observed, ops_ran, returned);
    if (!returned) {  // forward threw: a failure under KernelBench's rule too
      t.kernelbench_verdict = t.verdict;
      t.kernelbench_message = t.message;
      result.trials.push_back(t);
      return t;
    }
    check_integrity(out, inputs, before, observed, ops_ran, t, phases);
    // kbench's own checks (above, and the memory guard's) fail kbench's verdict alone: KernelBench's
    // is still decided by the comparison, on the problem's own inputs. Its eval runs the reference
    // before the candidate, so inputs the candidate wrote into are drawn again for the reference.
    const bool compare = t.verdict == Verdict::correct || !robustness;
    if (compare) {
      if (t.verdict != Verdict::correct && fingerprints(inputs) != before)
        inputs = reference.make_inputs(made_from.seed, made_from.distribution);
      std::optional<c10::IValue> expected;
      with_output_in_host_memory(out, options.offload_candidate_output, [&] {
        expected = reference_for(inputs, t, robustness, phases);
        inputs.clear();  // not needed again: the output may come back where they were
      });
      if (expected) {
        PhaseTimer timer(phases.compare_ms);
        auto tolerance = options.tolerance;
        tolerance.robustness = robustness;
        auto cmp = compare_outputs(*expected, out, tolerance);
        expected.reset();  // room for the exact reference, where the retry needs one
        cmp = with_exact_reference_retry(cmp, out, tolerance, reference, t.inputs, options.offload_candidate_output);
        if (t.verdict == Verdict::correct) {
          t.verdict = cmp.verdict;
          t.message = cmp.message;
        }
        t.kernelbench_verdict = cmp.kernelbench_verdict;
        t.max_abs_error = cmp.max_abs_error;
        t.max_rel_error = cmp.max_rel_error;
        t.kernelbench_message = cmp.kernelbench_message;
        t.scaled_atol = cmp.smallest_scaled_atol;
      }
    }
    result.trials.push_back(t);
    return t;
  }
};

// Settled once a call loaded no new kernel (a compile, or a cached binary of a new specialisation)
// and launched as many as the call before it; at most five calls. Returns "" and the settled
// launches, or what kept changing.
std::string settle(const compile::HostProgram& host, const c10::Dict<std::string, at::Tensor>& params,
                   const std::function<std::vector<c10::IValue>()>& draw_inputs, int64_t& settled_launches) {
  constexpr int kMaxCalls = 5;
  int64_t previous = -1;
  for (int call = 1; call <= kMaxCalls; ++call) {
    const auto inputs = draw_inputs();
    const auto loads_before = launch::module_load_count();
    launch::reset_launch_count();
    host.untimed_call(inputs, params);
    const auto launched = launch::launch_count();
    if (launch::module_load_count() == loads_before && launched == previous) {
      settled_launches = launched;
      return "";
    }
    previous = launched;
  }
  return "its Triton kernels were still compiled or autotuned in the last of " + std::to_string(kMaxCalls) +
         " untimed calls before the checks: every call would time that work";
}

std::string trial_label(const TrialResult& t) {
  return "trial " + std::to_string(t.trial) + " (seed " + std::to_string(t.inputs.seed) +
         (t.inputs.distribution == problems::kOwnDistribution ? "" : ", " + t.inputs.distribution + " inputs") + ")";
}

}  // namespace

CorrectnessResult check_correctness(problems::Reference& reference, const compile::HostProgram& host,
                                    const c10::Dict<std::string, at::Tensor>& candidate_params,
                                    const CheckOptions& options, ReferenceOutputCache& reference_outputs) {
  torch::NoGradGuard no_grad;
  CorrectnessResult result;
  // The parameters are the candidate's too: writing into them carries state between calls.
  TrialRunner runner{reference, host, candidate_params, fingerprints(candidate_params), options, reference_outputs, result};
  result.ablation_inputs = {options.base_seed, problems::kOwnDistribution};

  // A program whose first calls compile or tune its kernels (Triton's) makes them before any check,
  // on inputs of its own, so that no trial, and no timed call, contains that work.
  if (host.settles()) {
    try {
      uint64_t seed = options.base_seed + kSettleSeedOffset;
      const auto unsettled = settle(host, candidate_params, [&] { return reference.make_inputs(seed++, problems::kOwnDistribution); },
                                    result.settled_launches);
      if (!unsettled.empty()) result.verdict = Verdict::inconsistent, result.message = unsettled;
    } catch (const std::exception& e) {
      result.verdict = result.kernelbench_verdict = classify_exception(e.what());
      result.message = result.kernelbench_message = "in an untimed call before the checks: " + first_line_of_interest(e.what());
      result.details = e.what();
      result.context_poisoned = is_sticky_cuda_error(e.what());
      return result;
    }
  }

  // The problem's own inputs, as KernelBench checks them. Either rule can fail first (KernelBench's
  // tolerance is the tighter one today, its v0.1's the looser), so the trials go on while either
  // holds: one failing trial decides a rule, later ones would only repeat it.
  for (int i = 0; i < options.trials; ++i) {
    const auto t = runner.run(i, {options.base_seed + static_cast<uint64_t>(i), problems::kOwnDistribution}, false);
    if (t.verdict != Verdict::correct && result.verdict == Verdict::correct) {
      result.verdict = t.verdict;
      result.message = trial_label(t) + ": " + t.message;
    }
    if (t.kernelbench_verdict != Verdict::correct && result.kernelbench_verdict == Verdict::correct) {
      result.kernelbench_verdict = t.kernelbench_verdict;
      result.kernelbench_message = trial_label(t) + ": " + t.kernelbench_message;
    }
    if (result.verdict != Verdict::correct && result.kernelbench_verdict != Verdict::correct) return result;
  }
  const auto own_inputs_matched =
      "matched the reference on the problem's own inputs (" + std::to_string(options.trials) + " trials)";
  if (result.kernelbench_verdict == Verdict::correct) result.kernelbench_message = own_inputs_matched;
  if (result.verdict != Verdict::correct) return result;

  // Robustness: the same check on inputs the candidate could not have been tuned to.
  int counted = 0;
  for (int j = 0; j < options.robust_trials; ++j) {
    const auto& dist = problems::kRobustnessDistributions[j % problems::kRobustnessDistributions.size()];
    const auto t = runner.run(options.trials + j, {options.robust_seed + static_cast<uint64_t>(j), dist}, true);
    if (!t.skipped.empty()) {
      if (result.context_poisoned) break;  // the reference failed stickily: nothing more can run here
      continue;
    }
    if (counted++ == 0) result.ablation_inputs = t.inputs;
    result.robustness_distributions.push_back(dist);
    if (is_integrity_failure(t.verdict)) {  // whatever the inputs (KernelBench's rule looks at none of these)
      result.verdict = t.verdict;
      result.message = trial_label(t) + ": " + t.message;
      return result;
    }
    if (t.verdict != Verdict::correct) {
      result.verdict = robustness_verdict(t.verdict);
      result.message = result.verdict == Verdict::fragile
                           ? "right on the problem's own inputs, wrong on " + t.inputs.distribution + " inputs: " +
                                 trial_label(t) + ": " + t.message
                           : trial_label(t) + ": " + t.message;
      return result;
    }
  }
  result.message = own_inputs_matched + " and on " + std::to_string(counted) + " of " +
                   std::to_string(options.robust_trials) + " robustness trials";
  if (counted < options.robust_trials) result.message += " (the others could not count: see their trials)";
  return result;
}

AblationResult check_without_kernels(problems::Reference& reference, const compile::HostProgram& host,
                                     const c10::Dict<std::string, at::Tensor>& candidate_params,
                                     const CheckOptions& options, ReferenceOutputCache& reference_outputs,
                                     const TrialInputs& inputs) {
  torch::NoGradGuard no_grad;
  AblationResult a;
  a.inputs = inputs;
  std::string failed, wrong;
  // What the kernels would have written stays poison: NaN first, then a finite value, under which an
  // output that only pretends to depend on them (x - x of their result) comes out right.
  auto& phases = a.phases;
  for (const uint8_t fill : {kPoisonByte, kFinitePoisonByte}) {
    auto made = timed(phases.inputs_ms, [&] { return reference.make_inputs(inputs.seed, inputs.distribution); });
    c10::IValue out;
    std::string error;
    {
      std::optional<FreeMemoryGuard> guard;
      {
        PhaseTimer guarding(phases.guard_ms);
        guard.emplace(options.keep_free_bytes, Poison::all_free, fill);
      }
      launch::set_skip_launches(true);
      try {
        {
          PhaseTimer timer(phases.candidate_ms);
          torch::manual_seed(inputs.seed);
          out = host.forward(made, candidate_params);
          synchronize_device();
        }
        PhaseTimer timer(phases.checks_ms);
        verify_process_state(ProcessStateWatch::Depth::watched_ops, "after the candidate's call with its launches skipped");
      } catch (const std::exception& e) {
        error = e.what();
      }
      launch::set_skip_launches(false);
    }
    if (!error.empty()) {
      // The host program cannot run without its kernels' results: they are needed, with this fill.
      a.context_poisoned = is_sticky_cuda_error(error);
      failed = first_line_of_interest(error);
      if (a.context_poisoned) break;
      continue;
    }
    c10::IValue expected;
    with_output_in_host_memory(out, options.offload_candidate_output, [&] {
      PhaseTimer timer(phases.reference_ms);
      expected = reference_output(reference, made, inputs, inputs.seed, reference_outputs);
      made.clear();  // not needed again: the output may come back where they were
    });
    const auto cmp = timed(phases.compare_ms, [&] { return compare_outputs(expected, out, options.tolerance); });
    if (cmp.verdict == Verdict::correct) {
      a.outputs_right = true;
      a.message = std::string("the outputs are right with every launch of the submission's kernels skipped (what they "
                              "would have written filled with ") +
                  (fill == kPoisonByte ? "NaN" : "a finite value") +
                  "): the host program's PyTorch ops computed them (or a ModelNew kept them from an earlier call), "
                  "not the submission's kernels";
      return a;
    }
    wrong = cmp.message;
  }
  a.message = !wrong.empty() ? "without its kernels the outputs are wrong (" + wrong + "): the kernels do the work"
                             : "without its kernels the host program fails: " + failed;
  return a;
}

nlohmann::json to_json(const TrialPhases& p) {
  return {{"inputs", p.inputs_ms},       {"candidate", p.candidate_ms}, {"guard", p.guard_ms},
          {"checks", p.checks_ms},       {"reference", p.reference_ms}, {"compare", p.compare_ms}};
}

nlohmann::json to_json(const CorrectnessPhases& p) { return {{"own", to_json(p.own)}, {"robustness", to_json(p.robustness)}}; }

c10::Dict<std::string, at::Tensor> copy_of_state(const c10::Dict<std::string, at::Tensor>& state) {
  c10::Dict<std::string, at::Tensor> out;
  for (const auto& entry : state) out.insert(entry.key(), entry.value().clone());
  return out;
}

c10::IValue run_reference(problems::Reference& reference, const std::vector<c10::IValue>& inputs, uint64_t forward_seed) {
  auto out = reference.forward(inputs, forward_seed);
  synchronize_device();
  return out;
}

c10::IValue reference_output(problems::Reference& reference, const std::vector<c10::IValue>& inputs,
                             const TrialInputs& made_from, uint64_t forward_seed, ReferenceOutputCache& outputs) {
  return outputs.get(made_from.seed, made_from.distribution, forward_seed,
                     [&] { return run_reference(reference, inputs, forward_seed); });
}

nlohmann::json to_json(const TrialResult& t) {
  nlohmann::json j = {{"trial", t.trial}, {"seed", t.inputs.seed}, {"inputs", t.inputs.distribution},
                      {"verdict", to_string(t.verdict)}, {"message", t.message},
                      {"max_abs_error", t.max_abs_error}, {"max_rel_error", t.max_rel_error}, {"launches", t.launches}};
  if (t.inputs.distribution == problems::kOwnDistribution && t.kernelbench_verdict != t.verdict)
    j["verdict_kernelbench"] = to_string(t.kernelbench_verdict);
  if (t.scaled_atol >= 0) j["scaled_atol"] = t.scaled_atol;
  if (!t.skipped.empty()) j["skipped"] = t.skipped;
  return j;
}

nlohmann::json to_json(const AblationResult& a) {
  return {{"seed", a.inputs.seed}, {"inputs", a.inputs.distribution}, {"outputs_right_without_kernels", a.outputs_right},
          {"message", a.message}};
}

}  // namespace kbench::check
