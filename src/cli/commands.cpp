#include "cli/commands.h"

#include <chrono>
#include <functional>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <unistd.h>

#include "check/degenerate.h"
#include "check/footprint.h"
#include "check/memory_guard.h"
#include "check/verdict.h"
#include "compile/extension_build.h"
#include "compile/modelnew.h"
#include "compile/nvrtc_compiler.h"
#include "compile/submission.h"
#include "launch/cuda_driver.h"
#include "log/log.h"
#include "log/number_text.h"
#include "problems/catalog.h"
#include "problems/reference.h"
#include "report/baselines.h"
#include "report/environment.h"
#include "report/printers.h"
#include "report/prompt.h"
#include "report/records.h"
#include "report/regression.h"
#include "report/scoring.h"
#include "sandbox/batch.h"
#include "sandbox/eval_options.h"
#include "sandbox/evaluation.h"
#include "sandbox/worker.h"
#include "serve/client.h"
#include "serve/server.h"
#include "timing/reference_timing.h"

namespace kbench::cli {
namespace {

void apply_logging(const GlobalOptions& g) { log::set_verbosity(g.verbosity); }


std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string mib(int64_t bytes) {
  std::ostringstream s;
  s.precision(bytes >= (int64_t{10} << 30) ? 0 : 1);
  s << std::fixed << static_cast<double>(bytes) / (1 << 20) << " MiB";
  return s.str();
}

// batch --build-only's ModelNew files: how many extensions were built by which route, and those
// that failed (their logs are in the cache; the evaluation reports them).
void print_extension_builds(const nlohmann::json& files) {
  std::map<std::string, int> counts;
  std::vector<std::string> failed;
  for (const auto& file : files) {
    const auto& extensions = file.at("extensions");
    if (extensions.is_object()) {  // {"error": ...}
      failed.push_back(file.at("file").get<std::string>() + ": " + extensions.value("error", ""));
      continue;
    }
    for (const auto& e : extensions) {
      ++counts[e.value("from_cache", false) ? "cached" : e.value("route", "?")];
      if (!e.value("ok", false))
        failed.push_back(file.at("file").get<std::string>() + ": extension '" + e.value("name", "") + "' did not build");
    }
  }
  if (files.empty()) return;
  std::printf("ModelNew extensions: %d built by kbench's fast route, %d by PyTorch's, %d found in the cache; %zu "
              "failed\n",
              counts["fast"], counts["pytorch"], counts["cached"], failed.size());
  for (const auto& f : failed) std::printf("  %s\n", f.c_str());
}

std::string read_text(const std::filesystem::path& path) {
  if (!std::ifstream(path)) throw std::runtime_error("cannot read " + path.string());
  return compile::file_bytes(path);
}

// A file of facts measured per problem on a GPU (problems/degenerate.json, footprint.json), written
// whole after each problem when `write` is set, so that a sweep cut short keeps what it measured.
class MeasuredFile {
 public:
  MeasuredFile(std::filesystem::path file, bool write, const std::string& about, const std::string& gpu)
      : file_(std::move(file)), write_(write) {
    if (!write_) return;
    if (std::filesystem::exists(file_)) doc_ = nlohmann::json::parse(read_text(file_));
    doc_["about"] = about;
    doc_["gpu"] = gpu;
  }
  void record(const problems::Problem& p, const nlohmann::json& entry) {
    if (!write_) return;
    doc_["problems"][p.key()] = entry;
    compile::write_file_atomically(file_, doc_.dump(1) + "\n");
    ++recorded_;
  }
  std::string written() const {
    return write_ ? ", " + std::to_string(recorded_) + " recorded in " + file_.string() : "";
  }

 private:
  std::filesystem::path file_;
  bool write_;
  int recorded_ = 0;
  nlohmann::json doc_ = nlohmann::json::object();
};

// Runs `measure` on every problem of the selection (level and id 0: all), each on its own: one that
// throws gets a row with its error and a FAILED line, and the sweep goes on. `measure` fills the
// problem's row and prints its line. Returns the rows; `failed` counts the errors.
nlohmann::json sweep_problems(const problems::Catalog& catalog, int level, int id, bool json, int& failed,
                              const std::function<void(const problems::Problem&, nlohmann::json& row)>& measure) {
  nlohmann::json rows = nlohmann::json::array();
  failed = 0;
  for (const auto& p : catalog.all()) {
    if ((level && p.level != level) || (id && p.id != id)) continue;
    nlohmann::json row = {{"level", p.level}, {"id", p.id}, {"name", p.name}};
    try {
      measure(p, row);
    } catch (const std::exception& e) {
      ++failed;
      const std::string what = e.what();
      row["error"] = what.substr(0, what.find('\n'));
      if (!json) std::printf("L%d %3d %-56s FAILED: %s\n", p.level, p.id, p.name.c_str(), row["error"].get<std::string>().c_str());
    }
    std::fflush(stdout);
    rows.push_back(row);
  }
  return rows;
}

// The commands that measure a fact per problem on a GPU (degenerate, footprint): which problems,
// which GPU, and whether to record what they measure in `file` (under problems/).
struct ProblemSweep {
  int level = 0, id = 0, device = 0;
  bool write = false;
};

void add_sweep_options(CLI::App* cmd, ProblemSweep& sweep, const std::string& file) {
  cmd->add_option("--level", sweep.level, "Only this level")->check(CLI::Range(1, 3));
  cmd->add_option("--problem", sweep.id, "Only this problem (with --level)");
  cmd->add_option("--device", sweep.device, "GPU ordinal");
  cmd->add_flag("--write", sweep.write, "Record each problem in problems/" + file + " as it is measured");
}

launch::DeviceInfo gpu_for(const std::string& command, int device) {
  const auto gpu = launch::query_device(device);
  if (!gpu.present) throw std::runtime_error("kbench " + command + " needs a GPU: " + gpu.why_absent);
  return gpu;
}

// Options that decide what counts as correct, shared by eval and batch.
void add_check_mode_options(CLI::App* cmd, sandbox::EvalRequest& req) {
  cmd->add_option("--robust-trials", req.check.robust_trials,
                  "Trials on inputs from other distributions after the problem's own (default 3; 0: none)")
      ->check(CLI::Range(0, 100));
  cmd->add_option("--robust-seed", req.check.robust_seed, "Seed of the first robustness trial (default: drawn per run)");
  cmd->add_option_function<std::string>(
         "--compat", [&req](const std::string& mode) { sandbox::set_compat(req, mode); },
         "kernelbench: the verdict is KernelBench's under its rule today (the problem's own inputs, atol = rtol = "
         "1e-4); kernelbench-v0.1: under the paper's (1e-2); none (default): kbench's. The other is kept beside it")
      ->check(CLI::IsMember({"kernelbench", "kernelbench-v0.1", "none"}));
  cmd->add_option_function<std::string>(
         "--torch-ops", [&req](const std::string& policy) { req.check.forbid_torch_ops = policy == "forbid"; },
         "allow (default): forward may call PyTorch ops that compute values (recorded); forbid: any such op is "
         "no_custom_kernel")
      ->check(CLI::IsMember({"allow", "forbid"}));
}

// Time and memory budgets of a worker, shared by eval, batch and serve (for serve, the ceilings of
// what a request may ask for).
void add_budget_options(CLI::App* cmd, sandbox::Budgets& budgets) {
  cmd->add_option("--compile-budget", budgets.compile_s, "Seconds allowed for compiling (default 60)");
  cmd->add_option("--check-budget", budgets.correctness_s, "Seconds allowed for the correctness trials (default 180)");
  cmd->add_option("--timing-budget", budgets.timing_s, "Seconds allowed for timing (default 300)");
  cmd->add_option("--host-memory-budget", budgets.host_memory_gib, "GiB of host memory a worker may hold (default 48)");
  cmd->add_option("--host-memory-headroom", budgets.host_memory_headroom_gib,
                  "GiB of host memory a request may add to what its worker held, beyond its problem's weights (default 10)");
  cmd->add_option("--build-budget", budgets.build_s, "Seconds allowed for building each extension of a ModelNew (default 600)");
}

// --gpu-memory, shared by eval, batch, ci and serve (for serve, the most a request may ask for).
void add_gpu_memory_option(CLI::App* cmd, sandbox::EvalRequest& req,
                           const std::string& effect = "a problem measured to need more is not run") {
  cmd->add_option("--gpu-memory", req.gpu_memory_gib,
                  "GiB of GPU memory an evaluation may use, as on a GPU that small, e.g. 22 for a 24 GB card "
                  "(default: all of it); " + effect)
      ->check(CLI::PositiveNumber);
}

// --timing and its two settings, shared by eval, batch and ci.
void add_timing_mode_options(CLI::App* cmd, timing::TimingOptions& timing) {
  const std::map<std::string, timing::TimingMode> modes = {
      {"fixed", timing::TimingMode::fixed}, {"adaptive", timing::TimingMode::adaptive}, {"both", timing::TimingMode::both}};
  cmd->add_option("--timing", timing.mode,
                  "fixed (default): every timed trial (KernelBench's count); adaptive: until the mean is known within "
                  "--timing-target at the GPU's unthrottled clock; both: adaptive's figure and every trial's, on the "
                  "same calls")
      ->transform(CLI::CheckedTransformer(modes).description(""))
      ->type_name("fixed|adaptive|both");
  cmd->add_option("--timing-min-trials", timing.min_trials,
                  "Adaptive timing: a candidate's trials before the first stop and between two stops (default 20; "
                  "baselines twice as many)")
      ->check(CLI::Range(2, 100000));
  cmd->add_option("--timing-target", timing.target,
                  "Adaptive timing: the 95% interval's half-width as a share of the mean (default 0.01; baselines "
                  "half of it)")
      ->check(CLI::PositiveNumber);
}

// --profile and --ncu, shared by eval and batch. Validated in the callback (needs timing, a worker).
void add_profile_options(CLI::App* cmd, sandbox::EvalRequest& req) {
  cmd->add_flag("--profile", req.profile,
                "After timing, take one more call apart: the candidate's kernels and PyTorch ops with their GPU times, "
                "the reference's operators and kernels, bandwidth and FLOP/s against the GPU's peaks");
  cmd->add_flag("--ncu", req.ncu,
                "Also run the candidate's kernels under Nsight Compute (in a worker of their own): SM and DRAM "
                "throughput, achieved occupancy, L2 hit rate, top stall reason; implies --profile");
}

// The profile needs the timed mean it is set beside; ncu needs a worker to start under it.
void check_profile_options(sandbox::EvalRequest& req, bool in_process) {
  req.profile = req.profile || req.ncu;
  if (req.profile && !req.time) throw CLI::ValidationError("--profile", "needs timing: drop --no-timing");
  if (req.ncu && in_process) throw CLI::ValidationError("--ncu", "runs a worker under Nsight Compute: drop --in-process");
}

// ---- list ---------------------------------------------------------------------------------------
void add_list(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("list", "List the reference problems (problems/manifest.json)");
  auto level = std::make_shared<int>(0);
  cmd->add_option("--level", *level, "Only this level (1, 2 or 3)")->check(CLI::Range(1, 3));
  cmd->callback([&g, &exit_code, level] {
    apply_logging(g);
    const auto catalog = problems::Catalog::load(problems::project_root(g.root));
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& p : catalog.all()) {
      if (*level && p.level != *level) continue;
      if (g.json) {
        rows.push_back(problems::to_json(p));
        continue;
      }
      std::string kinds;
      for (const auto& k : p.degenerate_kinds) kinds += (kinds.empty() ? "  degenerate: " : ",") + k;
      std::printf("L%d %3d  %-58s %12s  %11lld params%s%s%s\n", p.level, p.id, p.name.c_str(), mib(p.input_bytes).c_str(),
                  static_cast<long long>(p.parameter_count), p.stochastic ? "  stochastic" : "",
                  p.min_torch.empty() ? "" : ("  needs torch>=" + p.min_torch).c_str(), kinds.c_str());
    }
    if (g.json) std::cout << rows.dump(2) << "\n";
    exit_code = 0;
  });
}

// ---- show ---------------------------------------------------------------------------------------
void add_show(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("show", "Show one problem: its facts and its reference source");
  auto level = std::make_shared<int>(0), id = std::make_shared<int>(0);
  cmd->add_option("--level", *level, "Level (1, 2 or 3)")->required()->check(CLI::Range(1, 3));
  cmd->add_option("--problem", *id, "Problem id within the level")->required();
  cmd->callback([&g, &exit_code, level, id] {
    apply_logging(g);
    const auto catalog = problems::Catalog::load(problems::project_root(g.root));
    const auto& p = catalog.get(*level, *id);
    const auto source = read_text(catalog.source_path(p));
    if (g.json) {
      auto j = problems::to_json(p);
      j["source"] = source;
      j["input_generator"] = p.input_generator;
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << "# " << p.key() << "  (" << p.file << ")\n# inputs:";
      for (const auto& in_spec : p.inputs) {
        std::cout << " " << in_spec.dtype;
        if (!in_spec.is_scalar) std::cout << nlohmann::json(in_spec.shape).dump();
      }
      std::cout << "  (" << mib(p.input_bytes) << ")  params: " << p.parameter_count
                << "  tolerance: atol=" << p.atol << " rtol=" << p.rtol << (p.stochastic ? "  stochastic" : "") << "\n";
      if (!p.degeneracy_note.empty()) std::cout << "# degenerate: " << p.degeneracy_note << "\n";
      std::cout << "\n" << source;
    }
    exit_code = 0;
  });
}

// ---- doctor -------------------------------------------------------------------------------------
void add_doctor(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("doctor", "Check the environment: GPU, driver, NVRTC, libtorch, problems, cache");
  cmd->callback([&g, &exit_code] {
    apply_logging(g);
    nlohmann::json checks = nlohmann::json::array();
    bool all_ok = true;
    auto add = [&](const std::string& what, bool ok, const std::string& detail, const std::string& fix) {
      checks.push_back({{"check", what}, {"ok", ok}, {"detail", detail}, {"fix", ok ? "" : fix}});
      all_ok = all_ok && ok;
    };
    const auto gpu = launch::query_device(0);
    add("gpu", gpu.present, gpu.present ? gpu.name + " (" + gpu.arch() + "), " + mib(gpu.memory_bytes) : gpu.why_absent,
        launch::built_with_cuda() ? "check nvidia-smi and the driver installation"
                                  : "correctness and timing need a GPU machine and the GPU build (cmake --preset gpu)");
    add("libtorch", true, problems::libtorch_version() + (launch::built_with_cuda() ? " with CUDA" : " (CPU only)"), "");
    {
      const auto probe = compile::nvrtc_compile("extern \"C\" __global__ void probe(float* x) { x[0] = 1.0f; }",
                                                "probe.cu", {gpu.present ? gpu.arch() : "sm_90a", {}});
      add("nvrtc", probe.ok && probe.kernels.size() == 1,
          "NVRTC " + compile::nvrtc_version() + (probe.ok ? ", compiled a probe kernel in " + std::to_string(int(probe.compile_ms)) + " ms" : ": " + probe.log),
          "install the CUDA toolkit (NVRTC) and make libnvrtc.so findable");
    }
    try {
      const auto py = compile::modelnew_environment();
      const bool usable = !py.value("ninja", "").empty() && (!launch::built_with_cuda() || !py.value("cuda_home", "").empty());
      add("modelnew", usable,
          "Python " + py.value("python", "") + " (" + py.value("executable", "") + "), torch " + py.value("torch", "") +
              ", ninja " + (py.value("ninja", "").empty() ? "missing" : py.value("ninja", "")) + ", CUDA toolkit " +
              (py.value("cuda_home", "").empty() ? "missing" : py.value("cuda_home", "")),
          "ModelNew files build with torch.utils.cpp_extension: install ninja beside that Python (pip install ninja) and "
          "the CUDA toolkit (or set CUDA_HOME)");
    } catch (const std::exception& e) {
      add("modelnew", false, e.what(), "kbench runs ModelNew files in the Python it was built against: set KBENCH_PYTHON "
                                      "to a Python whose torch is kbench's libtorch");
    }
    try {
      const auto catalog = problems::Catalog::load(problems::project_root(g.root));
      size_t archives = 0, usable = 0;
      for (const auto& p : catalog.all()) {
        if (problems::needs_newer_torch(p)) continue;
        ++usable;
        if (std::filesystem::exists(problems::archive_path(p, problems::libtorch_version()))) ++archives;
      }
      add("problems", !catalog.all().empty(), std::to_string(catalog.all().size()) + " problems in the manifest",
          "run from a kbench checkout or pass --root");
      add("archives", archives == usable,
          std::to_string(archives) + " of " + std::to_string(usable) + " TorchScript archives for libtorch " +
              problems::libtorch_version() + " in " + problems::cache_dir().string(),
          "scripts/export_problems.py (same PyTorch as kbench's libtorch)");
    } catch (const std::exception& e) {
      add("problems", false, e.what(), "run from a kbench checkout or pass --root");
    }
    {
      std::error_code ec;
      const auto dir = problems::cache_dir();
      std::filesystem::create_directories(dir, ec);
      const bool writable = !ec && ::access(dir.c_str(), W_OK) == 0;
      add("cache", writable, dir.string(), "set KBENCH_CACHE to a writable directory");
    }
    if (g.json) {
      std::cout << nlohmann::json{{"ok", all_ok}, {"checks", checks}}.dump(2) << "\n";
    } else {
      for (const auto& c : checks) {
        std::printf("%-4s %-9s %s\n", c["ok"].get<bool>() ? "ok" : "FAIL", c["check"].get<std::string>().c_str(),
                    c["detail"].get<std::string>().c_str());
        if (!c["ok"].get<bool>()) std::printf("               fix: %s\n", c["fix"].get<std::string>().c_str());
      }
    }
    exit_code = all_ok ? 0 : 1;
  });
}

// ---- eval ---------------------------------------------------------------------------------------
void add_eval(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("eval", "Compile a submission, check it against the reference five times, time it");
  auto req = std::make_shared<sandbox::EvalRequest>();
  auto budgets = std::make_shared<sandbox::Budgets>();
  auto out_file = std::make_shared<std::string>();
  auto in_process = std::make_shared<bool>(false);
  auto no_timing = std::make_shared<bool>(false);
  auto no_flush = std::make_shared<bool>(false);
  req->check.tolerance = {-1, -1};  // "from the manifest" unless given
  cmd->add_option("submission", req->submission, "The submission: kbench's .cu, or KernelBench's ModelNew .py")
      ->required()->check(CLI::ExistingFile);
  cmd->add_option("--level", req->level, "Level (1, 2 or 3)")->required()->check(CLI::Range(1, 3));
  cmd->add_option("--problem", req->problem, "Problem id within the level")->required();
  cmd->add_option("--arch", req->arch, "NVRTC architecture (default: the GPU's, sm_90a without a GPU)");
  cmd->add_flag("--compile-only", req->compile_only, "Split, compile and check signatures and host program only");
  cmd->add_option("--trials", req->check.trials, "Correctness trials")->check(CLI::Range(1, 1000));
  cmd->add_option("--seed", req->check.base_seed, "Seed of the first trial");
  add_check_mode_options(cmd, *req);
  cmd->add_option("--atol", req->check.tolerance.atol, "Absolute tolerance (default 1e-2 or the manifest's)");
  cmd->add_option("--rtol", req->check.tolerance.rtol, "Relative tolerance (default 1e-2 or the manifest's)");
  cmd->add_option("--timing-trials", req->timing.trials, "Timed trials (adaptive timing: the most)")->check(CLI::Range(1, 100000));
  add_timing_mode_options(cmd, req->timing);
  cmd->add_option("--warmup", req->timing.warmup, "Warm-up runs before timing")->check(CLI::Range(0, 10000));
  cmd->add_flag("--no-flush", *no_flush, "Do not flush the L2 before each timed trial");
  cmd->add_flag("--no-timing", *no_timing, "Check correctness only");
  auto* device = cmd->add_option("--device", req->device, "GPU ordinal");
  cmd->add_option("--out", *out_file, "Also write the JSON record to this file");
  add_budget_options(cmd, *budgets);
  add_gpu_memory_option(cmd, *req);
  auto* in_process_flag = cmd->add_flag("--in-process", *in_process, "Run in this process instead of a worker (debugging; no isolation)");
  add_profile_options(cmd, *req);
  auto server = std::make_shared<std::string>(), token = std::make_shared<std::string>();
  cmd->add_option("--server", *server, "Evaluate on a running `kbench serve` at this URL (e.g. http://127.0.0.1:8000)")
      ->excludes(in_process_flag)->excludes(device);
  cmd->add_option("--token", *token, "The server's token (default: $KBENCH_SERVE_TOKEN)");
  cmd->callback([&g, &exit_code, req, budgets, out_file, in_process, no_timing, no_flush, server, token] {
    apply_logging(g);
    req->root = g.root;
    req->time = !*no_timing;
    req->timing.flush_l2 = !*no_flush;
    check_profile_options(*req, *in_process);
    nlohmann::json record;
    if (!server->empty()) {
      const nlohmann::json body = {{"source", read_text(req->submission)}, {"level", req->level}, {"problem", req->problem},
                                   {"name", req->submission}, {"options", sandbox::options_of({*req, *budgets})}};
      record = serve::evaluate_remote(*server, !token->empty() ? *token : env_or_empty("KBENCH_SERVE_TOKEN"), body);
    } else {
      // Problem errors are the user's: say so before spending a worker on them.
      problems::Catalog::load(problems::project_root(g.root)).get(req->level, req->problem);
      record = *in_process ? sandbox::evaluate(*req) : sandbox::evaluate_isolated(*req, *budgets, sandbox::kForkWithoutExec);
    }
    if (record.contains("error")) throw std::runtime_error(record["error"].get<std::string>());
    if (!out_file->empty()) std::ofstream(*out_file) << record.dump(2) << "\n";
    if (g.json) std::cout << record.dump(2) << "\n";
    else std::cout << report::eval_summary(record);
    const auto verdict = record.value("verdict", "");
    if (verdict == "correct") exit_code = 0;
    else if (verdict == "not_checked") exit_code = req->compile_only ? 0 : 2;
    else exit_code = 1;
  });
}

// ---- baseline -----------------------------------------------------------------------------------
void add_baseline(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "baseline", "Time the eager references (and with --compiled their AOTInductor packages) on this GPU; "
                  "record baselines/<gpu>/eager.json and compiled.json");
  auto level = std::make_shared<int>(0), id = std::make_shared<int>(0), device = std::make_shared<int>(0);
  auto options = std::make_shared<timing::TimingOptions>();
  auto no_record = std::make_shared<bool>(false), compiled = std::make_shared<bool>(false);
  cmd->add_option("--level", *level, "Only this level")->check(CLI::Range(1, 3));
  cmd->add_flag("--compiled", *compiled, "Also time each problem's AOTInductor package (scripts/compile_baselines.py)");
  cmd->add_option("--problem", *id, "Only this problem (with --level)");
  cmd->add_option("--trials", options->trials, "Timed trials per problem")->check(CLI::Range(1, 100000));
  cmd->add_option("--warmup", options->warmup, "Warm-up runs")->check(CLI::Range(0, 10000));
  cmd->add_option("--device", *device, "GPU ordinal");
  cmd->add_flag("--no-record", *no_record, "Print only; leave baselines/ untouched");
  cmd->callback([&g, &exit_code, level, id, device, options, no_record, compiled] {
    apply_logging(g);
    const auto gpu = launch::query_device(*device);
    if (!gpu.present) throw std::runtime_error("kbench baseline needs a GPU: " + gpu.why_absent);
    const auto catalog = problems::Catalog::load(problems::project_root(g.root));
    int failed = 0;
    const auto sweep_start = std::chrono::steady_clock::now();
    const auto rows = sweep_problems(catalog, *level, *id, g.json, failed, [&](const problems::Problem& p, nlohmann::json& row) {
      const auto t = timing::time_reference(p, *device, *options, *compiled ? report::gpu_slug(gpu.name) : "");
      row["load_ms"] = t.load_ms;
      row["inputs_ms"] = t.inputs_ms;
      row["eager"] = timing::to_json(t.forward);
      if (!*no_record) report::record_baseline(gpu.name, "eager", p.level, p.name, timing::baseline_entry(t.forward, gpu.name, *device));
      std::string compiled_text;
      if (t.compiled) {
        row["compiled"] = timing::to_json(*t.compiled);
        if (!*no_record)
          report::record_baseline(gpu.name, "compiled", p.level, p.name,
                                  timing::baseline_entry(*t.compiled, gpu.name, *device,
                                                         "AOTInductor package, timed from C++ (kbench baseline --compiled)"));
        char buf[64];
        std::snprintf(buf, sizeof buf, "  compiled %10.4f ms", t.compiled->stats.mean);
        compiled_text = buf;
      } else if (*compiled) {
        row["compiled_unavailable"] = t.compiled_unavailable;
        compiled_text = "  compiled: none";
      }
      if (!g.json)
        std::printf("L%d %3d %-56s load %8.1f ms  inputs %8.1f ms  eager %10.4f ms (cv %.3f)%s\n", p.level, p.id, p.name.c_str(),
                    t.load_ms, t.inputs_ms, t.forward.stats.mean, t.forward.stats.cv, compiled_text.c_str());
    });
    const double sweep_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - sweep_start).count();
    if (g.json) std::cout << nlohmann::json{{"gpu", gpu.name}, {"sweep_s", sweep_s}, {"problems", rows}}.dump(2) << "\n";
    else std::printf("%zu problems in %.1f s, %d failed%s\n", rows.size(), sweep_s, failed,
                     *no_record ? "" : (", recorded in " + report::baseline_file(gpu.name, "eager").string()).c_str());
    exit_code = failed ? 1 : 0;
  });
}

// ---- degenerate ---------------------------------------------------------------------------------
void add_degenerate(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "degenerate", "Find problems whose check a constant or zeros would pass (GPU); --write records problems/degenerate.json");
  auto sweep = std::make_shared<ProblemSweep>();
  add_sweep_options(cmd, *sweep, "degenerate.json");
  cmd->callback([&g, &exit_code, sweep] {
    apply_logging(g);
    const auto gpu = gpu_for("degenerate", sweep->device);
    const auto root = problems::project_root(g.root);
    const auto catalog = problems::Catalog::load(root);
    MeasuredFile file(problems::degeneracy_file(root), sweep->write,
                      "Measured by kbench degenerate --write: see src/check/degenerate.h.", gpu.name);
    check::CheckOptions options;
    options.robust_seed = 1000;  // fixed: the file must not change from run to run but by the problems
    int failed = 0, degenerate = 0;
    const auto rows = sweep_problems(catalog, sweep->level, sweep->id, g.json, failed, [&](const problems::Problem& p, nlohmann::json& row) {
      problems::Reference reference(p, torch::Device(torch::kCUDA, sweep->device));
      options.tolerance = {p.atol, p.rtol};
      const auto entry = check::to_json(check::measure_degeneracy(reference, options));
      row["degeneracy"] = entry;
      degenerate += !entry["kinds"].empty();
      file.record(p, entry);
      if (!g.json)
        std::printf("L%d %3d %-56s %-40s %s\n", p.level, p.id, p.name.c_str(), entry["kinds"].dump().c_str(),
                    entry["note"].get<std::string>().c_str());
    });
    if (g.json) std::cout << nlohmann::json{{"gpu", gpu.name}, {"problems", rows}}.dump(2) << "\n";
    else std::printf("%zu problems, %d degenerate, %d failed%s\n", rows.size(), degenerate, failed, file.written().c_str());
    exit_code = failed ? 1 : 0;
  });
}

// ---- footprint ----------------------------------------------------------------------------------
void add_footprint(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "footprint", "Measure the GPU memory each problem's evaluation needs at its peak (GPU); --write records "
                   "problems/footprint.json, which --gpu-memory reads to refuse problems that cannot fit");
  auto sweep = std::make_shared<ProblemSweep>();
  auto limit = std::make_shared<sandbox::EvalRequest>();
  add_sweep_options(cmd, *sweep, "footprint.json");
  add_gpu_memory_option(cmd, *limit, "each problem is measured under that cap, and one that runs out of memory needs more");
  cmd->callback([&g, &exit_code, sweep, limit] {
    apply_logging(g);
    const auto gpu = gpu_for("footprint", sweep->device);
    const auto root = problems::project_root(g.root);
    const auto catalog = problems::Catalog::load(root);
    MeasuredFile file(problems::footprint_file(root), sweep->write,
                      "Measured by kbench footprint --write: see src/check/footprint.h.", gpu.name);
    const auto limit_bytes = sandbox::gpu_memory_bytes(*limit);
    check::limit_gpu_memory(sweep->device, limit_bytes);
    constexpr double kGiB = 1 << 30;
    int failed = 0, exceeded = 0, offloaded = 0;
    // Out of memory under the limit is a measurement (it needs more); any other error is the sweep's.
    const auto measure = [&](const problems::Problem& p, bool offload) {
      try {
        problems::Reference reference(p, torch::Device(torch::kCUDA, sweep->device));
        return check::to_json(check::measure_footprint(reference, 1, offload));
      } catch (const std::exception& e) {
        if (limit_bytes == 0 || !check::is_out_of_memory(e.what())) throw;
        return check::exceeded_limit_json(limit_bytes);
      }
    };
    const auto peak = [&](const nlohmann::json& entry) {
      return log::fixed(entry["peak_bytes"].get<double>() / kGiB, 2) + " GiB at its peak";
    };
    const auto rows = sweep_problems(catalog, sweep->level, sweep->id, g.json, failed, [&](const problems::Problem& p, nlohmann::json& row) {
      auto entry = measure(p, false);
      std::string line;
      if (entry.contains("peak_bytes")) {
        line = peak(entry) + " (inputs " + log::fixed(entry["input_bytes"].get<double>() / kGiB, 2) + ", output " +
               log::fixed(entry["output_bytes"].get<double>() / kGiB, 2) + ", weights " +
               log::fixed(entry["weight_bytes"].get<double>() / kGiB, 2) + ")";
      } else {  // what an evaluation under the limit does next
        entry["offloaded"] = measure(p, true);
        const bool fits = entry["offloaded"].contains("peak_bytes");
        ++(fits ? offloaded : exceeded);
        char text[160];
        std::snprintf(text, sizeof text, "OUT OF MEMORY under --gpu-memory %g GiB; %s with the candidate's output in host memory",
                      limit->gpu_memory_gib, fits ? peak(entry["offloaded"]).c_str() : "out of memory too");
        line = text;
      }
      row["footprint"] = entry;
      file.record(p, entry);
      if (!g.json) std::printf("L%d %3d %-56s %s\n", p.level, p.id, p.name.c_str(), line.c_str());
    });
    if (g.json) std::cout << nlohmann::json{{"gpu", gpu.name}, {"gpu_memory_gib", limit->gpu_memory_gib}, {"problems", rows}}.dump(2) << "\n";
    else std::printf("%zu problems: %d fit under --gpu-memory %g GiB (0: none) only with the candidate's output in host "
                     "memory, %d not at all; %d failed%s\n", rows.size(), offloaded, limit->gpu_memory_gib, exceeded, failed,
                     file.written().c_str());
    exit_code = failed || exceeded ? 1 : 0;
  });
}

// ---- batch --------------------------------------------------------------------------------------
void add_batch(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("batch", "Evaluate a directory of submissions on every GPU, resumably");
  auto o = std::make_shared<sandbox::BatchOptions>();
  auto dir = std::make_shared<std::string>(), out = std::make_shared<std::string>(), shard = std::make_shared<std::string>();
  auto gpus = std::make_shared<std::vector<int>>();
  auto no_timing = std::make_shared<bool>(false);
  cmd->add_option("dir", *dir, "Directory of submissions (level_<L>_problem_<P>_sample_<S>_kernel.cu or .py, or level<L>/<P>/*.cu or .py)")
      ->required()->check(CLI::ExistingDirectory);
  cmd->add_option("--out", *out, "Results file, one JSON line per submission (default <dir>/kbench-results.jsonl)");
  cmd->add_option("--gpus", *gpus, "GPU ordinals to use (default: all visible)")->delimiter(',');
  cmd->add_option("--shard", *shard, "i/n: evaluate only shard i of n (0-based), e.g. a Slurm array task");
  cmd->add_option("--compile-threads", o->compile_threads, "NVRTC and extension build threads (default: all cores)");
  cmd->add_flag("--build-only", o->build_only,
                "Compile every submission (NVRTC, ModelNew extensions) into the caches and stop: no GPU needed");
  cmd->add_option("--arch", o->base.arch, "Architecture to compile for (default: the first GPU's, sm_90a without one)");
  cmd->add_option("--trials", o->base.check.trials, "Correctness trials")->check(CLI::Range(1, 1000));
  add_check_mode_options(cmd, o->base);
  cmd->add_option("--timing-trials", o->base.timing.trials, "Timed trials (adaptive timing: the most)")->check(CLI::Range(1, 100000));
  add_timing_mode_options(cmd, o->base.timing);
  cmd->add_flag("--no-timing", *no_timing, "Check correctness only");
  add_budget_options(cmd, o->budgets);
  add_gpu_memory_option(cmd, o->base);
  add_profile_options(cmd, o->base);
  cmd->callback([&g, &exit_code, o, dir, out, shard, gpus, no_timing] {
    apply_logging(g);
    o->dir = *dir;
    o->gpus = *gpus;
    o->base.root = g.root;
    o->base.time = !*no_timing;
    check_profile_options(o->base, false);
    o->base.check.tolerance.atol = o->base.check.tolerance.rtol = -1;  // the manifest's; --compat's rule stays
    o->worker_exe = sandbox::current_executable();
    o->progress = !g.json && g.verbosity >= 0;
    if (!shard->empty()) {
      const auto slash = shard->find('/');
      try {
        o->shard_index = std::stoi(shard->substr(0, slash));
        o->shard_count = std::stoi(shard->substr(slash + 1));
      } catch (const std::exception&) {
        o->shard_count = 0;
      }
      if (slash == std::string::npos || o->shard_count < 1 || o->shard_index < 0 || o->shard_index >= o->shard_count)
        throw CLI::ValidationError("--shard", "expected i/n with 0 <= i < n, e.g. 3/8");
    }
    const std::string suffix = o->shard_count > 1 ? ".shard-" + std::to_string(o->shard_index) + "-of-" + std::to_string(o->shard_count) : "";
    o->out = !out->empty() ? std::filesystem::path(*out) : std::filesystem::path(*dir) / ("kbench-results" + suffix + ".jsonl");
    const auto found = sandbox::discover(o->dir);
    for (const auto& u : found.unmatched) log::warn("not a submission name kbench knows, skipped: " + u);
    const auto summary = sandbox::run_batch(*o);
    if (o->build_only) {
      if (g.json) std::cout << summary.to_json().dump(2) << "\n";
      else {
        std::printf("%d submissions found (%d unmatched names), %d in this shard: compiled into the caches in %.1f s "
                    "on %d threads (--build-only: nothing evaluated)\n",
                    summary.discovered, summary.unmatched, summary.in_shard, summary.compile_s, summary.compile_threads);
        print_extension_builds(summary.builds);
      }
      exit_code = 0;
      return;
    }
    if (g.json) {
      auto j = summary.to_json();
      j["results"] = o->out.string();
      j["unmatched_files"] = found.unmatched;
      std::cout << j.dump(2) << "\n";
    } else {
      std::printf("%d submissions found (%d unmatched names), %d in this shard: %d evaluated, %d duplicates, %d already done\n",
                  summary.discovered, summary.unmatched, summary.in_shard, summary.evaluated, summary.duplicates, summary.resumed);
      std::printf("wall %.1f s; NVRTC and extension builds ahead of the GPUs %.1f s on %d threads;", summary.wall_s,
                  summary.compile_s, summary.compile_threads);
      for (size_t i = 0; i < summary.gpu_busy_s.size(); ++i)
        std::printf(" GPU %zu busy %.1f s (idle %.1f s);", i, summary.gpu_busy_s[i], summary.wall_s - summary.gpu_busy_s[i]);
      std::printf("\nresults: %s (kbench report %s)\n", o->out.c_str(), o->out.c_str());
    }
    exit_code = 0;
  });
}

// ---- report -------------------------------------------------------------------------------------
void add_report(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("report", "fast_p, pass@k and speedups from result files (shards are merged)");
  auto files = std::make_shared<std::vector<std::string>>();
  auto markdown = std::make_shared<std::string>(), svg = std::make_shared<std::string>();
  auto include_flagged = std::make_shared<bool>(false);
  cmd->add_option("results", *files, "Result files (.jsonl) from kbench batch, or eval records (.json)")
      ->required()->check(CLI::ExistingFile);
  cmd->add_option("--markdown", *markdown, "Also write the table as Markdown to this file");
  cmd->add_option("--svg", *svg, "Also write the fast_p-against-p plot to this SVG file");
  cmd->add_flag("--include-flagged", *include_flagged,
                "Count speedups the audit flagged (faster than the problem's memory traffic allows) in fast_p");
  cmd->callback([&g, &exit_code, files, markdown, svg, include_flagged] {
    apply_logging(g);
    auto records = report::read_records(*files);
    if (records.empty()) throw std::runtime_error("no result records in the given files");
    std::map<int, int> sizes;
    // A named catalog: a range-for over a temporary's all() would read a destroyed vector.
    const auto catalog = problems::Catalog::load(problems::project_root(g.root));
    for (const auto& p : catalog.all()) ++sizes[p.level];
    const auto run = report::score_run(std::move(records), sizes, *include_flagged);
    std::cout << report::make_printer(g.json ? "json" : "terminal")->render(run);
    if (!markdown->empty()) std::ofstream(*markdown) << report::make_printer("markdown")->render(run);
    if (!svg->empty()) std::ofstream(*svg) << report::make_printer("svg")->render(run);
    exit_code = 0;
  });
}


// ---- ci -----------------------------------------------------------------------------------------
void add_ci(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("ci", "Re-evaluate reference kernels; fail on a changed verdict or a slower kernel");
  auto dir = std::make_shared<std::string>(), recorded_path = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto record = std::make_shared<bool>(false), compile_only = std::make_shared<bool>(false);
  auto timing_trials = std::make_shared<int>(100);
  cmd->add_option("dir", *dir, "Kernel collection (default: the project's levelN/<id>_<Name>.cu)")->check(CLI::ExistingDirectory);
  cmd->add_option("--recorded", *recorded_path, "Recorded results (default: results/ci/<gpu>.json)");
  cmd->add_flag("--record", *record, "Write this run's results as the new record");
  cmd->add_option("--out", *out, "Keep this run's evaluation records (JSON lines) in this file");
  cmd->add_option("--timing-trials", *timing_trials, "Timed trials per kernel")->check(CLI::Range(1, 100000));
  cmd->add_flag("--compile-only", *compile_only, "Check only what needs no GPU, even where there is one");
  auto base = std::make_shared<sandbox::EvalRequest>();
  add_gpu_memory_option(cmd, *base);
  cmd->add_option_function<std::string>(
         "--torch-ops", [base](const std::string& policy) { base->check.forbid_torch_ops = policy == "forbid"; },
         "forbid: kernels whose forward calls PyTorch compute ops are refused (listed as such, not regressions); "
         "every other kernel must be correct without any")
      ->check(CLI::IsMember({"allow", "forbid"}));
  add_timing_mode_options(cmd, base->timing);
  cmd->callback([&g, &exit_code, dir, recorded_path, out, record, timing_trials, compile_only, base] {
    apply_logging(g);
    if (*record && base->check.forbid_torch_ops)
      throw std::runtime_error("--record keeps kbench's own policy: run it without --torch-ops forbid");
    const auto root = problems::project_root(g.root);
    auto gpu = launch::query_device(0);
    if (*compile_only) gpu = launch::DeviceInfo{false, "--compile-only"};
    sandbox::BatchOptions o;
    o.base = *base;
    o.dir = dir->empty() ? root : std::filesystem::path(*dir);
    // Without --out the records are only the table's input: a scratch file, removed after.
    const auto records_file = !out->empty() ? std::filesystem::path(*out)
                                            : std::filesystem::temp_directory_path() / ("kbench-ci-" + std::to_string(::getpid()) + ".jsonl");
    if (!out->empty()) std::filesystem::remove(records_file);  // a batch output resumes; a ci run starts afresh
    o.out = records_file;
    o.progress = !g.json && g.verbosity >= 0;
    o.base.root = g.root;
    o.base.check.tolerance.atol = o.base.check.tolerance.rtol = -1;  // the manifest's; --compat's rule stays
    o.base.timing.trials = *timing_trials;
    o.base.compile_only = !gpu.present;
    o.worker_exe = sandbox::current_executable();
    sandbox::run_batch(o);
    const auto records = report::read_records({records_file.string()});  // sorted by kernel file
    if (out->empty()) std::filesystem::remove(records_file);
    const auto file = !recorded_path->empty() ? std::filesystem::path(*recorded_path)
                                              : root / "results" / "ci" / (report::gpu_slug(gpu.present ? gpu.name : "") + ".json");
    nlohmann::json recorded = nlohmann::json::object();
    if (std::filesystem::exists(file)) recorded = nlohmann::json::parse(read_text(file));
    else if (!gpu.present) {
      // No GPU: compare compile-side verdicts with any GPU's record there is.
      for (const auto& entry : std::filesystem::directory_iterator(root / "results" / "ci"))
        if (entry.path().extension() == ".json") recorded.update(nlohmann::json::parse(read_text(entry.path())));
    }
    const auto rows = report::compare_with_recorded(recorded, records, gpu.present);
    int regressed = 0, skipped = 0, refused = 0;
    for (const auto& r : rows)
      regressed += r.status == "REGRESSED", skipped += r.status == "skipped", refused += r.status == "refused";
    if (g.json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& r : rows)
        j.push_back({{"file", r.file}, {"recorded", r.recorded_verdict}, {"verdict", r.verdict}, {"status", r.status},
                     {"recorded_speedup", r.recorded_speedup}, {"speedup", r.speedup}, {"why", r.why}});
      std::cout << nlohmann::json{{"kernels", j}, {"regressed", regressed}, {"refused", refused}, {"gpu", gpu.present}}.dump(2) << "\n";
    } else {
      std::cout << report::regression_table(rows);
      std::printf("%zu kernels, %d regressed%s%s\n", rows.size(), regressed,
                  refused ? (", " + std::to_string(refused) + " refused by --torch-ops forbid").c_str() : "",
                  gpu.present ? "" : (", " + std::to_string(skipped) + " not run (no GPU: compiled and checked signatures and host programs only)").c_str());
    }
    if (*record) {
      if (!gpu.present) throw std::runtime_error("--record needs a GPU: a record holds verdicts and timings");
      std::filesystem::create_directories(file.parent_path());
      std::ofstream(file) << report::to_recorded(records).dump(2) << "\n";
      std::printf("recorded %s\n", file.c_str());
    }
    exit_code = regressed ? 1 : 0;
  });
}

// ---- prompt -------------------------------------------------------------------------------------
void add_prompt(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("prompt", "Print a prompt for a language model (one-shot, KernelBench-style)");
  auto level = std::make_shared<int>(0), id = std::make_shared<int>(0);
  auto with_gpu = std::make_shared<bool>(false);
  auto feedback = std::make_shared<std::string>(), previous = std::make_shared<std::string>();
  cmd->add_option("--level", *level, "Level (1, 2 or 3)")->required()->check(CLI::Range(1, 3));
  cmd->add_option("--problem", *id, "Problem id within the level")->required();
  cmd->add_flag("--gpu", *with_gpu, "Add this GPU's specifications");
  cmd->add_option("--feedback", *feedback, "An evaluation record (kbench eval --out): the next refinement turn")->check(CLI::ExistingFile);
  cmd->add_option("--previous", *previous, "The submission that record is about (default: its submission path)");
  cmd->callback([&g, &exit_code, level, id, with_gpu, feedback, previous] {
    apply_logging(g);
    const auto catalog = problems::Catalog::load(problems::project_root(g.root));
    const auto& p = catalog.get(*level, *id);
    const auto& example = catalog.get(1, 19);
    report::PromptInput in;
    in.problem_name = p.name;
    in.degeneracy_note = p.degeneracy_note;
    in.reference_source = read_text(catalog.source_path(p));
    in.example_reference = read_text(catalog.source_path(example));
    in.example_solution = read_text(catalog.root() / "level1" / "19_ReLU.cu");
    if (*with_gpu) {
      const auto gpu = launch::query_device(0);
      if (!gpu.present) throw std::runtime_error("--gpu needs a GPU: " + gpu.why_absent);
      in.gpu = gpu;
    }
    if (!feedback->empty()) {
      in.feedback = nlohmann::json::parse(read_text(*feedback));
      const std::string path = !previous->empty() ? *previous : (*in.feedback)["submission"].value("path", "");
      in.previous_submission = path.empty() ? "" : read_text(path);
    }
    const auto text = report::build_prompt(in);
    if (g.json) std::cout << nlohmann::json{{"prompt", text}}.dump(2) << "\n";
    else std::cout << text;
    exit_code = 0;
  });
}

// ---- serve --------------------------------------------------------------------------------------
void add_serve(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "serve", "Evaluate submissions sent over HTTP (POST /v1/eval), workers kept warm per GPU: for RL and agent loops");
  auto o = std::make_shared<serve::ServeOptions>();
  o->defaults = sandbox::default_eval_settings();
  auto max_source_kib = std::make_shared<size_t>(1024);
  cmd->add_option("--host", o->host, "Address to listen on (default 127.0.0.1; set --token to listen elsewhere)");
  cmd->add_option("--port", o->port, "Port (default 8000; 0: any free port, printed)")->check(CLI::Range(0, 65535));
  cmd->add_option("--gpus", o->service.gpus, "GPU ordinals to use (default: all visible)")->delimiter(',');
  cmd->add_option("--token", o->token, "Require \"Authorization: Bearer TOKEN\" on every request (default: $KBENCH_SERVE_TOKEN)");
  cmd->add_option("--max-queue", o->service.max_queue, "Evaluations admitted at once, waiting or running; more get 429 (default 64)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--max-source-kib", *max_source_kib, "Largest source accepted, in KiB; larger get 413 (default 1024)")
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--compile-threads", o->service.compile_threads, "NVRTC threads (default: all cores)");
  cmd->add_option("--max-connections", o->connections.max_connections, "Connections open at once; more get 503 (default 2048)")
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--max-connections-per-client", o->connections.max_per_client,
                  "Connections open at once from one address; more get 429 (default 256)")
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--request-deadline", o->connections.request_deadline_s,
                  "Seconds a client has to send a request's headers and body; then its connection is closed (default 30)")
      ->check(CLI::Range(1.0, 3600.0));
  add_budget_options(cmd, o->defaults.budgets);
  add_gpu_memory_option(cmd, o->defaults.request);
  add_check_mode_options(cmd, o->defaults.request);  // every request's defaults, which its options override
  cmd->callback([&g, &exit_code, o, max_source_kib] {
    apply_logging(g);
    o->root = g.root;
    o->defaults.request.root = g.root;
    o->max_source_bytes = *max_source_kib << 10;
    if (o->token.empty()) o->token = env_or_empty("KBENCH_SERVE_TOKEN");
    o->service.worker_exe = sandbox::current_executable();
    exit_code = serve::serve_until_signalled(*o, g.json);
  });
}

// A process that has run an embedded Python with a submission's extension loaded ends here: no
// static destructors, which would tear down CUDA and Python state that nobody needs any more.
[[noreturn]] void exit_without_teardown(int code) {
  std::fflush(nullptr);
  _exit(code);
}

void add_worker(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("__worker", "");
  cmd->group("");  // hidden: the sandbox starts it
  cmd->callback([&exit_code] { exit_code = sandbox::run_worker(3); });

  auto* build = app.add_subcommand("__build-extension", "");
  build->group("");  // hidden: a ModelNew's extension build (compile/extension_build.h) starts it
  build->callback([] { exit_without_teardown(compile::run_extension_build(std::cin)); });

  auto* prebuild = app.add_subcommand("__prebuild-modelnew", "");
  prebuild->group("");  // hidden: the build pass of kbench batch starts it
  auto file = std::make_shared<std::string>(), problem = std::make_shared<std::string>();
  auto report = std::make_shared<std::string>();
  auto options = std::make_shared<compile::ModelNewOptions>();
  prebuild->add_option("file", *file)->required();
  prebuild->add_option("problem_source", *problem)->required();
  prebuild->add_option("arch", options->arch)->required();
  prebuild->add_option("report", *report)->required();  // where the builds' records are written (JSON)
  prebuild->callback([file, problem, report, options] {
    options->problem_source = *problem;
    options->cache_dir = problems::cache_dir();
    options->extension_build = compile::requested_build_route();
    nlohmann::json builds = nlohmann::json::array();
    for (const auto& b : compile::prebuild_modelnew(*file, *options)) builds.push_back(b.to_json());
    std::ofstream(*report) << builds.dump() << "\n";
    exit_without_teardown(0);
  });
}

}  // namespace

std::string version_text() {
  const auto env = report::environment(0);
  std::ostringstream s;
  s << "kbench " << KBENCH_VERSION << "\nlibtorch " << env["libtorch"].get<std::string>()
    << (launch::built_with_cuda() ? " (CUDA)" : " (CPU only)") << "\nNVRTC " << env["nvrtc"].get<std::string>() << "\n";
  if (env["gpu"].is_null()) {
    s << "GPU: no GPU (" << env["gpu_absent"].get<std::string>() << ")";
  } else {
    s << "CUDA runtime " << env["cuda_runtime"].get<std::string>() << ", driver " << env["driver"].get<std::string>()
      << "\nGPU: " << env["gpu"].get<std::string>() << " (" << env["arch"].get<std::string>() << ")";
  }
  return s.str();
}

void add_commands(CLI::App& app, GlobalOptions& global, int& exit_code) {
  add_list(app, global, exit_code);
  add_show(app, global, exit_code);
  add_doctor(app, global, exit_code);
  add_eval(app, global, exit_code);
  add_baseline(app, global, exit_code);
  add_degenerate(app, global, exit_code);
  add_footprint(app, global, exit_code);
  add_batch(app, global, exit_code);
  add_report(app, global, exit_code);
  add_ci(app, global, exit_code);
  add_prompt(app, global, exit_code);
  add_serve(app, global, exit_code);
  add_worker(app, exit_code);
}

}  // namespace kbench::cli
