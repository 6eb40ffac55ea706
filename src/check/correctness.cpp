#include "check/correctness.h"

#include <chrono>

#include "check/memory_guard.h"
#include "check/reference_outputs.h"
#include "launch/launch_op.h"

#ifdef KBENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace kbench::check {
namespace {

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

// Adds the milliseconds since construction to `total` when it goes out of scope.
class PhaseTimer {
 public:
  explicit PhaseTimer(double& total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~PhaseTimer() {
    total_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  double& total_;
  std::chrono::steady_clock::time_point start_;
};

// The submission's kernels must produce the answer: an output that is (a view of) an input, or
// whose memory no launched kernel was given, was made by the host program alone.
std::string output_not_from_kernels(const c10::IValue& output, const std::vector<c10::IValue>& inputs) {
  std::vector<at::Tensor> outs, ins;
  collect_tensors(output, outs);
  for (const auto& v : inputs) collect_tensors(v, ins);
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].defined() || !outs[i].has_storage()) continue;
    const void* storage = outs[i].storage().data();
    for (const auto& in : ins)
      if (in.defined() && in.has_storage() && in.storage().data() == storage)
        return "output " + std::to_string(i) + " is (a view of) an input";
    if (!launch::storage_was_launched(storage))
      return "output " + std::to_string(i) + " was computed by PyTorch ops: no kernel of the submission was given its memory";
  }
  return "";
}

}  // namespace

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

CorrectnessResult check_correctness(problems::Reference& reference, const compile::HostProgram& host,
                                    const c10::Dict<std::string, at::Tensor>& candidate_params,
                                    const CheckOptions& options, ReferenceOutputCache& reference_outputs) {
  torch::NoGradGuard no_grad;
  CorrectnessResult result;
  auto& phases = result.phases;
  // The parameters are the candidate's too: writing into them carries state between calls.
  const auto params_before = fingerprints(candidate_params);
  for (int trial = 0; trial < options.trials; ++trial) {
    TrialResult t;
    t.trial = trial;
    t.seed = options.base_seed + static_cast<uint64_t>(trial);
    std::vector<c10::IValue> inputs;
    Fingerprints before;
    {
      PhaseTimer timer(phases.inputs_ms);
      inputs = reference.make_inputs(t.seed);
      before = fingerprints(inputs);
    }

    c10::IValue candidate_out;
    {
      PhaseTimer timer(phases.candidate_ms);
      FreeMemoryGuard guard(options.keep_free_bytes);
      launch::reset_launch_count();
      try {
        torch::manual_seed(t.seed);
        candidate_out = host.forward(inputs, candidate_params);
        synchronize_device();
        const auto stray = guard.stray_writes();
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
    }
    {
      PhaseTimer timer(phases.checks_ms);
      if (t.verdict == Verdict::correct && t.launches == 0) {
        t.verdict = Verdict::no_custom_kernel;
        t.message = "forward returned without launching a kernel of the submission";
      }
      if (t.verdict == Verdict::correct && fingerprints(inputs) != before) {
        t.verdict = Verdict::input_mutated;
        t.message = "the candidate modified its inputs";
      }
      if (t.verdict == Verdict::correct && fingerprints(candidate_params) != params_before) {
        t.verdict = Verdict::input_mutated;
        t.message = "the candidate modified its parameters (params)";
      }
      if (t.verdict == Verdict::correct) {
        const auto why = output_not_from_kernels(candidate_out, inputs);
        if (!why.empty()) {
          t.verdict = Verdict::no_custom_kernel;
          t.message = why;
        }
      }
    }
    if (t.verdict == Verdict::correct) {
      c10::IValue reference_out;
      {
        PhaseTimer timer(phases.reference_ms);
        reference_out = reference_output(reference, inputs, t.seed, t.seed, reference_outputs);
      }
      PhaseTimer timer(phases.compare_ms);
      const auto cmp = compare_outputs(reference_out, candidate_out, options.tolerance);
      t.verdict = cmp.verdict;
      t.message = cmp.message;
      t.max_abs_error = cmp.max_abs_error;
      t.max_rel_error = cmp.max_rel_error;
    }
    result.trials.push_back(t);
    if (t.verdict != Verdict::correct) {
      result.verdict = t.verdict;
      result.message = "trial " + std::to_string(trial) + " (seed " + std::to_string(t.seed) + "): " + t.message;
      return result;  // one failing trial decides; later trials would only repeat it
    }
  }
  result.message = "matched the reference on " + std::to_string(options.trials) + " trials";
  return result;
}

nlohmann::json to_json(const CorrectnessPhases& p) {
  return {{"inputs", p.inputs_ms}, {"candidate", p.candidate_ms}, {"checks", p.checks_ms},
          {"reference", p.reference_ms}, {"compare", p.compare_ms}};
}

c10::IValue reference_output(problems::Reference& reference, const std::vector<c10::IValue>& inputs,
                             uint64_t input_seed, uint64_t forward_seed, ReferenceOutputCache& outputs) {
  return outputs.get(input_seed, forward_seed, [&] {
    auto out = reference.forward(inputs, forward_seed);
    synchronize_device();
    return out;
  });
}

nlohmann::json to_json(const TrialResult& t) {
  return {{"trial", t.trial}, {"seed", t.seed}, {"verdict", to_string(t.verdict)}, {"message", t.message},
          {"max_abs_error", t.max_abs_error}, {"max_rel_error", t.max_rel_error}, {"launches", t.launches}};
}

}  // namespace kbench::check
