// kbench eval, batch and report: one submission, a directory of them, and their scores.
#include <array>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include "check/verdict.h"
#include "cli/command_support.h"
#include "cli/option_flags.h"
#include "compile/child_process.h"
#include "log/log.h"
#include "report/printers.h"
#include "report/records.h"
#include "report/scoring.h"
#include "sandbox/batch.h"
#include "sandbox/compiled_on_demand.h"
#include "sandbox/eval_options.h"
#include "serve/client.h"

namespace kbench::cli {
namespace {

using sandbox::Command;

// The profile needs the timed mean it is set beside; ncu needs a worker to start under it.
void check_profile_options(sandbox::EvalRequest& req, bool in_process) {
  req.profile = req.profile || req.ncu;
  if (req.profile && !req.time) throw CLI::ValidationError("--profile", "needs timing: drop --no-timing");
  if (req.ncu && in_process) throw CLI::ValidationError("--ncu", "runs a worker under Nsight Compute: drop --in-process");
}

// eval's exit code: 0 for correct (and for a compile-only run that compiled), 1 for any other verdict.
int eval_exit_code(const nlohmann::json& record, bool compile_only) {
  const auto verdict = report::verdict_of(record);
  if (verdict == check::Verdict::correct) return 0;
  if (verdict == check::Verdict::not_checked) return compile_only ? 0 : 2;
  return 1;
}

struct EvalCommand {
  sandbox::EvalSettings settings = sandbox::default_eval_settings();
  std::string out_file, server, token;
  bool in_process = false;
};

nlohmann::json evaluate_remotely(const EvalCommand& c) {
  const auto& req = c.settings.request;
  auto options = sandbox::options_of(c.settings);
  options["timing"] = timing::mode_name(req.timing.mode);  // eval's default, which a server's may differ from
  const nlohmann::json body = {{"source", read_text(req.submission)}, {"level", req.level}, {"problem", req.problem},
                               {"name", req.submission}, {"options", options}};
  return serve::evaluate_remote(c.server, !c.token.empty() ? c.token : env_or_empty("KBENCH_SERVE_TOKEN"), body);
}

// --compiled on-demand: the compiled baseline found or made before the worker starts
// (sandbox/compiled_on_demand.h). In a process of its own: finding the GPU's model starts CUDA, which
// a process that forks its worker must not.
nlohmann::json compiled_figure_for(const sandbox::EvalRequest& req, const GlobalOptions& g, bool in_process) {
  if (in_process) {
    const auto catalog = load_catalog(g);
    sandbox::CompiledOnDemand maker(catalog, gpu_for("eval", req.device).name, {req.device});
    return maker.figure(req.level, req.problem);
  }
  std::vector<std::string> args = {"__compiled-figure", std::to_string(req.level), std::to_string(req.problem),
                                   std::to_string(req.device)};
  if (!g.root.empty()) args.insert(args.end(), {"--root", g.root});
  compile::ChildOptions options;
  options.environment = compile::current_environment();
  std::string last;  // the figure, once the child is done; before that its progress, passed on
  options.on_line = [&last](const std::string& line) {
    if (!last.empty()) std::cerr << last << "\n";
    last = line;
  };
  const auto child = compile::run_child(compile::this_executable(), args, options);
  const auto figure = nlohmann::json::parse(last, nullptr, /*allow_exceptions=*/false);
  if (!child.exited_cleanly() || !figure.is_object()) return {{"source", "none: on demand: " + last}};
  return figure;
}

void add_compiled_figure(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("__compiled-figure", "");
  cmd->group("");  // hidden: eval's --compiled on-demand starts it
  auto at = std::make_shared<std::array<int, 3>>();  // level, problem, device
  cmd->add_option("level", (*at)[0])->required();
  cmd->add_option("problem", (*at)[1])->required();
  cmd->add_option("device", (*at)[2])->required();
  cmd->callback([&g, &exit_code, at] {
    const auto catalog = load_catalog(g);
    sandbox::CompiledOnDemand maker(catalog, gpu_for("eval --compiled on-demand", (*at)[2]).name, {(*at)[2]});
    std::cout << maker.figure((*at)[0], (*at)[1]).dump() << std::endl;
    exit_code = 0;
  });
}

void add_eval(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("eval", "compile a submission, check it against the reference (5 trials and 3 robustness "
                                         "trials), time it against eager and the compiled baseline, then the ablation run "
                                         "and the speedup audit; without a GPU, everything up to running the kernel");
  auto c = std::make_shared<EvalCommand>();
  auto& req = c->settings.request;
  cmd->add_option("submission", req.submission, "The submission: kbench's .cu, or KernelBench's ModelNew .py")
      ->required()->check(CLI::ExistingFile);
  add_problem_options(cmd, req.level, req.problem, /*required=*/true);
  add_evaluation_flags(cmd, c->settings, Command::eval);
  auto* device = cmd->add_option("--device", req.device, "the GPU's ordinal")->type_name("N")->capture_default_str();
  cmd->add_option("--out", c->out_file, "also write the JSON record to this file")->type_name("FILE");
  auto* in_process = cmd->add_flag("--in-process", c->in_process,
                                   "run in this process instead of a worker (debugging kbench itself; no isolation)");
  cmd->add_option("--server", c->server, "evaluate on a running kbench serve at this URL (e.g. http://127.0.0.1:8000); "
                                         "same output and exit codes")
      ->excludes(in_process)->excludes(device)->type_name("URL");
  cmd->add_option("--token", c->token, "the server's token")->type_name("T")->default_str("$KBENCH_SERVE_TOKEN");
  cmd->callback([&g, &exit_code, c] {
    apply_logging(g);
    auto& req = c->settings.request;
    req.root = g.root;
    check_profile_options(req, c->in_process);
    nlohmann::json record;
    if (!c->server.empty()) {
      record = evaluate_remotely(*c);
    } else {
      load_catalog(g).get(req.level, req.problem);  // problem errors are the user's: say so before spending a worker
      if (req.compiled == "on-demand" && req.time && !req.compile_only && launch::built_with_cuda())
        req.compiled_figure = compiled_figure_for(req, g, c->in_process);
      record = c->in_process ? sandbox::evaluate(req)
                             : sandbox::evaluate_isolated(req, c->settings.budgets, sandbox::kForkWithoutExec);
    }
    if (record.contains("error")) throw std::runtime_error(record["error"].get<std::string>());
    if (!c->out_file.empty()) std::ofstream(c->out_file) << record.dump(2) << "\n";
    std::cout << (g.json ? record.dump(2) + "\n" : report::eval_summary(record));
    exit_code = eval_exit_code(record, req.compile_only);
  });
}

// --shard i/n into the batch's options; throws a usage error for anything else.
void parse_shard(const std::string& shard, sandbox::BatchOptions& o) {
  const auto slash = shard.find('/');
  try {
    o.shard_index = std::stoi(shard.substr(0, slash));
    o.shard_count = std::stoi(shard.substr(slash + 1));
  } catch (const std::exception&) {
    o.shard_count = 0;
  }
  if (slash == std::string::npos || o.shard_count < 1 || o.shard_index < 0 || o.shard_index >= o.shard_count)
    throw CLI::ValidationError("--shard", "expected i/n with 0 <= i < n, e.g. 3/8");
}

// batch --build-only's ModelNew files: how many extensions were built by which route, and those
// that failed (their logs are in the cache; the evaluation reports them).
void print_extension_builds(const nlohmann::json& files) {
  if (files.empty()) return;
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
  std::printf("ModelNew extensions: %d built by kbench's fast route, %d by PyTorch's, %d found in the cache; %zu failed\n",
              counts["fast"], counts["pytorch"], counts["cached"], failed.size());
  for (const auto& f : failed) std::printf("  %s\n", f.c_str());
}

void print_batch_summary(const sandbox::BatchSummary& summary, const sandbox::BatchOptions& o) {
  std::printf("%d submissions found (%d unmatched names), %d in this shard: ", summary.discovered, summary.unmatched,
              summary.in_shard);
  if (o.build_only) {
    std::printf("compiled into the caches in %.1f s on %d threads (--build-only: nothing evaluated)\n", summary.compile_s,
                summary.compile_threads);
    print_extension_builds(summary.builds);
    return;
  }
  std::printf("%d evaluated, %d duplicates, %d already done\n", summary.evaluated, summary.duplicates, summary.resumed);
  std::printf("wall %.1f s; NVRTC and extension builds ahead of the GPUs %.1f s on %d threads;", summary.wall_s,
              summary.compile_s, summary.compile_threads);
  for (size_t i = 0; i < summary.gpu_busy_s.size(); ++i)
    std::printf(" GPU %zu busy %.1f s (idle %.1f s);", i, summary.gpu_busy_s[i], summary.wall_s - summary.gpu_busy_s[i]);
  std::printf("\nresults: %s (kbench report %s)\n", o.out.c_str(), o.out.c_str());
}

struct BatchCommand {
  sandbox::BatchOptions options;
  sandbox::EvalSettings settings = sandbox::default_eval_settings();
  std::string dir, out, shard;
};

void add_batch(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("batch", "evaluates a directory of submissions on every GPU, resumably, one JSON line per "
                                          "submission");
  auto c = std::make_shared<BatchCommand>();
  auto& o = c->options;
  cmd->add_option("dir", c->dir, "Directory of submissions (level_<L>_problem_<P>_sample_<S>_kernel.cu or .py, or "
                                 "level<L>/<P>/*.cu or .py)")
      ->required()->check(CLI::ExistingDirectory);
  cmd->add_option("--out", c->out, "the results file, one JSON line per submission")
      ->type_name("FILE")->default_str("<dir>/kbench-results.jsonl");
  cmd->add_option("--gpus", o.gpus, "the GPUs' ordinals")->delimiter(',')->type_name("N,N")->default_str("all visible");
  cmd->add_option("--shard", c->shard, "evaluate only shard i of n (0-based), e.g. a Slurm array task")->type_name("i/n");
  cmd->add_option("--compile-threads", o.compile_threads, "cores for compiling ahead: N NVRTC compiles at once, up to 2N ModelNew build passes sharing them")
      ->type_name("N")->default_str("all cores");
  cmd->add_flag("--build-only", o.build_only,
                "compile every submission (NVRTC, ModelNew extensions) into the caches and stop: no GPU needed");
  // A batch makes the compiled baselines its GPUs lack ahead of them, once per machine and problem.
  c->settings.request.compiled = "on-demand";
  add_evaluation_flags(cmd, c->settings, Command::batch);
  cmd->callback([&g, &exit_code, c] {
    apply_logging(g);
    auto& o = c->options;
    o.dir = c->dir;
    o.base = c->settings.request;
    o.budgets = c->settings.budgets;
    o.base.root = g.root;
    check_profile_options(o.base, false);
    o.worker_exe = compile::this_executable();
    o.progress = !g.json && g.verbosity >= 0;
    if (!c->shard.empty()) parse_shard(c->shard, o);
    const std::string suffix =
        o.shard_count > 1 ? ".shard-" + std::to_string(o.shard_index) + "-of-" + std::to_string(o.shard_count) : "";
    o.out = !c->out.empty() ? std::filesystem::path(c->out) : std::filesystem::path(c->dir) / ("kbench-results" + suffix + ".jsonl");
    const auto found = sandbox::discover(o.dir);
    for (const auto& u : found.unmatched) log::warn("not a submission name kbench knows, skipped: " + u);
    const auto summary = sandbox::run_batch(o);
    if (g.json) {
      auto j = summary.to_json();
      if (!o.build_only) j["results"] = o.out.string(), j["unmatched_files"] = found.unmatched;
      std::cout << j.dump(2) << "\n";
    } else {
      print_batch_summary(summary, o);
    }
    exit_code = 0;
  });
}

void add_report(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("report", "fast_p, pass@k and speedups from result files (.jsonl from batch, or eval "
                                           "records .json; shards are merged)");
  auto files = std::make_shared<std::vector<std::string>>();
  auto markdown = std::make_shared<std::string>(), svg = std::make_shared<std::string>();
  auto include_flagged = std::make_shared<bool>(false);
  cmd->add_option("results", *files, "Result files (.jsonl) from kbench batch, or eval records (.json)")
      ->required()->check(CLI::ExistingFile);
  cmd->add_option("--markdown", *markdown, "also write the table as Markdown to this file")->type_name("FILE");
  cmd->add_option("--svg", *svg, "also write the fast_p-against-p plot to this SVG file")->type_name("FILE");
  cmd->add_flag("--include-flagged", *include_flagged,
                "count speedups the audit flagged (faster than the problem's memory traffic allows) in fast_p");
  cmd->callback([&g, &exit_code, files, markdown, svg, include_flagged] {
    apply_logging(g);
    auto records = report::read_records(*files);
    if (records.empty()) throw std::runtime_error("no result records in the given files");
    std::map<int, int> sizes;
    const auto catalog = load_catalog(g);  // named: a range-for over a temporary's all() would read a destroyed vector
    for (const auto& p : catalog.all()) ++sizes[p.level];
    const auto run = report::score_run(std::move(records), sizes, *include_flagged);
    std::cout << report::make_printer(g.json ? "json" : "terminal")->render(run);
    if (!markdown->empty()) std::ofstream(*markdown) << report::make_printer("markdown")->render(run);
    if (!svg->empty()) std::ofstream(*svg) << report::make_printer("svg")->render(run);
    exit_code = 0;
  });
}

}  // namespace

void add_evaluation_commands(CLI::App& app, GlobalOptions& g, int& exit_code) {
  add_eval(app, g, exit_code);
  add_compiled_figure(app, g, exit_code);
  add_batch(app, g, exit_code);
  add_report(app, g, exit_code);
}

}  // namespace kbench::cli
