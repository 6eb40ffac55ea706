#include "sandbox/evaluation.h"

#include <chrono>
#include <filesystem>
#include <future>
#include <optional>

#include "check/memory_guard.h"
#include "compile/compile_cache.h"
#include "compile/host_program.h"
#include "compile/submission.h"
#include "launch/cuda_driver.h"
#include "launch/launch_op.h"
#include "problems/catalog.h"
#include "problems/reference.h"
#include "report/baselines.h"
#include "report/environment.h"
#include "timing/compiled_reference.h"
#include "timing/speedup_audit.h"

#ifdef KBENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace kbench::sandbox {
namespace {

using check::Verdict;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void set_verdict(nlohmann::json& record, Verdict v, const std::string& message) {
  record["verdict"] = check::to_string(v);
  record["message"] = message;
}

#ifdef KBENCH_WITH_CUDA
// Once a candidate has been checked it has two verdicts: kbench's (robustness trials, atol scaled to
// the output) and KernelBench's (its own inputs, atol as given; see check/correctness.h). The stages
// after the check can only take either from `correct` to a failure. The record's `verdict` is the one
// of the evaluation's mode (--compat kernelbench picks KernelBench's); `verdicts` holds both.
struct Verdicts {
  Verdict kbench = Verdict::correct, kernelbench = Verdict::correct;
  std::string kbench_message, kernelbench_message;

  bool either_correct() const { return kbench == Verdict::correct || kernelbench == Verdict::correct; }
  // A failure that holds under both rules (a crash, a stray write, kernels that do no work).
  void fail(Verdict v, const std::string& message) {
    fail_kbench(v, message);
    fail_kernelbench(v, message);
  }
  void fail_kbench(Verdict v, const std::string& message) {
    if (kbench == Verdict::correct) kbench = v, kbench_message = message;
  }
  void fail_kernelbench(Verdict v, const std::string& message) {
    if (kernelbench == Verdict::correct) kernelbench = v, kernelbench_message = message;
  }
  void write(nlohmann::json& record, bool compat_kernelbench) const {
    set_verdict(record, compat_kernelbench ? kernelbench : kbench, compat_kernelbench ? kernelbench_message : kbench_message);
    record["verdicts"] = {{"kbench", {{"verdict", check::to_string(kbench)}, {"message", kbench_message}}},
                          {"kernelbench", {{"verdict", check::to_string(kernelbench)}, {"message", kernelbench_message}}}};
  }
};

c10::Dict<std::string, at::Tensor> clone_state(const c10::Dict<std::string, at::Tensor>& state) {
  // The candidate gets its own copy: writing into it cannot change the reference's weights.
  c10::Dict<std::string, at::Tensor> out;
  for (const auto& entry : state) out.insert(entry.key(), entry.value().clone());
  return out;
}

// The GPU's own start-up, which needs no compiled submission: the CUDA context, the reference's
// weights moved to the GPU once `loading` (the archive read on the CPU, begun before CUDA started)
// is done, and the free memory held for poisoning. The reference stays in `context` across
// evaluations of one problem; `loading` is empty when it is there already. Returns the
// milliseconds of each part.
nlohmann::json prepare_gpu(const EvalRequest& req, const problems::Problem& problem, EvalContext& context,
                           std::future<std::shared_ptr<problems::Reference>>& loading) {
  auto t0 = Clock::now();
  nlohmann::json phases;
  cudaSetDevice(req.device);
  cudaFree(nullptr);
  phases["cuda_context"] = ms_since(t0);
  if (loading.valid()) {
    context.reference.reset();  // free the previous problem's weights first
    context.reference_outputs.clear();
    context.reference_key.clear();
    t0 = Clock::now();
    auto reference = loading.get();
    phases["reference_read_wait"] = ms_since(t0);
    t0 = Clock::now();
    reference->to(torch::Device(torch::kCUDA, req.device));
    cudaDeviceSynchronize();
    phases["reference_to_gpu"] = ms_since(t0);
    context.reference = std::move(reference);
    context.reference_key = problem.key();
  }
  t0 = Clock::now();
  check::hold_free_memory();
  phases["memory_hold"] = ms_since(t0);
  return phases;
}

// The compiled figure recorded in baselines/<gpu>/compiled.json, as a timing entry whose "source"
// says where it came from; without "mean_ms" where there is none (and why).
nlohmann::json recorded_compiled_figure(const std::string& gpu_name, const problems::Problem& problem) {
  const auto file = "baselines/" + report::gpu_slug(gpu_name) + "/compiled.json";
  const auto recorded = report::recorded_baseline(gpu_name, "compiled", problem.level, problem.name);
  if (!recorded) return {{"source", "none: no package and no entry in " + file}};
  if (!recorded->contains("mean"))
    return {{"source", "none: " + recorded->value("reason", "no figure") + " (" + file + ")"}};
  nlohmann::json entry = {{"mean_ms", (*recorded)["mean"]},
                          {"source", "recorded in " + file + ": " + recorded->value("path", "AOTInductor package")}};
  if (!recorded->value("matches_eager", true)) entry["differs_from_eager"] = recorded->value("max_abs_error", 0.0);
  return entry;
}

// Times candidate and eager reference with the same protocol on the same inputs, and checks the
// outputs of timed candidate runs: a candidate that is right when checked but wrong or stale when
// timed (caching, unsynchronised streams) is `inconsistent`.
void time_candidate_and_reference(const EvalRequest& req, const check::CheckOptions& check_options,
                                  problems::Reference& reference, const compile::HostProgram& host,
                                  const c10::Dict<std::string, at::Tensor>& params, const launch::DeviceInfo& gpu,
                                  int64_t output_bytes, EvalContext& context, Verdicts& verdicts,
                                  nlohmann::json& record) {
  auto& baselines = context.baselines;
  torch::NoGradGuard no_grad;
  const auto& problem = reference.problem();
  // Two alternating input sets defeat caching keyed on input pointers, where memory allows.
  const bool two_sets = problem.input_bytes * 4 < gpu.memory_bytes;
  const uint64_t seed = req.check.base_seed + 1000;
  std::vector<std::vector<c10::IValue>> sets = {reference.make_inputs(seed)};
  if (two_sets) sets.push_back(reference.make_inputs(seed + 1));
  std::vector<c10::IValue> kept(sets.size());
  c10::IValue out;
  size_t calls = 0, last_set = 0;  // warm-up calls count too: the set is picked per call
  std::optional<check::FreeMemoryGuard> guard;

  auto candidate = timing::measure(
      [&]() {
        last_set = calls++ % sets.size();
        out = host.forward(sets[last_set], params);
      },
      req.timing,
      [&](int trial) {
        const int first_kept = req.timing.trials - static_cast<int>(sets.size());
        if (trial == first_kept - 1) {
          // The kept runs must write their outputs: they get poisoned memory, not the last answer.
          out = c10::IValue();
          guard.emplace(check_options.keep_free_bytes);
        }
        if (trial >= first_kept) kept[last_set] = check::map_tensors(out, [](const at::Tensor& t) { return t.clone(); });
      });
  out = c10::IValue();
  nlohmann::json timing = {{"candidate", timing::to_json(candidate)}, {"input_sets", sets.size()}};
  const auto stray = guard ? guard->stray_writes() : "";
  guard.reset();
  if (!stray.empty()) {
    verdicts.fail(Verdict::runtime_error, "during timed runs: " + stray);
    record["timing"] = timing;
    return;
  }

  for (size_t s = 0; s < sets.size(); ++s) {
    if (kept[s].isNone() || problem.stochastic) continue;  // fewer timed trials than input sets
    const auto expected = check::reference_output(reference, sets[s], {seed + s, problems::kOwnDistribution}, seed,
                                                  context.reference_outputs);
    const auto cmp = check::compare_outputs(expected, kept[s], check_options.tolerance);
    const std::string why = "correct when checked, but a timed run's output differs: ";
    if (cmp.verdict != Verdict::correct) verdicts.fail_kbench(Verdict::inconsistent, why + cmp.message);
    if (cmp.upstream_verdict != Verdict::correct) verdicts.fail_kernelbench(Verdict::inconsistent, why + cmp.upstream_message);
  }
  kept.clear();
  if (!verdicts.either_correct()) {
    record["timing"] = timing;
    return;
  }

  // The baselines are timed once per problem per GPU; later samples reuse the figures.
  auto eager = baselines.eager.find(problem.key());
  timing["eager_reused"] = eager != baselines.eager.end();
  if (eager == baselines.eager.end()) {
    const auto m = timing::measure([&, i = 0]() mutable { reference.forward(sets[i++ % sets.size()], seed); }, req.timing);
    eager = baselines.eager.emplace(problem.key(), timing::to_json(m)).first;
  }
  timing["eager"] = eager->second;
  timing["speedup_eager"] = eager->second["mean_ms"].get<double>() / candidate.stats.mean;

  // Compiled: this GPU's AOTInductor package of the reference where one exists, else the figure
  // recorded in baselines/<gpu>/compiled.json; the record says which.
  auto compiled = baselines.compiled.find(problem.key());
  if (compiled == baselines.compiled.end()) {
    nlohmann::json entry;
    try {
      timing::CompiledReference package(problem, report::gpu_slug(gpu.name));
      const auto m = timing::measure([&, i = 0]() mutable { package.run(sets[i++ % sets.size()]); }, req.timing);
      entry = timing::to_json(m);
      entry["source"] = "AOTInductor package, timed here: " + package.path().string();
    } catch (const std::exception& e) {
      const std::string why = e.what();
      entry = recorded_compiled_figure(gpu.name, problem);
      entry["package"] = why.substr(0, why.find('\n'));
    }
    compiled = baselines.compiled.emplace(problem.key(), entry).first;
  }
  timing["compiled"] = compiled->second;
  if (compiled->second.contains("mean_ms"))
    timing["speedup_compiled"] = compiled->second["mean_ms"].get<double>() / candidate.stats.mean;
  const auto audit = timing::audit_speedup(problem.input_bytes, output_bytes, gpu.memory_bandwidth, candidate.stats.mean,
                                           eager->second["mean_ms"].get<double>());
  timing["audit"] = timing::to_json(audit);
  record["timing"] = timing;
}
#endif

}  // namespace

nlohmann::json EvalRequest::to_json() const {
  return {{"submission", submission}, {"level", level}, {"problem", problem}, {"root", root}, {"arch", arch},
          {"compile_only", compile_only}, {"time", time}, {"device", device}, {"trials", check.trials},
          {"seed", check.base_seed}, {"robust_trials", check.robust_trials}, {"robust_seed", check.robust_seed},
          {"compat_kernelbench", compat_kernelbench}, {"atol", check.tolerance.atol}, {"rtol", check.tolerance.rtol},
          {"timing_trials", timing.trials}, {"warmup", timing.warmup}, {"flush_l2", timing.flush_l2},
          {"known_baselines", known_baselines}};
}

EvalRequest EvalRequest::from_json(const nlohmann::json& j) {
  EvalRequest r;
  r.submission = j.at("submission");
  r.level = j.at("level");
  r.problem = j.at("problem");
  r.root = j.value("root", "");
  r.arch = j.value("arch", "");
  r.compile_only = j.value("compile_only", false);
  r.time = j.value("time", true);
  r.device = j.value("device", 0);
  r.check.trials = j.value("trials", 5);
  r.check.base_seed = j.value("seed", uint64_t{42});
  r.check.robust_trials = j.value("robust_trials", 3);
  r.check.robust_seed = j.value("robust_seed", uint64_t{0});
  r.compat_kernelbench = j.value("compat_kernelbench", false);
  r.check.tolerance.atol = j.value("atol", -1.0);
  r.check.tolerance.rtol = j.value("rtol", -1.0);
  r.timing.trials = j.value("timing_trials", 100);
  r.timing.warmup = j.value("warmup", 3);
  r.timing.flush_l2 = j.value("flush_l2", true);
  r.known_baselines = j.value("known_baselines", nlohmann::json::object());
  return r;
}

nlohmann::json evaluate(const EvalRequest& req, const std::function<void(const std::string&)>& on_stage,
                        EvalContext* context) {
  EvalContext local_context;
  if (!context) context = &local_context;
  const auto t_start = Clock::now();
  nlohmann::json phases;
  const auto catalog = problems::Catalog::load(problems::project_root(req.root));
  const auto& problem = catalog.get(req.level, req.problem);
#ifdef KBENCH_WITH_CUDA
  // Reading and compiling the archive needs no GPU: it runs while CUDA starts (cuInit in the
  // device query, then the context), and NVRTC after them.
  double reference_read_ms = 0;  // before the future: its destructor waits for the thread that writes it
  std::future<std::shared_ptr<problems::Reference>> reference_loading;
  if (!req.compile_only && context->reference_key != problem.key())
    reference_loading = std::async(std::launch::async, [&problem, &reference_read_ms] {
      const auto t0 = Clock::now();
      auto reference = std::make_shared<problems::Reference>(problem, torch::kCPU);
      reference_read_ms = ms_since(t0);
      return reference;
    });
#endif
  const auto gpu = launch::query_device(req.device);
  // Figures the batch measured earlier on this GPU (a restarted worker starts with none), marked so
  // that a record never presents them as timed in this process; emplace keeps the worker's own
  // where it has them.
  const auto take_known = [&](const char* kind, std::map<std::string, nlohmann::json>& figures) {
    const auto it = req.known_baselines.find(kind);
    if (it == req.known_baselines.end()) return;
    auto entry = *it;
    entry["from_earlier_worker"] = true;
    figures.emplace(problem.key(), entry);
  };
  take_known("eager", context->baselines.eager);
  take_known("compiled", context->baselines.compiled);

  nlohmann::json record = {{"problem", {{"level", problem.level}, {"id", problem.id}, {"name", problem.name}}},
                           {"submission", {{"path", req.submission}}},
                           {"stochastic", problem.stochastic}};
  phases["problem_load"] = ms_since(t_start);

#ifdef KBENCH_WITH_CUDA
  // Runs while NVRTC uses the CPU; joined before the host program is compiled, so that only one
  // thread at a time compiles TorchScript.
  std::future<nlohmann::json> gpu_ready;
  if (gpu.present && !req.compile_only)
    gpu_ready = std::async(std::launch::async, [&] { return prepare_gpu(req, problem, *context, reference_loading); });
  else if (reference_loading.valid())
    reference_loading.wait();  // no GPU to move it to; and it must not compile beside the host program
  std::exception_ptr gpu_error;  // a request error (missing archive): thrown once the submission compiled
  const auto join_gpu = [&] {
    if (!gpu_ready.valid()) return;
    // A large reference loads for seconds: that wait is under the correctness budget, not the
    // compile budget, whose timeout would be blamed on the submission.
    if (on_stage) on_stage("correctness");
    const auto t0 = Clock::now();
    try {
      phases["gpu_prepare"] = gpu_ready.get();
      if (reference_read_ms > 0) phases["gpu_prepare"]["reference_read"] = reference_read_ms;
    } catch (...) {
      gpu_error = std::current_exception();
    }
    phases["gpu_wait"] = ms_since(t0);
  };
#else
  const auto join_gpu = [] {};
#endif
  // After the GPU thread started: NVML's start-up overlaps the CUDA context's.
  auto t0 = Clock::now();
  record["environment"] = report::environment(req.device);
  phases["environment"] = ms_since(t0);

  // 1. Split.
  compile::Submission submission;
  try {
    submission = compile::read_submission(req.submission);
  } catch (const compile::SubmissionError& e) {
    set_verdict(record, Verdict::host_error, e.what());
    return record;
  }
  record["submission"]["hash"] = submission.hash;

  // 2. NVRTC.
  compile::CompileOptions options;
  options.arch = !req.arch.empty() ? req.arch : (gpu.present ? gpu.arch() : "sm_90a");
  const compile::CompileCache cache(problems::cache_dir() / "compile");
  t0 = Clock::now();
  const auto device_code = compile::compile_device_source(
      submission.device_source, std::filesystem::path(req.submission).filename().string(), options, &cache);
  phases["nvrtc"] = ms_since(t0);
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : device_code.kernels) kernels.push_back(k.to_string());
  record["compile"] = {{"ok", device_code.ok}, {"arch", device_code.arch}, {"nvrtc_ms", device_code.compile_ms},
                       {"from_cache", device_code.from_cache}, {"log", device_code.log}, {"kernels", kernels},
                       {"options", device_code.options}};
  if (!device_code.ok) {
    const auto first_error = device_code.log.substr(0, device_code.log.find('\n'));
    set_verdict(record, Verdict::compile_error, "NVRTC: " + first_error);
    return record;
  }

  join_gpu();

  // 3. Host program.
  t0 = Clock::now();
  std::unique_ptr<compile::HostProgram> host;
  try {
    host = std::make_unique<compile::HostProgram>(submission.host_source, problem.inputs.size());
  } catch (const compile::HostProgramError& e) {
    const std::string what = e.what();
    set_verdict(record, Verdict::host_error, what.substr(0, what.find('\n')));
    record["host"] = {{"error", what}};
    return record;
  }
  phases["host_compile"] = ms_since(t0);
  record["host"] = {{"forward", host->forward_schema()}, {"setup", host->has_setup()}, {"torch_ops", host->torch_ops()},
                    {"computing_ops", host->computing_ops()}};

  if (req.compile_only || !gpu.present) {
    set_verdict(record, Verdict::not_checked,
                req.compile_only ? "compiled (--compile-only): correctness not checked"
                                 : "compiled; correctness needs a GPU: " + gpu.why_absent);
    phases["total"] = ms_since(t_start);
    record["phases_ms"] = phases;
    return record;
  }

#ifdef KBENCH_WITH_CUDA
  const auto stage = [&](const char* name) {
    if (on_stage) on_stage(name);
  };

  if (gpu_error) std::rethrow_exception(gpu_error);

  // 4. Load on the GPU (runtime first, so the driver calls find torch's primary context current).
  cudaSetDevice(req.device);
  cudaFree(nullptr);
  t0 = Clock::now();
  std::unique_ptr<launch::LoadedModule> module;
  try {
    module = std::make_unique<launch::LoadedModule>(device_code.cubin, device_code.kernels);
  } catch (const std::exception& e) {
    set_verdict(record, Verdict::compile_error, std::string("the CUBIN does not load on this GPU: ") + e.what());
    return record;
  }
  launch::set_active_module(module.get(), &gpu);
  phases["module_load"] = ms_since(t0);

  stage("correctness");
  auto& reference = *context->reference;

  // 5. Correctness.
  auto check_options = req.check;
  check_options.keep_free_bytes = module->local_memory_reserve(gpu);
  // Before anything else allocates: the memory held while the module was unknown may leave too
  // little for its kernels' local memory, and is returned and taken again then.
  t0 = Clock::now();
  check::hold_free_memory(check_options.keep_free_bytes);
  phases["memory_hold"] = ms_since(t0);
  t0 = Clock::now();
  if (check_options.tolerance.atol < 0) check_options.tolerance.atol = problem.atol;
  if (check_options.tolerance.rtol < 0) check_options.tolerance.rtol = problem.rtol;
  auto params = clone_state(reference.state());
  try {
    params = host->setup(params);
  } catch (const std::exception& e) {
    set_verdict(record, check::classify_exception(e.what()), "setup: " + check::first_line_of_interest(e.what()));
    record["error_details"] = e.what();
    return record;
  }
  // Fingerprints of the reference's own weights: a candidate's out-of-bounds write can land there.
  const auto state_before = check::fingerprints(reference.state());
  phases["params"] = ms_since(t0);  // the candidate's copy of the weights, setup(), fingerprints
  const auto reused_before = context->reference_outputs.reused(), computed_before = context->reference_outputs.computed();
  if (check_options.robust_seed == 0) check_options.robust_seed = check::draw_robust_seed();
  t0 = Clock::now();
  const auto correctness = check::check_correctness(reference, *host, params, check_options, context->reference_outputs);
  phases["correctness"] = ms_since(t0);
  phases["correctness_split"] = check::to_json(correctness.phases);
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& t : correctness.trials) trials.push_back(check::to_json(t));
  record["correctness"] = {{"trials", trials}, {"atol", check_options.tolerance.atol},
                           {"rtol", check_options.tolerance.rtol}, {"robust_seed", check_options.robust_seed},
                           {"output_bytes", correctness.output_bytes}};
  Verdicts verdicts{correctness.verdict, correctness.upstream_verdict, correctness.message, correctness.upstream_message};
  if (!correctness.details.empty()) record["error_details"] = correctness.details;
  bool context_poisoned = correctness.context_poisoned;

  // 6. Timing, for a candidate correct under either rule (KernelBench's score needs the speedup of
  // one that is right only on its own inputs; kbench's never counts it).
  if (verdicts.either_correct() && req.time) {
    stage("timing");
    t0 = Clock::now();
    try {
      time_candidate_and_reference(req, check_options, reference, *host, params, gpu, correctness.output_bytes,
                                   *context, verdicts, record);
    } catch (const std::exception& e) {
      verdicts.fail(check::classify_exception(e.what()), "during timing: " + check::first_line_of_interest(e.what()));
      record["error_details"] = e.what();
    }
    phases["timing"] = ms_since(t0);
  }

  // 7. The kernels must do the work: the outputs must be wrong without them. Last, because a host
  // program fed poison instead of its kernels' results may fail stickily (an index from poison);
  // the verdict holds either way.
  if (verdicts.either_correct() && !context_poisoned) {
    if (host->computing_ops().empty()) {
      record["ablation"] = {{"skipped", "forward calls no PyTorch op that computes values (only allocation, views, copies, "
                                        "dtype conversions, fills and random draws): what its kernels do not write is a copy "
                                        "of an input or a constant, which the robustness trials rule out"}};
    } else {
      t0 = Clock::now();
      const auto ablation = check::check_without_kernels(reference, *host, params, check_options,
                                                         context->reference_outputs, correctness.ablation_inputs);
      phases["ablation"] = ms_since(t0);
      record["ablation"] = check::to_json(ablation);
      if (ablation.outputs_right) verdicts.fail(Verdict::no_custom_kernel, ablation.message);
      context_poisoned = ablation.context_poisoned;
    }
  }
  verdicts.write(record, req.compat_kernelbench);
  if (req.compat_kernelbench) record["compat"] = "kernelbench";
  record["context_poisoned"] = context_poisoned;
  launch::set_active_module(nullptr, nullptr);
  record["reference_outputs"] = {{"reused", context->reference_outputs.reused() - reused_before},
                                 {"computed", context->reference_outputs.computed() - computed_before}};
  if (!context_poisoned) {
    if (check::fingerprints(reference.state()) != state_before) {
      verdicts.fail(Verdict::input_mutated, "the candidate wrote into the reference's parameters (out-of-bounds write)");
      verdicts.write(record, req.compat_kernelbench);
      context->reference.reset();  // never check another candidate against damaged weights
      context->reference_key.clear();
      context->reference_outputs.clear();
    }
  }
#endif
  phases["total"] = ms_since(t_start);
  record["phases_ms"] = phases;
  return record;
}

}  // namespace kbench::sandbox
