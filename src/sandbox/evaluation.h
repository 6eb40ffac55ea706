// One submission, one verdict: split → NVRTC → host program → (GPU) load → correctness → timing.
// This runs inside a worker process (sandbox/worker.h) so that whatever the candidate does to its
// process, the caller survives.
#pragma once

#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "check/correctness.h"
#include "check/process_state.h"
#include "compile/nvrtc_compiler.h"
#include "timing/timer.h"

namespace kbench::problems {
class Reference;
struct Problem;
}
namespace kbench::launch {
struct DeviceInfo;
}

namespace kbench::sandbox {

struct EvalRequest {
  std::string submission;    // path of the .cu file
  int level = 0;
  int problem = 0;
  std::string root;          // project root ("" = default)
  std::string arch;          // "" = the GPU's, or sm_90a without a GPU
  bool compile_only = false;
  bool time = true;          // measure candidate and eager reference once correct
  // --compat kernelbench or kernelbench-v0.1: the record's verdict is KernelBench's under that rule
  // (check.tolerance.kernelbench; its own inputs, its tolerance); the robustness trials still run
  // and kbench's verdict is kept beside it (see check/correctness.h).
  bool compat_kernelbench = false;
  int device = 0;
  check::CheckOptions check;
  timing::TimingOptions timing;
  // This problem's baselines as measured earlier on this GPU with these timing options
  // ({"eager": ..., "compiled": ...}, either may be absent): a GpuRunner hands them to a restarted
  // worker, which then reuses them instead of timing the reference again.
  nlohmann::json known_baselines = nlohmann::json::object();
  // --compiled: "off", "recorded" or "on-demand" (sandbox/compiled_on_demand.h). For on-demand, the
  // parent puts the figure it found or made (a timing entry, sandbox/baseline_timing.h) here.
  std::string compiled = "recorded";
  nlohmann::json compiled_figure;
  // --profile: a `profile` section after timing (profile/): the candidate's launches and PyTorch ops
  // with their GPU times, the reference's operators and kernels, bandwidth and FLOP figures. --ncu
  // adds Nsight Compute's figures per kernel (sandbox/ncu_pass.h) and implies --profile.
  bool profile = false;
  bool ncu = false;
  // Set by the ncu pass on the request of its own worker, which runs under ncu: compile, load and
  // one forward for ncu to profile; no checks, no timing, verdict not_checked.
  bool ncu_target = false;
  // --gpu-memory: the evaluation behaves as on a GPU with this many GiB (0: the whole GPU). The
  // worker's caching allocator is capped there, and the free memory it holds for poisoning with it;
  // a problem measured to need more (problems/footprint.json) is refused before anything runs.
  double gpu_memory_gib = 0;
  // The problem of the request that will follow on this worker, where batch or serve knows it (0:
  // none): its archive is read on the CPU while this request runs on the GPU.
  int next_level = 0, next_problem = 0;
  // A process of this GPU still ending, set by its runner: the ModelNew process retired after the
  // last request, whose context and memory the driver is releasing. The evaluation waits for its end
  // after starting CUDA, before it takes GPU memory or times anything (-1: none).
  int ending_process = -1;

  nlohmann::json to_json() const;
  static EvalRequest from_json(const nlohmann::json& j);
};

// --compat's modes: "none" (the verdict is kbench's, KernelBench's today's rule beside it),
// "kernelbench" (today's rule decides) and "kernelbench-v0.1" (the paper's rule decides). False,
// and `req` unchanged, for another name.
bool set_compat(EvalRequest& req, const std::string& mode);
std::string compat_mode(const EvalRequest& req);
inline constexpr const char* kCompatModes = "\"kernelbench\", \"kernelbench-v0.1\" or \"none\"";

// --gpu-memory in bytes (0: no limit).
int64_t gpu_memory_bytes(const EvalRequest& req);

// How an evaluation under --gpu-memory fits its problem, decided from problems/footprint.json before
// anything runs: as usual; or with the candidate's output waiting in host memory while the
// reference computes its own (two copies over PCIe per check: only where the usual way is measured
// not to fit); or not at all, and `refusal` says why (the reference would not fit, or the
// candidate would run out of memory through no fault of its own).
struct MemoryPlan {
  bool offload_candidate_output = false;
  std::string refusal;
};
MemoryPlan plan_gpu_memory(const EvalRequest& req, const problems::Problem& problem);

// The NVRTC options of the compile stage for `req` on `gpu`: what NVRTC ahead of the GPUs uses, so
// that the worker finds its result in the compile cache.
compile::CompileOptions compile_options_for(const EvalRequest& req, const launch::DeviceInfo& gpu);

// What a baseline figure is kept under: its problem and the timing options it was measured with
// (serve's requests may differ in them: a figure timed without the L2 flush is another figure).
std::string baseline_key(const std::string& problem_key, const timing::TimingOptions& timing);

// Baseline timings by baseline_key (timing JSON, with "source" for compiled).
struct BaselineTimings {
  std::map<std::string, nlohmann::json> eager;
  std::map<std::string, nlohmann::json> compiled;
};

// What a worker keeps between evaluations of the same problem: the loaded reference (weights on the
// GPU), its outputs where keeping them pays, and its baseline timings, so a batch pays for them once
// per problem, not once per sample.
struct EvalContext {
  std::shared_ptr<problems::Reference> reference;  // the problem of `reference_key`
  std::string reference_key;
  // The archive of the next request's problem (EvalRequest::next_level), read on the CPU meanwhile.
  std::future<std::shared_ptr<problems::Reference>> next_reference;
  std::string next_reference_key;
  check::ReferenceOutputCache reference_outputs;  // of `reference`
  BaselineTimings baselines;
  std::map<std::string, nlohmann::json> reference_profiles;  // by problem key (--profile)
  // The process state as it was before any submission code ran here (check/process_state.h): a
  // kbench-format worker's since its first evaluation, a ModelNew's since before its import.
  std::optional<check::ProcessStateWatch> process_watch;
  // Every op's kernels in PyTorch's dispatcher, taken by start_python_ahead once kbench's Python had
  // started (the costly part of a ModelNew's snapshot, taken before its request); used once.
  std::optional<check::ProcessState> dispatcher_ahead;
  // A submission's Python or native code has been loaded into this process (a ModelNew): figures
  // measured from now on are never handed to another evaluation.
  bool submission_code_loaded = false;
  // What start_python_ahead answered (its phases, or its "error"); null where Python was not started
  // ahead of the request.
  nlohmann::json python_prestart;
  // What prepare_gpu_ahead did (its phases; "problem" where it prepared one); null where the GPU was
  // not prepared ahead of the request.
  nlohmann::json gpu_prepared;
  // The problem whose reference's ops the process watch compares, once they were added to it.
  std::string watched_problem;
  // A retired process still ending (EvalRequest::ending_process) whose wait was put off to the
  // candidate's first GPU work, in a spare whose GPU was prepared ahead (-1: none).
  int pending_end = -1;
};

// A ModelNew spare's start (sandbox/gpu_runner.h), before any submission is known: kbench's Python
// (the interpreter, `import torch`, kbench's support module), so that only kbench's own code has run
// in the process when a ModelNew arrives. It touches no GPU: no CUDA context, no memory, no problem
// loaded until its request (which starts CUDA, then torch.cuda, as a cold worker does), so that it
// can start beside another evaluation's timed calls (its GPU may be prepared later:
// prepare_gpu_ahead). Returns the milliseconds of each part, or {"error": ...} when Python cannot
// start (then the next ModelNew's request error), and keeps them in `context` for that request's
// record. A process where Python started never evaluates a `.cu` (evaluate() refuses it).
nlohmann::json start_python_ahead(EvalContext& context);

// A ModelNew spare's GPU, prepared after its Python's start for the request its runner expects
// (`expected`: the problem and options of the ModelNew it runs beside; sandbox/gpu_runner.h) and
// before any submission is known, holding `spares_lock` shared (sandbox/gpu_lock.h; skipped where
// the runner's worker holds the GPU's memory): the CUDA context, torch.cuda's set-up and the
// process-state snapshot; where twice the problem's measured peak and 4 GiB are free beside that
// evaluation, the reference's weights on the GPU and the ops it calls added to the snapshot;
// Triton's first use of the GPU where the expected request's file imports Triton. Each part that
// uses the GPU holds its quiet lock (sandbox/gpu_lock.h), so none runs beside timed calls (torch.cuda's
// set-up and the snapshot, which only read state, run beside them); nothing is held for
// poisoning (the request does that), and what the reference's runs allocated is given back. A
// request for another problem loads its own reference and adds its ops. Returns the milliseconds
// of each part, {"skipped": why} (no GPU, no Python started ahead), or {"error": ...}, after which
// the process must not evaluate anything (its CUDA may be unusable).
nlohmann::json prepare_gpu_ahead(const EvalRequest& expected, const std::filesystem::path& spares_lock, EvalContext& context);

// Gives the GPU memory this worker holds back to the driver, for a ModelNew evaluated beside it on
// its GPU (sandbox/gpu_runner.h): the kept reference outputs are dropped, the reference's weights
// wait in host memory (the next request moves them back), and the memory held for poisoning is
// returned (the next request holds it again). Returns the milliseconds it took.
nlohmann::json give_back_gpu_memory(EvalContext& context);

// The result record (JSON). Never throws for anything the submission does; throws only for errors
// of the request itself (unknown problem, unreadable file, missing archive).
// `on_stage` hears "correctness", "timing" and "profile" as they start (the worker forwards them to its parent,
// which applies a time budget per stage).
nlohmann::json evaluate(const EvalRequest& request,
                        const std::function<void(const std::string&)>& on_stage = {}, EvalContext* context = nullptr);

}  // namespace kbench::sandbox
