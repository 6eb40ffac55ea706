// kbench ci and serve, and the hidden commands that kbench starts in processes of its own.
#include <fstream>
#include <iostream>
#include <memory>
#include <unistd.h>

#include "cli/command_support.h"
#include "cli/option_flags.h"
#include "compile/build_forks.h"
#include "compile/build_pass_forks.h"
#include "compile/child_process.h"
#include "compile/extension_build.h"
#include "compile/modelnew.h"
#include "sandbox/ci_run.h"
#include "sandbox/worker.h"
#include "serve/server.h"

namespace kbench::cli {
namespace {

using sandbox::Command;

void print_ci(const sandbox::CiOutcome& outcome) {
  std::cout << report::regression_table(outcome.rows);
  std::printf("%zu kernels, %d regressed", outcome.rows.size(), outcome.regressed);
  if (outcome.refused) std::printf(", %d refused by --torch-ops forbid", outcome.refused);
  if (!outcome.gpu_present)
    std::printf(", %d not run (no GPU: compiled and checked signatures and host programs only)", outcome.skipped);
  std::printf("\n");
}

void add_ci(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("ci", "re-evaluates the reference kernels (or DIR's); exit 1 on a changed verdict or a "
                                       "slower kernel");
  auto o = std::make_shared<sandbox::CiOptions>();
  o->settings = sandbox::default_eval_settings();
  auto dir = std::make_shared<std::string>(), recorded = std::make_shared<std::string>(), out = std::make_shared<std::string>();
  cmd->add_option("dir", *dir, "Kernel collection (default: the project's levelN/<id>_<Name>.cu)")->check(CLI::ExistingDirectory);
  cmd->add_option("--recorded", *recorded, "the recorded results to compare with")
      ->type_name("FILE")->default_str("results/ci/<gpu>.json");
  cmd->add_flag("--record", o->record, "write this run's results as the new record");
  cmd->add_option("--out", *out, "keep this run's evaluation records (JSON lines) in this file")->type_name("FILE");
  add_evaluation_flags(cmd, o->settings, Command::ci);
  cmd->callback([&g, &exit_code, o, dir, recorded, out] {
    apply_logging(g);
    o->root = g.root;
    o->dir = *dir, o->recorded = *recorded, o->out = *out;
    o->progress = !g.json && g.verbosity >= 0;
    o->worker_exe = compile::this_executable();
    const auto outcome = sandbox::run_ci(*o);
    if (g.json) std::cout << outcome.to_json().dump(2) << "\n";
    else print_ci(outcome);
    if (o->record) std::printf("recorded %s\n", outcome.recorded.c_str());
    exit_code = outcome.regressed ? 1 : 0;
  });
}

void add_serve(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("serve", "evaluations over HTTP (POST /v1/eval), one warm worker per GPU: for RL and "
                                          "agent loops");
  auto o = std::make_shared<serve::ServeOptions>();
  o->defaults = sandbox::default_eval_settings();
  // Throughput first: adaptive timing agrees with every trial's figure to 0.1-0.3 % at the median
  // (README, Options) and stops sooner. eval, batch and ci keep KernelBench's fixed count.
  o->defaults.request.timing.mode = timing::TimingMode::adaptive;
  auto max_source_kib = std::make_shared<size_t>(1024);
  cmd->add_option("--host", o->host, "the address to listen on (set --token to listen elsewhere)")
      ->type_name("ADDR")->capture_default_str();
  cmd->add_option("--port", o->port, "the port (0: any free port, printed)")
      ->check(CLI::Range(0, 65535))->type_name("N")->capture_default_str();
  cmd->add_option("--gpus", o->service.gpus, "the GPUs' ordinals")->delimiter(',')->type_name("N,N")->default_str("all visible");
  cmd->add_option("--token", o->token, "require \"Authorization: Bearer T\" on every request")
      ->type_name("T")->default_str("$KBENCH_SERVE_TOKEN");
  cmd->add_option("--max-queue", o->service.max_queue, "evaluations admitted at once, waiting or running; more get 429")
      ->check(CLI::Range(1, 4096))->type_name("N")->capture_default_str();
  cmd->add_option("--max-source-kib", *max_source_kib, "the largest source accepted, in KiB; larger get 413")
      ->check(CLI::Range(1, 65536))->type_name("N")->capture_default_str();
  cmd->add_option("--compile-threads", o->service.compile_threads, "cores for compiling ahead: N NVRTC compiles at once, up to 2N ModelNew build passes sharing them")->type_name("N")->default_str("all cores");
  cmd->add_option("--max-connections", o->connections.max_connections, "connections open at once; more get 503")
      ->check(CLI::Range(1, 65536))->type_name("N")->capture_default_str();
  cmd->add_option("--max-connections-per-client", o->connections.max_per_client,
                  "connections open at once from one address; more get 429")
      ->check(CLI::Range(1, 65536))->type_name("N")->capture_default_str();
  cmd->add_option("--request-deadline", o->connections.request_deadline_s,
                  "seconds a client has to send a request's headers and body; then its connection is closed")
      ->check(CLI::Range(1.0, 3600.0))->type_name("S")->capture_default_str();
  add_evaluation_flags(cmd, o->defaults, Command::serve);  // every request's defaults; budgets are its ceilings
  cmd->callback([&g, &exit_code, o, max_source_kib] {
    apply_logging(g);
    o->root = g.root;
    o->defaults.request.root = g.root;
    o->max_source_bytes = *max_source_kib << 10;
    if (o->token.empty()) o->token = env_or_empty("KBENCH_SERVE_TOKEN");
    o->service.worker_exe = compile::this_executable();
    exit_code = serve::serve_until_signalled(*o, g.json);
  });
}

// A process that has run an embedded Python with a submission's extension loaded ends here: no
// static destructors, which would tear down CUDA and Python state that nobody needs any more.
[[noreturn]] void exit_without_teardown(int code) {
  std::fflush(nullptr);
  _exit(code);
}

// A ModelNew file's build pass (sandbox/compile_ahead.h), its `arguments` the file, its problem's
// source, the architecture and where the builds' records go (JSON): the file imported, its
// extensions built, their records written. Python has started, and no submission code has run.
int run_build_pass(const std::vector<std::string>& arguments) {
  compile::ModelNewOptions options;
  options.problem_source = arguments.at(1);
  options.arch = arguments.at(2);
  options.cache_dir = problems::cache_dir();
  options.extension_build = compile::requested_build_route();
  try {
    // Python started before the file runs, so that its builds fork from a copy made now (where
    // none can be made, they start fresh processes: their records say which)
    compile::start_python(/*with_cuda=*/false);
    compile::start_build_forks();
  } catch (const std::exception&) {
    // prebuild_modelnew meets the same failure and leaves it to the evaluation
  }
  nlohmann::json builds = nlohmann::json::array();
  for (const auto& b : compile::prebuild_modelnew(arguments.at(0), options)) builds.push_back(b.to_json());
  compile::stop_build_forks();
  std::ofstream(arguments.at(3)) << builds.dump() << "\n";
  return 0;
}

void add_workers(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("__worker", "");
  cmd->group("");  // hidden: the sandbox starts it
  cmd->callback([&exit_code] { exit_code = sandbox::run_worker(3); });

  auto* build = app.add_subcommand("__build-extension", "");
  build->group("");  // hidden: a ModelNew's extension build (compile/extension_build.h) starts it
  build->callback([] { exit_without_teardown(compile::run_extension_build(std::cin)); });

  auto* prebuild = app.add_subcommand("__prebuild-modelnew", "");
  prebuild->group("");  // hidden: the build pass of kbench batch and serve starts it
  auto arguments = std::make_shared<std::vector<std::string>>();
  prebuild->add_option("arguments", *arguments)->expected(4)->required();  // file, problem source, arch, report
  prebuild->callback([arguments] { exit_without_teardown(run_build_pass(*arguments)); });

  auto* passes = app.add_subcommand("__build-pass-server", "");
  passes->group("");  // hidden: the build passes fork from it (compile/build_pass_forks.h)
  passes->callback([] {
    try {
      compile::start_python(/*with_cuda=*/false);
    } catch (const std::exception&) {
      exit_without_teardown(1);  // its parent starts fresh processes instead
    }
    exit_without_teardown(compile::serve_build_passes(3, [](const std::vector<std::string>& a) {
      return a.size() == 5 && a[0] == "__prebuild-modelnew" ? run_build_pass({a.begin() + 1, a.end()}) : 2;
    }));
  });
}

}  // namespace

void add_service_commands(CLI::App& app, GlobalOptions& g, int& exit_code) {
  add_ci(app, g, exit_code);
  add_serve(app, g, exit_code);
  add_workers(app, exit_code);
}

}  // namespace kbench::cli
