#include "sandbox/evaluation.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <optional>

#include "check/memory_guard.h"
#include "compile/compile_cache.h"
#include "compile/host_program.h"
#include "compile/modelnew.h"
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

// Figures the batch measured earlier on this GPU (a restarted worker starts with none), marked so
// that a record never presents them as timed in this process; emplace keeps the worker's own where
// it has them.
void take_known_baselines(const EvalRequest& req, const problems::Problem& problem, BaselineTimings& baselines) {
  for (auto [kind, figures] : {std::pair{"eager", &baselines.eager}, std::pair{"compiled", &baselines.compiled}}) {
    const auto it = req.known_baselines.find(kind);
    if (it == req.known_baselines.end()) continue;
    auto entry = *it;
    entry["from_earlier_worker"] = true;
    figures->emplace(problem.key(), entry);
  }
}

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

namespace {

// The stages below share these: the request, the record being written and the milliseconds of each
// phase. A stage writes its own fragment of the record.
struct Run {
  const EvalRequest& req;
  const problems::Problem& problem;
  const launch::DeviceInfo& gpu;
  EvalContext& context;
  nlohmann::json& record;
  nlohmann::json& phases;
  std::function<void(const std::string&)> on_stage;

  void stage(const char* name) const {
    if (on_stage) on_stage(name);
  }
};

// The GPU's start-up beside the compile: the reference's archive read on the CPU while CUDA starts
// (begun before the device query), then the context, the weights moved and the memory held on a
// second thread while NVRTC runs. join() waits for it: before the host program compiles, so that one
// thread at a time compiles TorchScript.
class GpuStartup {
 public:
  GpuStartup(const EvalRequest& req, const problems::Problem& problem, EvalContext& context) {
#ifdef KBENCH_WITH_CUDA
    if (!req.compile_only && context.reference_key != problem.key())
      reference_loading_ = std::async(std::launch::async, [&problem, this] {
        const auto t0 = Clock::now();
        auto reference = std::make_shared<problems::Reference>(problem, torch::kCPU);
        reference_read_ms_ = ms_since(t0);
        return reference;
      });
#else
    (void)req, (void)problem, (void)context;
#endif
  }

  // After the device query: starts the GPU thread (or, without a GPU, waits for the read).
  void start(const EvalRequest& req, const problems::Problem& problem, const launch::DeviceInfo& gpu, EvalContext& context) {
#ifdef KBENCH_WITH_CUDA
    if (gpu.present && !req.compile_only)
      ready_ = std::async(std::launch::async, [&] { return prepare_gpu(req, problem, context, reference_loading_); });
    else if (reference_loading_.valid())
      reference_loading_.wait();  // no GPU to move it to; and it must not compile beside the host program
#else
    (void)req, (void)problem, (void)gpu, (void)context;
#endif
  }

  // Waits for the GPU thread. A large reference loads for seconds: that wait is under the
  // correctness budget, not the compile budget, whose timeout would be blamed on the submission.
  void join(const Run& run) {
#ifdef KBENCH_WITH_CUDA
    if (!ready_.valid()) return;
    run.stage("correctness");
    const auto t0 = Clock::now();
    try {
      run.phases["gpu_prepare"] = ready_.get();
      if (reference_read_ms_ > 0) run.phases["gpu_prepare"]["reference_read"] = reference_read_ms_;
    } catch (...) {
      error_ = std::current_exception();
    }
    run.phases["gpu_wait"] = ms_since(t0);
#else
    (void)run;
#endif
  }

  // A request error of the start-up (a missing archive), thrown once the submission has compiled.
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  double reference_read_ms_ = 0;  // declared before the future: its destructor waits for the thread that writes it
#ifdef KBENCH_WITH_CUDA
  std::future<std::shared_ptr<problems::Reference>> reference_loading_;
  std::future<nlohmann::json> ready_;
#endif
  std::exception_ptr error_;
};

// What the compile stage makes of a submission: its device code (NVRTC; none for a ModelNew, whose
// kernels come with its extension) and its host program.
struct CompiledSubmission {
  std::optional<compile::CompiledDevice> device_code;
  std::unique_ptr<compile::HostProgram> host;
};

std::string compile_arch(const Run& run) {
  return !run.req.arch.empty() ? run.req.arch : (run.gpu.present ? run.gpu.arch() : "sm_90a");
}

// The host program's part of the record. A ModelNew's ops are known once forward has run
// (run_on_gpu writes them again then).
void record_host(const Run& run, const compile::HostProgram& host) {
  run.record["host"] = {{"forward", host.forward_schema()}, {"setup", host.has_setup()}, {"torch_ops", host.torch_ops()},
                        {"computing_ops", host.computing_ops()}};
}

// Stage 1 of KernelBench's format: the file imported in the worker's Python, its extensions built
// or found in the cache, ModelNew constructed (compile/modelnew.h). After the GPU start-up has
// joined: Python starts beside no other thread's work with libtorch.
std::optional<CompiledSubmission> compile_modelnew_stage(const Run& run, GpuStartup& gpu_startup) {
  const auto& req = run.req;
  auto& record = run.record;
  record["submission"]["format"] = "modelnew";
  {
    std::ifstream in(req.submission, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read submission " + req.submission);
    record["submission"]["hash"] =
        compile::content_hash(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  }
  gpu_startup.join(run);
  run.stage("compile");
  compile::ModelNewOptions options;
  options.problem_source = problems::project_root(req.root) / run.problem.file;
  options.arch = compile_arch(run);
  options.with_cuda = run.gpu.present && !req.compile_only;
  options.device = req.device;
  options.cache_dir = problems::cache_dir();
  options.on_stage = run.on_stage;
#ifdef KBENCH_WITH_CUDA
  if (options.with_cuda) cudaSetDevice(req.device);  // torch.cuda's set-up below sees this GPU, as forward will
#endif
  auto t0 = Clock::now();
  compile::start_python(options.with_cuda);
  run.phases["python_start"] = ms_since(t0);
  std::vector<compile::ExtensionBuild> builds;
  CompiledSubmission compiled;
  t0 = Clock::now();
  try {
    compiled.host = compile::load_modelnew(req.submission, options, builds);
  } catch (const compile::ModelNewError& e) {
    using Kind = compile::ModelNewError::Kind;
    set_verdict(record, e.kind == Kind::build ? Verdict::compile_error
                        : e.kind == Kind::unsupported ? Verdict::unsupported_backend : Verdict::host_error,
                e.what());
    record["host"] = {{"error", e.details}};
  }
  run.phases["modelnew_load"] = ms_since(t0);
  nlohmann::json extensions = nlohmann::json::array();
  bool built = true;
  for (const auto& b : builds) extensions.push_back(b.to_json()), built = built && b.ok;
  record["compile"] = {{"ok", built}, {"arch", options.arch}, {"extensions", extensions}};
  if (!compiled.host) return std::nullopt;
  record_host(run, *compiled.host);
  return compiled;
}

// Stage 1: split the file, NVRTC, then the host program (after the GPU start-up joined). Returns
// nothing once the record holds a verdict (host_error, compile_error). The one place where the two
// submission formats part.
std::optional<CompiledSubmission> compile_stage(const Run& run, GpuStartup& gpu_startup) {
  if (compile::is_modelnew_file(run.req.submission)) return compile_modelnew_stage(run, gpu_startup);
  const auto& req = run.req;
  auto& record = run.record;
  record["submission"]["format"] = "kbench";
  compile::Submission submission;
  try {
    submission = compile::read_submission(req.submission);
  } catch (const compile::SubmissionError& e) {
    set_verdict(record, Verdict::host_error, e.what());
    return std::nullopt;
  }
  record["submission"]["hash"] = submission.hash;

  CompiledSubmission compiled;
  compile::CompileOptions options;
  options.arch = compile_arch(run);
  const compile::CompileCache cache(problems::cache_dir() / "compile");
  auto t0 = Clock::now();
  compiled.device_code = compile::compile_device_source(
      submission.device_source, std::filesystem::path(req.submission).filename().string(), options, &cache);
  run.phases["nvrtc"] = ms_since(t0);
  const auto& device_code = *compiled.device_code;
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : device_code.kernels) kernels.push_back(k.to_string());
  record["compile"] = {{"ok", device_code.ok}, {"arch", device_code.arch}, {"nvrtc_ms", device_code.compile_ms},
                       {"from_cache", device_code.from_cache}, {"log", device_code.log}, {"kernels", kernels},
                       {"options", device_code.options}};
  if (!device_code.ok) {
    const auto first_error = device_code.log.substr(0, device_code.log.find('\n'));
    set_verdict(record, Verdict::compile_error, "NVRTC: " + first_error);
    return std::nullopt;
  }

  gpu_startup.join(run);

  t0 = Clock::now();
  try {
    compiled.host = std::make_unique<compile::ScriptHostProgram>(submission.host_source, run.problem.inputs.size());
  } catch (const compile::HostProgramError& e) {
    const std::string what = e.what();
    set_verdict(record, Verdict::host_error, what.substr(0, what.find('\n')));
    record["host"] = {{"error", what}};
    return std::nullopt;
  }
  run.phases["host_compile"] = ms_since(t0);
  record_host(run, *compiled.host);
  return compiled;
}

#ifdef KBENCH_WITH_CUDA
// Stage 2: the CUBIN loaded into the GPU's context, its kernels made the ones kbench.launch finds
// (a ModelNew has none: its kernels came with its extension). False (and a compile_error in the
// record) when it does not load.
bool load_stage(const Run& run, const CompiledSubmission& compiled, std::unique_ptr<launch::LoadedModule>& module) {
  // The runtime first, so that the driver calls find torch's primary context current.
  cudaSetDevice(run.req.device);
  cudaFree(nullptr);
  if (!compiled.device_code) return true;
  const auto t0 = Clock::now();
  try {
    module = std::make_unique<launch::LoadedModule>(compiled.device_code->cubin, compiled.device_code->kernels);
  } catch (const std::exception& e) {
    set_verdict(run.record, Verdict::compile_error, std::string("the CUBIN does not load on this GPU: ") + e.what());
    return false;
  }
  launch::set_active_module(module.get(), &run.gpu);
  run.phases["module_load"] = ms_since(t0);
  return true;
}

// The candidate's parameters: its own copy of the reference's weights, through setup(). Sets the
// verdict and returns nothing when setup fails.
std::optional<c10::Dict<std::string, at::Tensor>> candidate_params(const Run& run, const compile::HostProgram& host) {
  auto params = clone_state(run.context.reference->state());
  try {
    return host.setup(params);
  } catch (const std::exception& e) {
    set_verdict(run.record, check::classify_exception(e.what()), "setup: " + check::first_line_of_interest(e.what()));
    run.record["error_details"] = e.what();
    return std::nullopt;
  }
}

// Stage 3: the correctness and robustness trials (check/correctness.h).
check::CorrectnessResult correctness_stage(const Run& run, const compile::HostProgram& host,
                                           const c10::Dict<std::string, at::Tensor>& params,
                                           const check::CheckOptions& check_options) {
  auto& context = run.context;
  const auto t0 = Clock::now();
  auto correctness = check::check_correctness(*context.reference, host, params, check_options, context.reference_outputs);
  run.phases["correctness"] = ms_since(t0);
  run.phases["correctness_split"] = check::to_json(correctness.phases);
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& t : correctness.trials) trials.push_back(check::to_json(t));
  run.record["correctness"] = {{"trials", trials}, {"atol", check_options.tolerance.atol},
                               {"rtol", check_options.tolerance.rtol}, {"robust_seed", check_options.robust_seed},
                               {"output_bytes", correctness.output_bytes}};
  if (!correctness.details.empty()) run.record["error_details"] = correctness.details;
  return correctness;
}

// Stage 4: timing, for a candidate correct under either rule (KernelBench's score needs the speedup
// of one that is right only on its own inputs; kbench's never counts it).
void timing_stage(const Run& run, const compile::HostProgram& host, const c10::Dict<std::string, at::Tensor>& params,
                  const check::CheckOptions& check_options, int64_t output_bytes, Verdicts& verdicts) {
  run.stage("timing");
  const auto t0 = Clock::now();
  try {
    time_candidate_and_reference(run.req, check_options, *run.context.reference, host, params, run.gpu, output_bytes,
                                 run.context, verdicts, run.record);
  } catch (const std::exception& e) {
    verdicts.fail(check::classify_exception(e.what()), "during timing: " + check::first_line_of_interest(e.what()));
    run.record["error_details"] = e.what();
  }
  run.phases["timing"] = ms_since(t0);
}

// Stage 5: the kernels must do the work: the outputs must be wrong without them. Last, because a
// host program fed poison instead of its kernels' results may fail stickily (an index from poison);
// the verdict holds either way. Returns whether that left the context unusable.
bool ablation_stage(const Run& run, const compile::HostProgram& host, const c10::Dict<std::string, at::Tensor>& params,
                    const check::CheckOptions& check_options, const check::TrialInputs& inputs, Verdicts& verdicts) {
  if (host.computing_ops().empty() && !host.keeps_state()) {
    run.record["ablation"] = {{"skipped", "forward calls no PyTorch op that computes values (only allocation, views, copies, "
                                          "dtype conversions, fills and random draws): what its kernels do not write is a copy "
                                          "of an input or a constant, which the robustness trials rule out"}};
    return false;
  }
  const auto t0 = Clock::now();
  const auto ablation = check::check_without_kernels(*run.context.reference, host, params, check_options,
                                                     run.context.reference_outputs, inputs);
  run.phases["ablation"] = ms_since(t0);
  run.record["ablation"] = check::to_json(ablation);
  if (ablation.outputs_right) verdicts.fail(Verdict::no_custom_kernel, ablation.message);
  return ablation.context_poisoned;
}

// Last: the reference's own weights, where a candidate's out-of-bounds write can land. A damaged
// reference is dropped, so that no later candidate is checked against it.
void reference_integrity_stage(const Run& run, const check::Fingerprints& state_before, Verdicts& verdicts) {
  auto& context = run.context;
  if (check::fingerprints(context.reference->state()) == state_before) return;
  verdicts.fail(Verdict::input_mutated, "the candidate wrote into the reference's parameters (out-of-bounds write)");
  context.reference.reset();
  context.reference_key.clear();
  context.reference_outputs.clear();
}

// Stages 2 to 5 and the integrity check, on the GPU: the record's verdict is set when it returns.
void run_on_gpu(const Run& run, const CompiledSubmission& compiled) {
  std::unique_ptr<launch::LoadedModule> module;
  if (!load_stage(run, compiled, module)) return;
  run.stage("correctness");
  const auto& host = *compiled.host;
  const auto& problem = run.problem;
  auto& context = run.context;

  auto check_options = run.req.check;
  check_options.keep_free_bytes = module ? module->local_memory_reserve(run.gpu) : 0;
  // Before anything else allocates: the memory held while the module was unknown may leave too
  // little for its kernels' local memory, and is returned and taken again then.
  auto t0 = Clock::now();
  check::hold_free_memory(check_options.keep_free_bytes);
  run.phases["memory_hold"] = ms_since(t0);
  if (check_options.tolerance.atol < 0) check_options.tolerance.atol = problem.atol;
  if (check_options.tolerance.rtol < 0) check_options.tolerance.rtol = problem.rtol;
  if (check_options.robust_seed == 0) check_options.robust_seed = check::draw_robust_seed();

  t0 = Clock::now();
  const auto params = candidate_params(run, host);
  if (!params) return;
  const auto state_before = check::fingerprints(context.reference->state());
  run.phases["params"] = ms_since(t0);  // the candidate's copy of the weights, setup(), fingerprints

  const auto reused_before = context.reference_outputs.reused(), computed_before = context.reference_outputs.computed();
  const auto correctness = correctness_stage(run, host, *params, check_options);
  Verdicts verdicts{correctness.verdict, correctness.upstream_verdict, correctness.message, correctness.upstream_message};
  bool context_poisoned = correctness.context_poisoned;
  if (verdicts.either_correct() && run.req.time)
    timing_stage(run, host, *params, check_options, correctness.output_bytes, verdicts);
  if (verdicts.either_correct() && !context_poisoned)
    context_poisoned = ablation_stage(run, host, *params, check_options, correctness.ablation_inputs, verdicts);
  launch::set_active_module(nullptr, nullptr);
  run.record["host"]["torch_ops"] = host.torch_ops();  // a ModelNew's are known only now
  run.record["host"]["computing_ops"] = host.computing_ops();
  run.record["context_poisoned"] = context_poisoned;
  run.record["reference_outputs"] = {{"reused", context.reference_outputs.reused() - reused_before},
                                     {"computed", context.reference_outputs.computed() - computed_before}};
  if (!context_poisoned) reference_integrity_stage(run, state_before, verdicts);
  verdicts.write(run.record, run.req.compat_kernelbench);
  if (run.req.compat_kernelbench) run.record["compat"] = "kernelbench";
}
#endif

}  // namespace

// The pipeline: compile → (GPU) load → correctness → timing → ablation → integrity; each stage
// writes its fragment of the record, and the first that settles the verdict ends it.
nlohmann::json evaluate(const EvalRequest& req, const std::function<void(const std::string&)>& on_stage,
                        EvalContext* context) {
  EvalContext local_context;
  if (!context) context = &local_context;
  const auto t_start = Clock::now();
  nlohmann::json phases;
  const auto catalog = problems::Catalog::load(problems::project_root(req.root));
  const auto& problem = catalog.get(req.level, req.problem);
  GpuStartup gpu_startup(req, problem, *context);  // reads the reference's archive while CUDA starts
  const auto gpu = launch::query_device(req.device);
  take_known_baselines(req, problem, context->baselines);
  nlohmann::json record = {{"problem", {{"level", problem.level}, {"id", problem.id}, {"name", problem.name}}},
                           {"submission", {{"path", req.submission}}},
                           {"stochastic", problem.stochastic}};
  phases["problem_load"] = ms_since(t_start);
  const Run run{req, problem, gpu, *context, record, phases, on_stage};

  gpu_startup.start(req, problem, gpu, *context);
  // After the GPU thread started: NVML's start-up overlaps the CUDA context's.
  const auto t0 = Clock::now();
  record["environment"] = report::environment(req.device);
  phases["environment"] = ms_since(t0);

  const auto compiled = compile_stage(run, gpu_startup);
  if (!compiled) return record;
  if (req.compile_only || !gpu.present) {
    set_verdict(record, Verdict::not_checked,
                req.compile_only ? "compiled (--compile-only): correctness not checked"
                                 : "compiled; correctness needs a GPU: " + gpu.why_absent);
  } else {
    gpu_startup.rethrow();
#ifdef KBENCH_WITH_CUDA
    run_on_gpu(run, *compiled);
#endif
  }
  phases["total"] = ms_since(t_start);
  record["phases_ms"] = phases;
  return record;
}

}  // namespace kbench::sandbox
