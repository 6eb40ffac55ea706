#include "sandbox/evaluation.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <optional>

#include "check/memory_guard.h"
#include "check/timed_calls.h"
#include "compile/child_process.h"
#include "compile/compile_cache.h"
#include "compile/file_lock.h"
#include "compile/host_program.h"
#include "compile/modelnew.h"
#include "compile/submission.h"
#include "launch/cuda_driver.h"
#include "launch/launch_op.h"
#include "launch/launches.h"
#include "log/elapsed.h"
#include "log/log.h"
#include "problems/catalog.h"
#include "problems/reference.h"
#include "profile/candidate_profile.h"
#include "profile/reference_profile.h"
#include "profile/roofline.h"
#include "report/environment.h"
#include "sandbox/baseline_timing.h"
#include "sandbox/eval_options.h"
#include "sandbox/gpu_lock.h"
#include "timing/clocks.h"
#include "timing/speedup_audit.h"

#ifdef KBENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace kbench::sandbox {
namespace {

using check::Verdict;

using log::PhaseTimer;
using log::timed;

void set_verdict(nlohmann::json& record, Verdict v, const std::string& message) {
  record["verdict"] = check::to_string(v);
  record["message"] = message;
}

// Once a candidate has been checked it has two verdicts: kbench's (robustness trials, atol scaled to
// the output, and every check of its own) and KernelBench's: what upstream's eval would say, under its
// rule alone (the build, a forward that runs, the output's shape and allclose on the problem's own
// inputs with the tolerance of the rule the request names; see check/correctness.h). kbench's own
// checks (kernels that do no work, inputs or weights written, timed calls that disagree, process
// state) fail kbench's verdict only. The stages after the check can only take either from `correct`
// to a failure. The record's `verdict` is the one of the evaluation's mode (--compat
// kernelbench[-v0.1] picks KernelBench's); `verdicts` holds both, KernelBench's with its rule's name.
struct Verdicts {
  Verdict kbench = Verdict::correct, kernelbench = Verdict::correct;
  std::string kbench_message, kernelbench_message;

  bool either_correct() const { return kbench == Verdict::correct || kernelbench == Verdict::correct; }
  void fail_kbench(Verdict v, const std::string& message) {
    if (kbench == Verdict::correct) kbench = v, kbench_message = message;
  }
  void fail_kernelbench(Verdict v, const std::string& message) {
    if (kernelbench == Verdict::correct) kernelbench = v, kernelbench_message = message;
  }
  void write(nlohmann::json& record, const EvalRequest& req) const {
    const bool compat = req.compat_kernelbench;
    set_verdict(record, compat ? kernelbench : kbench, compat ? kernelbench_message : kbench_message);
    const auto rule = check::to_string(req.check.tolerance.kernelbench);
    record["verdicts"] = {
        {"kbench", {{"verdict", check::to_string(kbench)}, {"message", kbench_message}}},
        {"kernelbench",
         {{"verdict", check::to_string(kernelbench)}, {"message", kernelbench_message}, {"rule", rule},
          {"tolerance", check::tolerance_of(req.check.tolerance.kernelbench)}}}};
    if (compat) record["compat"] = rule;
  }
};

#ifdef KBENCH_WITH_CUDA
// What a process that evaluates one ModelNew holds for the checks (check::cap_memory_hold): its
// problem's measured peak (problems/footprint.json), a quarter more and 2 GiB for what a candidate
// adds; all free memory where the peak is unknown.
int64_t single_evaluation_hold(const problems::Problem& problem) {
  const auto& peak = problem.footprint;
  if (peak.bytes <= 0 || peak.more_than) return 0;
  return peak.bytes + peak.bytes / 4 + (int64_t{2} << 30);
}

void wait_for_end_of(int pid) {
  if (!compile::wait_for_end(pid, 60))
    log::warn("the process " + std::to_string(pid) + ", retired before this request, had not ended after 60 s");
}

// Whether at least half of the GPU's memory is free now.
bool half_the_gpu_free() {
  size_t free = 0, total = 0;
  return cudaMemGetInfo(&free, &total) == cudaSuccess && free >= total / 2;
}

// The GPU's start-up, which needs no compiled submission: the CUDA context, the reference's
// weights moved to the GPU once `loading` (the archive read on the CPU, begun before CUDA started)
// is done, and the free memory held for poisoning. The reference stays in `context` across
// evaluations of one problem; `loading` is empty when it is there already. Returns the
// milliseconds of each part. `hold`: false for a GPU prepared ahead of its request
// (prepare_gpu_ahead), which holds no memory for poisoning: its request does.
nlohmann::json prepare_gpu(const EvalRequest& req, const problems::Problem& problem, EvalContext& context,
                           std::future<std::shared_ptr<problems::Reference>>& loading, bool hold = true) {
  nlohmann::json phases = nlohmann::json::object();
  {
    PhaseTimer timer(phases["cuda_context"]);
    cudaSetDevice(req.device);
    cudaFree(nullptr);
  }
  if (req.ending_process > 0) {
    // A spare whose GPU was prepared ahead has no context to start beside that end: it imports the
    // file meanwhile, and waits before the candidate's first GPU work (wait_for_pending_end), where
    // half the GPU is free, so that what the ending process still holds cannot be what the
    // candidate runs short of. Otherwise it waits here, before any submission code runs.
    if (!context.gpu_prepared.is_null() && half_the_gpu_free()) {
      context.pending_end = req.ending_process;
    } else {
      PhaseTimer timer(phases["ending_process_wait"]);
      wait_for_end_of(req.ending_process);
    }
  }
  check::limit_gpu_memory(req.device, gpu_memory_bytes(req));  // before the weights, which count against it
  if (loading.valid()) {
    context.reference.reset();  // free the previous problem's weights first
    context.reference_outputs.clear();
    context.reference_key.clear();
    auto reference = timed(phases["reference_read_wait"], [&] { return loading.get(); });
    {
      PhaseTimer timer(phases["reference_to_gpu"]);
      reference->to(torch::Device(torch::kCUDA, req.device));
      cudaDeviceSynchronize();
    }
    context.reference = std::move(reference);
    context.reference_key = problem.key();
  } else if (context.reference && context.reference->device().is_cpu()) {  // given back (give_back_gpu_memory)
    PhaseTimer timer(phases["reference_to_gpu"]);
    context.reference->to(torch::Device(torch::kCUDA, req.device));
    cudaDeviceSynchronize();
  }
  if (!hold) return phases;
  {
    PhaseTimer timer(phases["memory_hold"]);
    if (compile::is_modelnew_file(req.submission)) check::cap_memory_hold(single_evaluation_hold(problem));
    // Nsight Compute saves what a replayed kernel writes in free memory; the memory an ending
    // process gives back is held later (check_options_for).
    if (!req.ncu_target && context.pending_end < 0) check::hold_free_memory();
  }
  return phases;
}

#endif

}  // namespace

bool set_compat(EvalRequest& req, const std::string& mode) {
  const auto rule = check::kernelbench_rule_from_string(mode);
  if (!rule && mode != "none") return false;
  req.compat_kernelbench = rule.has_value();
  req.check.tolerance.kernelbench = rule.value_or(check::KernelBenchRule::current);
  return true;
}

std::string compat_mode(const EvalRequest& req) {
  return req.compat_kernelbench ? check::to_string(req.check.tolerance.kernelbench) : "none";
}

int64_t gpu_memory_bytes(const EvalRequest& req) { return static_cast<int64_t>(req.gpu_memory_gib * (int64_t{1} << 30)); }

MemoryPlan plan_gpu_memory(const EvalRequest& req, const problems::Problem& problem) {
  const int64_t limit = gpu_memory_bytes(req);
  // What tensors can have of the limit: the memory guard keeps kLimitReserve of it for small allocations.
  const int64_t for_tensors = limit - check::kLimitReserve;
  if (limit <= 0 || req.compile_only || !problem.footprint.known_to_exceed(for_tensors)) return {};
  const auto& offloaded = problem.footprint_offloaded;
  if (offloaded.bytes > 0 && !offloaded.known_to_exceed(for_tensors)) return {true, ""};
  const auto gib = [](const problems::MemoryNeed& need) {
    char text[64];
    std::snprintf(text, sizeof text, "%s%.1f GiB", need.more_than ? "more than " : "", static_cast<double>(need.bytes) / (1 << 30));
    return std::string(text);
  };
  char limit_text[32];
  std::snprintf(limit_text, sizeof limit_text, "%g", req.gpu_memory_gib);
  return {false, "not run: this problem needs " + gib(problem.footprint) +
                     " of GPU memory (problems/footprint.json)" +
                     (offloaded.bytes > 0 ? ", and " + gib(offloaded) + " with the candidate's output in host memory" : "") +
                     ", more than --gpu-memory " + limit_text + " GiB allows"};
}

compile::CompileOptions compile_options_for(const EvalRequest& req, const launch::DeviceInfo& gpu) {
  compile::CompileOptions options;
  options.arch = !req.arch.empty() ? req.arch : (gpu.present ? gpu.arch() : "sm_90a");
  return options;
}

std::string baseline_key(const std::string& problem_key, const timing::TimingOptions& timing) {
  // A figure of one mode is not one of another: an adaptive one stops at its own precision.
  std::string key = problem_key + " trials=" + std::to_string(timing.trials) + " warmup=" + std::to_string(timing.warmup) +
                    (timing.flush_l2 ? " flush" : " no-flush") + " " + timing::mode_name(timing.mode);
  if (timing.mode != timing::TimingMode::fixed)
    key += " min=" + std::to_string(timing.min_trials) + " target=" + std::to_string(timing.target);
  return key;
}

// The worker's request: the options table's request options (sandbox/eval_options.h), and what
// only kbench itself sets.
nlohmann::json EvalRequest::to_json() const {
  // The rule of KernelBench's verdict travels apart from `compat`: kbench's own tests set it alone.
  return {{"submission", submission}, {"level", level}, {"problem", problem}, {"root", root}, {"device", device},
          {"options", request_options(*this)}, {"kernelbench_rule", check::to_string(check.tolerance.kernelbench)},
          {"known_baselines", known_baselines}, {"compiled_figure", compiled_figure}, {"ncu", ncu}, {"ncu_target", ncu_target}, {"next_level", next_level},
          {"next_problem", next_problem}, {"ending_process", ending_process}};
}

EvalRequest EvalRequest::from_json(const nlohmann::json& j) {
  EvalRequest r = default_eval_settings().request;
  r.submission = j.at("submission");
  r.level = j.at("level");
  r.problem = j.at("problem");
  r.root = j.value("root", r.root);
  r.device = j.value("device", r.device);
  set_request_options(j.value("options", nlohmann::json::object()), r);
  if (const auto rule = check::kernelbench_rule_from_string(j.value("kernelbench_rule", ""))) r.check.tolerance.kernelbench = *rule;
  r.known_baselines = j.value("known_baselines", r.known_baselines);
  r.compiled_figure = j.value("compiled_figure", r.compiled_figure);
  r.ncu = j.value("ncu", r.ncu);
  r.profile = r.profile || r.ncu;
  r.ncu_target = j.value("ncu_target", r.ncu_target);
  r.next_level = j.value("next_level", r.next_level);
  r.next_problem = j.value("next_problem", r.next_problem);
  r.ending_process = j.value("ending_process", r.ending_process);
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
    if (req.compile_only || context.reference_key == problem.key()) return;
    if (context.next_reference_key == problem.key()) {  // read during the last request
      reference_loading_ = std::move(context.next_reference);
      context.next_reference_key.clear();
      read_ahead_ = true;
      return;
    }
    reference_loading_ = std::async(std::launch::async, [&problem, this] {
      PhaseTimer timer(reference_read_ms_);
      return std::make_shared<problems::Reference>(problem, torch::kCPU);
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
    PhaseTimer timer(run.phases["gpu_wait"]);
    try {
      run.phases["gpu_prepare"] = ready_.get();
      if (reference_read_ms_ > 0) run.phases["gpu_prepare"]["reference_read"] = reference_read_ms_;
      if (read_ahead_) run.phases["gpu_prepare"]["reference_read_ahead"] = true;
    } catch (...) {
      error_ = std::current_exception();
    }
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
  bool read_ahead_ = false;       // the archive was read during the last request
#ifdef KBENCH_WITH_CUDA
  std::future<std::shared_ptr<problems::Reference>> reference_loading_;
  std::future<nlohmann::json> ready_;
#endif
  std::exception_ptr error_;
};

// Starts reading the archive of the problem the caller says comes next (EvalRequest::next_level),
// unless it is this one or already being read: on the CPU, beside this request's checks, so that the
// next one does not wait for it. The timing stage waits for the read to end first (see
// timing_stage). A missing archive is that request's error, not this one's.
void read_next_reference(const EvalRequest& req, const problems::Catalog& catalog, const problems::Problem& problem,
                         EvalContext& context) {
#ifdef KBENCH_WITH_CUDA
  if (req.next_level == 0 || req.compile_only) return;
  const auto* next = catalog.find(req.next_level, req.next_problem);
  if (!next || next->key() == problem.key() || next->key() == context.next_reference_key) return;
  context.next_reference_key = next->key();
  context.next_reference = std::async(std::launch::async, [problem = *next] {
    return std::make_shared<problems::Reference>(problem, torch::kCPU);
  });
#else
  (void)req, (void)catalog, (void)problem, (void)context;
#endif
}

// What the compile stage makes of a submission: its device code (NVRTC; none for a ModelNew, whose
// kernels come with its extension) and its host program.
struct CompiledSubmission {
  std::optional<compile::CompiledDevice> device_code;
  std::unique_ptr<compile::HostProgram> host;
};

// The host program's part of the record. A ModelNew's ops are known once forward has run
// (run_on_gpu writes them again then).
void record_host(const Run& run, const compile::HostProgram& host) {
  run.record["host"] = {{"forward", host.forward_schema()}, {"setup", host.has_setup()}, {"torch_ops", host.torch_ops()},
                        {"computing_ops", host.computing_ops()}};
  run.record["submission"]["backend"] = host.backend();
}

#ifdef KBENCH_WITH_CUDA
// The worker's figures as the baselines' functions (sandbox/baseline_timing.h) take them.
BaselineSite baseline_site(const Run& run) { return {run.context, run.problem, run.gpu, run.req}; }

// A ModelNew's worker is new: its snapshot (check/process_state.h) is taken once kbench's own Python
// has started and before the file is imported, with the ops that the reference and kbench's checks
// call (one reference forward, its inputs drawn from every distribution, compared with itself). A
// spare whose GPU was prepared ahead took it then, for the problem its runner expected: the ops of
// another problem's reference are added to it (a watch only ever widens). This one takes the
// snapshot without the reference's ops, where none was taken.
void watch_modelnew_process(EvalContext& context, int device) {
  if (context.process_watch) return;
  auto& ahead = context.dispatcher_ahead;
  if (ahead) context.process_watch.emplace(device, std::move(*ahead));
  else context.process_watch.emplace(device, /*watch_dispatcher=*/true);
  ahead.reset();
}

// The snapshot with the ops of `problem`'s reference (context.reference).
void watch_modelnew_process(EvalContext& context, int device, const problems::Problem& problem, uint64_t seed) {
  watch_modelnew_process(context, device);
  if (context.watched_problem == problem.key()) return;
  auto& reference = *context.reference;
  context.process_watch->watch_ops(check::ops_called_by([&] {
    torch::NoGradGuard no_grad;
    for (const auto& d : problems::kRobustnessDistributions) check::fingerprints(reference.make_inputs(seed, d));
    const auto inputs = reference.make_inputs(seed);
    const auto out = check::run_reference(reference, inputs, seed);
    check::compare_outputs(out, out, {problem.atol, problem.rtol});
    check::all_finite(out);
  }));
  context.watched_problem = problem.key();
}

// Waits for the retired process whose wait prepare_gpu put off: before the candidate's first GPU
// work and before anything is timed.
void wait_for_pending_end(const Run& run) {
  auto& pid = run.context.pending_end;
  if (pid <= 0) return;
  PhaseTimer timer(run.phases["ending_process_wait"]);
  wait_for_end_of(pid);
  pid = -1;
}

// Holds the GPU's quiet lock (sandbox/gpu_lock.h): for timed work, and for a spare's GPU work ahead
// of its request, never beside each other. The wait for it is added to phases["quiet_wait"].
class QuietGpu {
 public:
  QuietGpu(int device, QuietLock::For holder, nlohmann::json& phases) {
    double waited_ms = 0;
    {
      PhaseTimer timer(waited_ms);
      lock_.emplace(device, holder);
    }
    auto& total = phases["quiet_wait"];
    total = total.is_number() ? total.get<double>() + waited_ms : waited_ms;
  }

 private:
  std::optional<QuietLock> lock_;
};

// Timed work's hold: no spare prepares its GPU beside it, and no retired process is still ending.
QuietGpu quiet_for_timing(const Run& run) {
  wait_for_pending_end(run);
  return QuietGpu(run.req.device, QuietLock::For::timing, run.phases);
}

// The baselines a ModelNew is timed against, measured before its code is loaded (unless an earlier
// worker of this GPU measured them so): what they come from is code the submission could not touch,
// and they may be handed to later workers.
void time_baselines_before_import(const Run& run) {
  check::TimedCallOptions calls;
  calls.timing = run.req.timing;
  run.stage("timing");
  const auto quiet = quiet_for_timing(run);
  eager_baseline(baseline_site(run), calls);
  compiled_baseline(baseline_site(run), calls);
  run.stage("compile");
}
#endif

// Stage 1 of KernelBench's format: the file imported in the worker's Python, its extensions built
// or found in the cache, ModelNew constructed (compile/modelnew.h). After the GPU start-up has
// joined: Python starts beside no other thread's work with libtorch.
std::optional<CompiledSubmission> compile_modelnew_stage(const Run& run, GpuStartup& gpu_startup) {
  const auto& req = run.req;
  auto& record = run.record;
  record["submission"]["format"] = "modelnew";
  if (!std::ifstream(req.submission)) throw std::runtime_error("cannot read submission " + req.submission);
  const auto source = compile::file_bytes(req.submission);
  record["submission"]["hash"] = compile::content_hash(source);
  record["submission"]["backend"] = compile::imported_backend(source);
  gpu_startup.join(run);
  run.stage("compile");
  compile::ModelNewOptions options;
  options.problem_source = problems::project_root(req.root) / run.problem.file;
  options.arch = compile_options_for(run.req, run.gpu).arch;
  options.with_cuda = run.gpu.present && !req.compile_only;
  options.device = req.device;
  options.cache_dir = problems::cache_dir();
  options.extension_build = compile::requested_build_route();
  options.on_stage = run.on_stage;
  options.count_launches = [] { return launch::launch_count(); };
#ifdef KBENCH_WITH_CUDA
  if (options.with_cuda) cudaSetDevice(req.device);  // torch.cuda's set-up below sees this GPU, as forward will
#endif
  // Started ahead in a ModelNew spare (start_python_ahead): what it took then is in the record, and
  // the start here finds it done but for torch.cuda's set-up.
  const auto& prestart = run.context.python_prestart;
  if (prestart.contains("error")) throw std::runtime_error(prestart["error"].get<std::string>());
  record["worker"] = {{"python_prestarted", !prestart.is_null()}, {"gpu_prepared_ahead", !run.context.gpu_prepared.is_null()}};
  if (!run.context.gpu_prepared.is_null()) run.phases["gpu_prepare_ahead"] = run.context.gpu_prepared;
  const auto start_split = timed(run.phases["python_start"], [&] { return compile::start_python(options.with_cuda); });
  if (prestart.is_null()) run.phases["python_start_split"] = start_split;
  else run.phases["python_prestart"] = prestart;
#ifdef KBENCH_WITH_CUDA
  if (options.with_cuda && run.context.reference) {  // else the start-up's error is reported later
    {
      PhaseTimer timer(run.phases["process_snapshot"]);
      watch_modelnew_process(run.context, req.device, run.problem, req.check.base_seed);
    }
    if (req.time) time_baselines_before_import(run);
  }
#endif
  run.context.submission_code_loaded = true;
  std::vector<compile::ExtensionBuild> builds;
  CompiledSubmission compiled;
  try {
    PhaseTimer timer(run.phases["modelnew_load"]);
    compiled.host = compile::load_modelnew(req.submission, options, builds);
  } catch (const compile::ModelNewError& e) {
    using Kind = compile::ModelNewError::Kind;
    set_verdict(record, e.kind == Kind::build ? Verdict::compile_error
                        : e.kind == Kind::unsupported ? Verdict::unsupported_backend : Verdict::host_error,
                e.what());
    record["host"] = {{"error", e.details}};
  }
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
  const auto options = compile_options_for(req, run.gpu);
  const compile::CompileCache cache(problems::cache_dir() / "compile");
  {
    PhaseTimer timer(run.phases["nvrtc"]);
    compiled.device_code = compile::compile_device_source(
        submission.device_source, std::filesystem::path(req.submission).filename().string(), options, &cache);
  }
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

  try {
    PhaseTimer timer(run.phases["host_compile"]);
    compiled.host = std::make_unique<compile::ScriptHostProgram>(submission.host_source, run.problem.inputs.size());
  } catch (const compile::HostProgramError& e) {
    const std::string what = e.what();
    set_verdict(record, Verdict::host_error, what.substr(0, what.find('\n')));
    record["host"] = {{"error", what}};
    return std::nullopt;
  }
  record_host(run, *compiled.host);
  return compiled;
}

// --torch-ops forbid: forward may call no PyTorch op that computes values, so that every value of the
// answer comes from the submission's kernels (none of PyTorch's answer in pieces, nor nudged by an
// ulp). Decided from the program before it runs (the trials also watch the ops that do run).
// Returns false once the record holds the verdict.
bool torch_ops_policy_stage(const Run& run, const compile::HostProgram& host) {
  if (!run.req.check.forbid_torch_ops || host.computing_ops().empty()) return true;
  std::string ops;
  for (const auto& op : host.computing_ops()) ops += (ops.empty() ? "" : ", ") + op;
  // KernelBench has no such rule, and nothing ran to tell what its eval would say.
  Verdicts verdicts{Verdict::no_custom_kernel, Verdict::not_checked,
                    "forward calls PyTorch ops that compute values (" + ops + "); --torch-ops forbid",
                    "not run: --torch-ops forbid refused the program before it ran"};
  verdicts.write(run.record, run.req);
  run.record["torch_ops_refused"] = host.computing_ops();
  return false;
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
  PhaseTimer timer(run.phases["module_load"]);
  try {
    module = std::make_unique<launch::LoadedModule>(compiled.device_code->cubin, compiled.device_code->kernels);
  } catch (const std::exception& e) {
    set_verdict(run.record, Verdict::compile_error, std::string("the CUBIN does not load on this GPU: ") + e.what());
    return false;
  }
  launch::set_active_module(module.get(), &run.gpu);
  return true;
}

// The candidate's parameters: its own copy of the reference's weights, through setup(). Sets the
// verdict and returns nothing when setup fails.
std::optional<c10::Dict<std::string, at::Tensor>> candidate_params(const Run& run, const compile::HostProgram& host) {
  auto params = check::copy_of_state(run.context.reference->state());
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
  auto correctness = timed(run.phases["correctness"], [&] {
    return check::check_correctness(*context.reference, host, params, check_options, context.reference_outputs);
  });
  run.phases["correctness_split"] = check::to_json(correctness.phases);
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& t : correctness.trials) trials.push_back(check::to_json(t));
  run.record["correctness"] = {{"trials", trials}, {"atol", check_options.tolerance.atol},
                               {"rtol", check_options.tolerance.rtol}, {"robust_seed", check_options.robust_seed},
                               {"output_bytes", correctness.output_bytes}};
  if (!correctness.details.empty()) run.record["error_details"] = correctness.details;
  run.record["host"]["computing_ops_ran"] = correctness.computing_ops_ran;
  if (correctness.settled_launches >= 0) run.record["host"]["settled_launches"] = correctness.settled_launches;
  return correctness;
}

// The candidate's timed calls (check/timed_calls.h): fresh inputs on every call, a random share of
// them checked, a few on each robustness distribution that counted in its trials. A checked call
// that was wrong is `inconsistent`; parameters written during the calls are `input_mutated`. Then
// the baselines, the speedups and the two audits. Returns the record's `timing`.
nlohmann::json measure_speed(const Run& run, const compile::HostProgram& host,
                             const c10::Dict<std::string, at::Tensor>& params, const check::CheckOptions& check_options,
                             const check::CorrectnessResult& correctness, Verdicts& verdicts) {
  torch::NoGradGuard no_grad;
  check::TimedCallOptions calls;
  calls.timing = run.req.timing;
  calls.distributions = correctness.robustness_distributions;
  calls.offload_candidate_output = check_options.offload_candidate_output;
  calls.settled_launches = correctness.settled_launches;
  const auto params_before = check::fingerprints(params);
  // Where timing's time goes: the calls themselves (warm-up, L2 flushes and synchronisations
  // included), the inputs drawn for them, the checks, the baselines (0 when reused).
  auto& split = run.phases["timing_split"];
  double calls_ms = 0;
  const auto candidate = timed(calls_ms, [&] {
    return check::time_candidate(*run.context.reference, host, params, calls, check_options.tolerance);
  });
  split = {{"calls", calls_ms - candidate.redraw_ms - candidate.checks_ms}, {"redraws", candidate.redraw_ms},
           {"checks", candidate.checks_ms}, {"eager", 0.0}, {"compiled", 0.0}};
  nlohmann::json timing = {{"candidate", check::to_json(candidate)}};
  if (candidate.verdict != Verdict::correct) verdicts.fail_kbench(candidate.verdict, candidate.message);
  if (check::fingerprints(params) != params_before)
    verdicts.fail_kbench(Verdict::input_mutated, "the candidate modified its parameters (params) during its timed calls");
  if (!verdicts.either_correct()) return timing;

  timing["eager_reused"] = run.context.baselines.eager.count(baseline_key(run.problem.key(), run.req.timing)) > 0;
  const auto& eager = timed(split["eager"], [&]() -> const nlohmann::json& { return eager_baseline(baseline_site(run), calls); });
  const double candidate_ms = candidate.own.stats.mean, eager_ms = eager["mean_ms"].get<double>();
  timing["eager"] = eager;
  timing["speedup_eager"] = eager_ms / candidate_ms;
  if (candidate.all_calls && eager.contains("all_calls"))  // --timing both: the fixed count's figure beside
    timing["speedup_eager_all_calls"] = eager["all_calls"]["mean_ms"].get<double>() / candidate.all_calls->stats.mean;
  const auto& compiled =
      timed(split["compiled"], [&]() -> const nlohmann::json& { return compiled_baseline(baseline_site(run), calls); });
  timing["compiled"] = compiled;
  if (compiled.contains("mean_ms")) timing["speedup_compiled"] = compiled["mean_ms"].get<double>() / candidate_ms;
  timing["audit"] = timing::to_json(
      timing::audit_speedup(run.problem.input_bytes, correctness.output_bytes, run.gpu.memory_bandwidth, candidate_ms, eager_ms),
      timing::audit_distribution_speed(check::distribution_means(timing["candidate"]), check::distribution_means(eager)));
  return timing;
}

// Stage 4: timing, for a candidate correct under either rule (KernelBench's score needs the speedup
// of one that is right only on its own inputs; kbench's never counts it).
void timing_stage(const Run& run, const compile::HostProgram& host, const c10::Dict<std::string, at::Tensor>& params,
                  const check::CheckOptions& check_options, const check::CorrectnessResult& correctness,
                  Verdicts& verdicts) {
  run.stage("timing");
  // Never beside timed calls: a CPU thread deserialising the next problem's archive slowed the host
  // side of short calls (on the H100, L2#14's 0.12 ms candidate measured 12.7x instead of 21.9x).
  auto& reading = run.context.next_reference;
  if (reading.valid() && reading.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    PhaseTimer timer(run.phases["reference_read_ahead_wait"]);
    reading.wait();
  }
  const auto quiet = quiet_for_timing(run);  // a harness's failure to take it is no verdict of the candidate's
  PhaseTimer timer(run.phases["timing"]);
  try {
    run.record["timing"] = measure_speed(run, host, params, check_options, correctness, verdicts);
  } catch (const std::exception& e) {
    // KernelBench's eval keeps a candidate correct whose timing fails (error_during_performance).
    verdicts.fail_kbench(check::classify_exception(e.what()), "during timing: " + check::first_line_of_interest(e.what()));
    run.record["error_details"] = e.what();
  }
}

// Stage 4b (--profile): one more call of candidate and reference, taken apart (profile/): where the
// candidate's time goes kernel by kernel, beside the reference's operators, and how far both are
// from the GPU's peaks. The candidate failing here fails as in timing; the reference's profiler
// failing is recorded and changes nothing else.
void profile_stage(const Run& run, const compile::HostProgram& host, const c10::Dict<std::string, at::Tensor>& params,
                   int64_t output_bytes, Verdicts& verdicts) {
  const auto timing = run.record.value("timing", nlohmann::json::object());
  if (!timing.contains("candidate")) return;  // nothing timed to set the profile beside
  run.stage("profile");
  const auto quiet = quiet_for_timing(run);
  const PhaseTimer cost(run.phases["profile"]);
  auto& reference = *run.context.reference;
  const uint64_t seed = run.req.check.base_seed + 2000;  // inputs no checked or timed call saw
  nlohmann::json profile;
  const auto inputs = reference.make_inputs(seed);
  try {
    auto candidate = profile::profile_candidate(host, params, inputs, run.gpu);
    check::verify_process_state(check::ProcessStateWatch::Depth::watched_ops, "after the candidate's profiled call");
    const double timed = timing["candidate"].value("mean_ms", 0.0);
    candidate["timed_mean_ms"] = timed;
    // What the timed calls spent beyond the GPU's own work: the host program's launch gaps.
    candidate["launch_overhead_ms"] = timed - candidate.value("forward_ms", 0.0);
    profile["candidate"] = candidate;
  } catch (const std::exception& e) {
    verdicts.fail_kbench(check::classify_exception(e.what()), "during profiling: " + check::first_line_of_interest(e.what()));
    run.record["error_details"] = e.what();
    run.record["profile"] = {{"error", check::first_line_of_interest(e.what())}};
    return;
  }
  // The reference's breakdown once per problem per worker, like its eager timing.
  run.phases["profile_split"] = {{"candidate", cost.elapsed_ms()}};
  auto known = run.context.reference_profiles.find(run.problem.key());
  if (known == run.context.reference_profiles.end()) {
    const PhaseTimer timer(run.phases["profile_split"]["reference"]);
    nlohmann::json entry;
    try {
      entry = profile::profile_reference(reference, inputs, seed, run.gpu);
    } catch (const std::exception& e) {
      entry = {{"error", check::first_line_of_interest(e.what())}};
    }
    known = run.context.reference_profiles.emplace(run.problem.key(), entry).first;
  }
  profile["reference"] = known->second;
  const auto& flops = known->second.value("flops", nlohmann::json());
  profile["roofline"] = profile::roofline(
      {run.problem.input_bytes + output_bytes, run.gpu.memory_bandwidth,
       flops.is_object() ? flops.value("count", 0.0) : 0.0, run.gpu.fp32_flops},
      timing["candidate"].value("mean_ms", 0.0), timing.value("eager", nlohmann::json::object()).value("mean_ms", 0.0));
  profile["cost_ms"] = cost.elapsed_ms();
  run.record["profile"] = profile;
}

// For the ncu pass's worker (EvalRequest::ncu_target): one forward for Nsight Compute, unchecked.
void ncu_target_stage(const Run& run, const compile::HostProgram& host, const c10::Dict<std::string, at::Tensor>& params) {
  run.stage("profile");
  try {
    profile::run_for_ncu(host, params, run.context.reference->make_inputs(run.req.check.base_seed + 2000));
    run.record["ncu_target"] = {{"ran", true}};
    set_verdict(run.record, Verdict::not_checked, "ran once under Nsight Compute; not checked");
  } catch (const std::exception& e) {
    run.record["ncu_target"] = {{"ran", false}};
    set_verdict(run.record, check::classify_exception(e.what()), "under Nsight Compute: " + check::first_line_of_interest(e.what()));
  }
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
  const auto ablation = timed(run.phases["ablation"], [&] {
    return check::check_without_kernels(*run.context.reference, host, params, check_options, run.context.reference_outputs,
                                        inputs);
  });
  run.record["ablation"] = check::to_json(ablation);
  run.phases["ablation_split"] = check::to_json(ablation.phases);
  if (ablation.outputs_right) verdicts.fail_kbench(Verdict::no_custom_kernel, ablation.message);
  return ablation.context_poisoned;
}

// Last: the reference's own weights, where a candidate's out-of-bounds write can land. A damaged
// reference is dropped, so that no later candidate is checked against it.
void reference_integrity_stage(const Run& run, const check::Fingerprints& state_before, Verdicts& verdicts) {
  auto& context = run.context;
  if (check::fingerprints(context.reference->state()) == state_before) return;
  verdicts.fail_kbench(Verdict::input_mutated, "the candidate wrote into the reference's parameters (out-of-bounds write)");
  context.reference.reset();
  context.reference_key.clear();
  context.reference_outputs.clear();
}

// Last of all: the process state after the candidate's calls, compared in full with its snapshot
// (check/process_state.h). A change is the verdict whatever else was found, and nothing measured in
// this process since is kept: the timing and the profile leave the record, the reference outputs
// and figures the worker kept are forgotten, and the worker is retired (sandbox/worker.cpp).
// `checks_before`, `ms_before`: the watch's counts when this evaluation's candidate began (a
// kbench-format worker's watch outlives its evaluations), so the record has this one's cost.
void process_state_stage(const Run& run, Verdicts& verdicts, int checks_before, double ms_before) {
  auto& watch = *run.context.process_watch;
  watch.verify(check::ProcessStateWatch::Depth::all_ops, "at the end of the evaluation");
  run.record["process_state"] = {{"checks", watch.checks() - checks_before},
                                 {"checks_ms", watch.checking_ms() - ms_before},
                                 {"dispatcher_compared", watch.watches_dispatcher()}};
  if (!watch.changed()) return;
  run.record["process_state"]["changed"] = watch.change();
  const auto message = "the submission changed the worker's process state, which the reference and the baselines "
                       "share: " + watch.change();
  verdicts.kbench = Verdict::state_changed, verdicts.kbench_message = message;  // KernelBench's eval watches no state
  for (const char* part : {"timing", "profile"})
    if (run.record.contains(part)) run.record[part] = {{"discarded", "measured after the submission changed the process state"}};
  auto& context = run.context;
  context.reference_outputs.clear();
  context.baselines = {};
  context.reference_profiles.clear();
}

// Holds free memory for the checks, leaving `local_memory` bytes to the driver for the kernels'
// local memory (a kernel with large per-thread arrays needs GiBs, reserved at its first launch).
// In a warm worker, tensors made since an earlier hold may sit in the held segment, which the
// allocator returns only whole: the kept reference outputs, and the weights of a problem loaded
// since. They are dropped, or moved off the GPU and back, only when the room is short.
void make_room_for_local_memory(const Run& run, int64_t local_memory) {
  if (check::hold_free_memory(local_memory)) return;
  run.context.reference_outputs.clear();
  if (check::hold_free_memory(local_memory)) return;
  auto& reference = *run.context.reference;
  reference.to(torch::kCPU);
  check::hold_free_memory(local_memory);  // returns the held segment, now empty
  reference.to(torch::Device(torch::kCUDA, run.req.device));
  if (!check::hold_free_memory(local_memory))
    log::warn(std::to_string(local_memory) +
              " bytes of local memory for the kernels may not fit beside the memory held: a launch may fail for it");
}

// The checks' options for this candidate: the problem's tolerance and a robustness seed where the
// request left them open, and room for its kernels' local memory.
check::CheckOptions check_options_for(const Run& run, const launch::LoadedModule* module) {
  auto check_options = run.req.check;
  check_options.keep_free_bytes = module ? module->local_memory_reserve(run.gpu) : 0;
  // Before anything else allocates: the memory held while the module was unknown may leave too
  // little for its kernels' local memory, and is returned and taken again then.
  {
    PhaseTimer timer(run.phases["memory_hold"]);
    if (!run.req.ncu_target) make_room_for_local_memory(run, check_options.keep_free_bytes);
  }
  if (check_options.tolerance.atol < 0) check_options.tolerance.atol = run.problem.atol;
  if (check_options.tolerance.rtol < 0) check_options.tolerance.rtol = run.problem.rtol;
  if (check_options.robust_seed == 0) check_options.robust_seed = check::draw_robust_seed();
  check_options.offload_candidate_output = plan_gpu_memory(run.req, run.problem).offload_candidate_output;
  return check_options;
}

// Stages 2 to 5 and the integrity check, on the GPU: the record's verdict is set when it returns.
void run_on_gpu(const Run& run, const CompiledSubmission& compiled) {
  std::unique_ptr<launch::LoadedModule> module;
  if (!load_stage(run, compiled, module)) return;
  run.stage("correctness");
  const auto& host = *compiled.host;
  auto& context = run.context;
  // A kbench-format worker's snapshot is taken before its first candidate runs (a ModelNew's was
  // taken before its import); every candidate call is checked against it from here on.
  if (!context.process_watch) context.process_watch.emplace(run.req.device, /*watch_dispatcher=*/false);
  check::ActiveProcessStateWatch active_watch(&*context.process_watch);
  const int watch_checks_before = context.process_watch->checks();
  const double watch_ms_before = context.process_watch->checking_ms();

  wait_for_pending_end(run);
  const auto check_options = check_options_for(run, module.get());

  // The candidate's copy of the weights, setup(), fingerprints.
  std::optional<PhaseTimer> params_timer(std::in_place, run.phases["params"]);
  const auto params = candidate_params(run, host);
  if (!params) return;
  check::verify_process_state(check::ProcessStateWatch::Depth::watched_ops, "after the candidate's setup");
  const auto state_before = check::fingerprints(context.reference->state());
  params_timer.reset();
  if (run.req.ncu_target) {
    ncu_target_stage(run, host, *params);
    launch::set_active_module(nullptr, nullptr);
    return;
  }

  const auto reused_before = context.reference_outputs.reused(), computed_before = context.reference_outputs.computed();
  const auto correctness = correctness_stage(run, host, *params, check_options);
  Verdicts verdicts{correctness.verdict, correctness.kernelbench_verdict, correctness.message, correctness.kernelbench_message};
  bool context_poisoned = correctness.context_poisoned;
  if (verdicts.either_correct() && run.req.time)
    timing_stage(run, host, *params, check_options, correctness, verdicts);
  if (verdicts.either_correct() && run.req.time && run.req.profile)
    profile_stage(run, host, *params, correctness.output_bytes, verdicts);
  if (run.req.profile && !run.record.contains("profile"))
    run.record["profile"] = {{"skipped", "only a candidate that is correct (under either rule) and timed is profiled"}};
  if (verdicts.either_correct() && !context_poisoned)
    context_poisoned = ablation_stage(run, host, *params, check_options, correctness.ablation_inputs, verdicts);
  launch::set_active_module(nullptr, nullptr);
  run.record["host"]["torch_ops"] = host.torch_ops();  // a ModelNew's are known only now
  run.record["host"]["computing_ops"] = host.computing_ops();
  if (host.backend() == "triton") run.record["compile"]["triton"] = compile::triton_report();
  run.record["context_poisoned"] = context_poisoned;
  run.record["reference_outputs"] = {{"reused", context.reference_outputs.reused() - reused_before},
                                     {"computed", context.reference_outputs.computed() - computed_before}};
  if (!context_poisoned) {
    reference_integrity_stage(run, state_before, verdicts);
    process_state_stage(run, verdicts, watch_checks_before, watch_ms_before);
  } else {
    run.record["process_state"] = {{"skipped", "the CUDA context is unusable after a sticky error; the worker is retired"}};
  }
  verdicts.write(run.record, run.req);
}
#endif

}  // namespace

nlohmann::json start_python_ahead(EvalContext& context) {
  nlohmann::json phases;
  try {
    phases["python_start_split"] = timed(phases["python_start"], [] { return compile::start_python(/*with_cuda=*/false); });
    if (const auto refusal = timed(phases["triton_start"], [] { return compile::start_triton_ahead(problems::cache_dir()); });
        !refusal.empty())
      phases["triton_refusal"] = refusal;
    context.dispatcher_ahead = timed(phases["dispatcher_snapshot"], [] { return check::capture_dispatcher(); });
    timed(phases["nvml"], [] { timing::open_nvml(); });  // else the timing stage's clock watch opens it
  } catch (const std::exception& e) {
    phases = {{"error", e.what()}};
  }
  context.python_prestart = phases;
  return phases;
}

nlohmann::json prepare_gpu_ahead(const EvalRequest& expected, const std::filesystem::path& spares_lock, EvalContext& context) {
  if (context.python_prestart.is_null() || context.python_prestart.contains("error"))
    return {{"skipped", "kbench's Python did not start ahead in this process"}};
  if (!context.gpu_prepared.is_null()) return {{"skipped", "prepared already"}};
#ifdef KBENCH_WITH_CUDA
  nlohmann::json phases = nlohmann::json::object();
  try {
    auto req = expected;
    req.ending_process = -1;
    const auto catalog = problems::Catalog::load(problems::project_root(req.root));
    const auto& problem = catalog.get(req.level, req.problem);
    if (const auto gpu = launch::query_device(req.device); !gpu.present) return {{"skipped", "no GPU: " + gpu.why_absent}};
    // Not while the GPU's worker holds its free memory again (sandbox/gpu_lock.h).
    if (spares_lock.empty()) return {{"skipped", "no spares lock was named"}};
    const auto lent = compile::FileLock::try_shared(spares_lock);
    if (!lent) return {{"skipped", "the GPU's worker holds its memory"}};
    // The archive is read on the CPU meanwhile; the GPU's parts each hold the quiet lock, one at a
    // time, so that timed calls waiting for it wait for one part at most (QuietLock lets them in first).
    auto loading = std::async(std::launch::async, [problem] { return std::make_shared<problems::Reference>(problem, torch::kCPU); });
    const auto quietly = [&](const char* part, const std::function<void()>& work) {
      const QuietGpu quiet(req.device, QuietLock::For::spare_part, phases);
      PhaseTimer timer(phases[part]);
      work();
    };
    quietly("cuda_context", [&] {
      cudaSetDevice(req.device);
      if (const auto error = cudaFree(nullptr); error != cudaSuccess)
        throw std::runtime_error(std::string("CUDA did not start: ") + cudaGetErrorString(error));
    });
    // The driver's and torch.cuda's state read, no GPU work: beside timed calls.
    timed(phases["torch_cuda"], [&] {
      compile::start_python(/*with_cuda=*/true);  // torch.cuda's set-up
      watch_modelnew_process(context, req.device);
    });
    // The reference's runs allocate what the problem was measured to need, beside the evaluation
    // this spare runs next to, whose candidate may allocate past what it holds: only where twice
    // that peak and 4 GiB are free.
    const auto& peak = problem.footprint;
    size_t free = 0, total = 0;
    cudaMemGetInfo(&free, &total);
    if (peak.bytes > 0 && !peak.more_than && static_cast<int64_t>(free) >= 2 * peak.bytes + (int64_t{4} << 30)) {
      quietly("reference_to_gpu", [&] { phases["reference"] = prepare_gpu(req, problem, context, loading, /*hold=*/false); });
      quietly("process_snapshot", [&] {
        watch_modelnew_process(context, req.device, problem, req.check.base_seed);
        check::give_back_free_memory();  // what the reference's runs allocated
      });
      phases["problem"] = problem.key();
    } else {
      phases["problem_skipped"] = "too little free GPU memory beside the evaluation running (" +
                                  std::to_string(free >> 20) + " MiB free; the problem's peak " +
                                  (peak.bytes > 0 && !peak.more_than ? std::to_string(peak.bytes >> 20) + " MiB)" : "unknown)");
      context.next_reference = std::move(loading);  // the request finds its archive read (GpuStartup)
      context.next_reference_key = problem.key();
    }
    // Only for Triton files: a CUDA ModelNew's spare would hold the quiet lock for nothing.
    std::string backend = "unknown";
    try {
      backend = compile::imported_backend(compile::file_bytes(req.submission));
    } catch (const std::exception&) {
      // an unreadable file: its request pays Triton's set-up, if it is Triton's
    }
    if (backend != "triton")
      phases["triton_skipped"] = "the file running beside this spare imports no Triton (" + backend + ")";
    else if (!context.python_prestart.contains("triton_refusal"))
      quietly("triton", [&] {
        if (const auto refusal = compile::prepare_triton_gpu_ahead(problems::cache_dir(), [] { return launch::launch_count(); });
            !refusal.empty())
          phases["triton_refusal"] = refusal;
      });
  } catch (const std::exception& e) {
    return {{"error", e.what()}};
  }
  context.gpu_prepared = phases;
  return phases;
#else
  (void)expected, (void)spares_lock;
  return {{"skipped", "this kbench was built without CUDA"}};
#endif
}

nlohmann::json give_back_gpu_memory(EvalContext& context) {
  const PhaseTimer timer;
  context.reference_outputs.clear();
  if (context.reference) context.reference->to(torch::kCPU);  // weights loaded since a hold sit in its segment
  check::give_back_free_memory();
  return {{"ms", timer.elapsed_ms()}};
}

// The pipeline: compile → PyTorch-op policy → (GPU) load → correctness → timing → (profile) →
// ablation → integrity; each stage writes its fragment of the record, and the first that settles
// the verdict ends it.
nlohmann::json evaluate(const EvalRequest& req, const std::function<void(const std::string&)>& on_stage,
                        EvalContext* context) {
  EvalContext local_context;
  if (!context) context = &local_context;
  // Isolation: a `.cu` runs only where no Python, kbench's or a submission's, has ever run.
  if (!compile::is_modelnew_file(req.submission) && (context->submission_code_loaded || !context->python_prestart.is_null()))
    throw std::logic_error("this worker has started Python (a ModelNew's worker): it never evaluates a .cu submission");
  const PhaseTimer since_start;
  nlohmann::json phases;
  const auto catalog = problems::Catalog::load(problems::project_root(req.root));
  const auto& problem = catalog.get(req.level, req.problem);
  nlohmann::json record = {{"problem", {{"level", problem.level}, {"id", problem.id}, {"name", problem.name}}},
                           {"submission", {{"path", req.submission}}},
                           {"stochastic", problem.stochastic}};
  if (req.gpu_memory_gib > 0) record["gpu_memory_gib"] = req.gpu_memory_gib;
  const auto memory_plan = plan_gpu_memory(req, problem);
  if (!memory_plan.refusal.empty()) {
    set_verdict(record, Verdict::not_checked, memory_plan.refusal);
    return record;
  }
  if (memory_plan.offload_candidate_output) record["candidate_output_offloaded"] = true;
  GpuStartup gpu_startup(req, problem, *context);  // reads the reference's archive while CUDA starts
  const auto gpu = launch::query_device(req.device);
  take_known_baselines(req, problem, context->baselines);
  phases["problem_load"] = since_start.elapsed_ms();
  const Run run{req, problem, gpu, *context, record, phases, on_stage};

  gpu_startup.start(req, problem, gpu, *context);
  // After the GPU thread started: NVML's start-up overlaps the CUDA context's.
  record["environment"] = timed(phases["environment"], [&] { return report::environment(req.device); });

  const auto compiled = compile_stage(run, gpu_startup);
  if (!compiled) return record;
  if (!torch_ops_policy_stage(run, *compiled->host)) return record;
  if (req.compile_only || !gpu.present) {
    set_verdict(record, Verdict::not_checked,
                req.compile_only ? "compiled (--compile-only): correctness not checked"
                                 : "compiled; correctness needs a GPU: " + gpu.why_absent);
    if (req.profile) record["profile"] = {{"skipped", "profiling runs the candidate: it needs a GPU"}};
  } else {
    gpu_startup.rethrow();
    read_next_reference(req, catalog, problem, *context);
#ifdef KBENCH_WITH_CUDA
    run_on_gpu(run, *compiled);
#endif
  }
  phases["total"] = since_start.elapsed_ms();
  record["phases_ms"] = phases;
  return record;
}

}  // namespace kbench::sandbox
