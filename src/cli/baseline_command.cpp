// kbench baseline: this GPU's eager and compiled baselines of every problem, in KernelBench's layout
// (baselines/<gpu>/{eager,compiled}.json), resumably: a problem already recorded on this GPU model
// with this PyTorch is skipped, so a run cut short goes on where it stopped. Several GPUs of one
// model share the problems. Eager figures are timed here (one process per GPU); compiled ones by
// scripts/tools/compile_baselines.py (torch.compile, inductor's default mode), which spreads its
// compiles over the cores and its timings over the GPUs.
#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "cli/command_support.h"
#include "compile/child_process.h"
#include "compile/file_lock.h"
#include "compile/python_runtime.h"
#include "report/baselines.h"
#include "sandbox/compiled_on_demand.h"
#include "sandbox/gpu_lock.h"
#include "sandbox/gpu_runner.h"
#include "timing/reference_timing.h"

namespace kbench::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct BaselineCommand {
  int level = 0, id = 0;
  std::vector<int> gpus;
  std::string only;
  std::vector<std::string> share;  // a child's problems ("L:P"), given by the parent that split the sweep
  bool redo = false, retry_failed = false, no_record = false;
  double time_limit_s = 0;  // 0: none
  timing::TimingOptions timing;
  Clock::time_point start = Clock::now();

  // Seconds left under --time-limit (a large number without one).
  double left_s() const {
    return time_limit_s > 0 ? time_limit_s - std::chrono::duration<double>(Clock::now() - start).count() : 1e9;
  }
};

// "[12/250, 3.1 s each, about 12 min left]": where a sweep stands, from its pace so far.
std::string progress_text(size_t done, size_t total, Clock::time_point start) {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count(), each = elapsed / done;
  char text[96];
  std::snprintf(text, sizeof text, "[%zu/%zu, %.1f s each, about %.0f min left]", done, total, each,
                each * static_cast<double>(total - done) / 60.0);
  return text;
}

// An eager entry of `eager` (eager.json as read) made on this GPU model with this PyTorch: nothing to redo.
bool recorded_here(const nlohmann::json& eager, const std::string& gpu_name, const problems::Problem& p) {
  const auto entry = report::baseline_entry(eager, p.level, p.name);
  return entry && entry->value("torch", "") == KBENCH_TORCH_VERSION && entry->value("hardware", "") == gpu_name;
}

// The eager sweep of one GPU: each problem of `todo` timed while this process holds the GPU's lock,
// and recorded as soon as it is timed. Returns how many failed.
int time_eager(const std::vector<const problems::Problem*>& todo, int gpu, const std::string& gpu_name,
               const BaselineCommand& c) {
  int failed = 0;
  const auto start = Clock::now();
  for (size_t i = 0; i < todo.size(); ++i) {
    if (c.left_s() <= 0) {
      std::printf("GPU %d  --time-limit reached: %zu problem(s) left for the next run\n", gpu, todo.size() - i);
      break;
    }
    const auto& p = *todo[i];
    std::string line;
    try {
      const compile::FileLock lock(sandbox::gpu_lock_path(gpu));
      const sandbox::QuietLock quiet(gpu, sandbox::QuietLock::For::timing);
      const auto t = timing::time_reference(p, gpu, c.timing);
      if (!c.no_record)
        report::record_baseline(gpu_name, "eager", p.level, p.name,
                                timing::baseline_entry(t.forward, gpu_name, gpu, "eager, timed from C++ (kbench baseline)"));
      char text[128];
      std::snprintf(text, sizeof text, "eager %10.4f ms (cv %.3f; load %.0f ms)", t.forward.stats.mean, t.forward.stats.cv,
                    t.load_ms);
      line = text;
    } catch (const std::exception& e) {
      ++failed;
      const std::string what = e.what();
      line = "FAILED: " + what.substr(0, what.find('\n'));
    }
    std::printf("GPU %d  L%d %3d %-52s %s  %s\n", gpu, p.level, p.id, p.name.c_str(), line.c_str(),
                progress_text(i + 1, todo.size(), start).c_str());
    std::fflush(stdout);
  }
  return failed;
}

// The eager sweep over several GPUs: one kbench process per GPU, each with every n-th problem of
// `todo`, which the parent alone decides (a resumed sweep's problems are split evenly, whichever GPU
// timed those already recorded).
int time_eager_on_gpus(const std::vector<const problems::Problem*>& todo, const BaselineCommand& c,
                       const GlobalOptions& g) {
  std::vector<std::thread> children;
  std::mutex output;
  int failed = 0;
  for (size_t i = 0; i < c.gpus.size() && i < todo.size(); ++i)
    children.emplace_back([&, i] {
      std::string share;
      for (size_t k = i; k < todo.size(); k += c.gpus.size())
        share += (share.empty() ? "" : ",") + todo[k]->spec();
      std::vector<std::string> args = {"baseline", "--only", "eager", "--gpus", std::to_string(c.gpus[i]), "--share",
                                       share, "--trials", std::to_string(c.timing.trials), "--warmup",
                                       std::to_string(c.timing.warmup)};
      if (c.no_record) args.push_back("--no-record");
      if (c.time_limit_s > 0) args.insert(args.end(), {"--time-limit", std::to_string(std::max(1.0, c.left_s()))});
      if (!g.root.empty()) args.insert(args.end(), {"--root", g.root});
      compile::ChildOptions options;
      options.environment = compile::current_environment();
      options.on_line = [&output](const std::string& line) {
        std::lock_guard<std::mutex> lock(output);
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
      };
      const auto child = compile::run_child(compile::this_executable(), args, options);
      std::lock_guard<std::mutex> lock(output);
      if (!child.exited_cleanly()) ++failed;
    });
  for (auto& t : children) t.join();
  return failed;
}

// The compiled sweep: scripts/tools/compile_baselines.py over the problems without a figure made with
// this PyTorch, on every GPU of the run, its progress passed on. Returns its exit status.
int make_compiled(const std::vector<const problems::Problem*>& selection, const std::string& gpu_name,
                  const BaselineCommand& c, const problems::Catalog& catalog) {
  const auto record = c.no_record ? sandbox::machine_compiled_record(gpu_name) : report::baseline_file(gpu_name, "compiled");
  auto args = sandbox::compile_baselines_arguments(catalog.root(), record, c.gpus);
  if (c.redo) args.push_back("--force");
  if (c.retry_failed) args.push_back("--retry-failed");
  if (c.time_limit_s > 0) {  // what runs at the limit is killed unrecorded: start nothing in its last two minutes
    const double left = std::max(1.0, c.left_s());
    args.insert(args.end(), {"--time-limit-s", std::to_string(left), "--deadline-s", std::to_string(std::max(left / 2, left - 120))});
  }
  args.push_back("--problems");
  for (const auto* p : selection) args.push_back(p->spec());
  compile::ChildOptions options;
  options.environment = compile::current_environment();
  options.working_directory = catalog.root().string();
  options.own_process_group = true;
  options.on_line = [](const std::string& line) {
    if (line.rfind("recorded ", 0) == 0 || line.rfind("has-reason ", 0) == 0) return;  // done before: the count says
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  std::printf("compiled: torch.compile (inductor, default mode) of %zu problem(s) on %zu GPU(s), into %s\n",
              selection.size(), c.gpus.size(), record.c_str());
  std::fflush(stdout);
  const auto child = compile::run_child(compile::python::executable(), args, options);
  size_t reasons = 0;
  const auto recorded = report::read_baseline_file(record);
  for (const auto* p : selection)
    if (const auto entry = report::baseline_entry(recorded, p->level, p->name); entry && !entry->contains("mean")) ++reasons;
  if (reasons && !c.retry_failed)
    std::printf("compiled: %zu problem(s) have a reason and no figure (each entry says why); --retry-failed tries them "
                "again\n", reasons);
  return child.exited_cleanly() ? 0 : 1;
}

void run_baseline(BaselineCommand& c, const GlobalOptions& g, int& exit_code) {
  c.gpus = sandbox::gpus_to_use(c.gpus);
  const auto gpu_name = gpu_for("baseline", c.gpus.front()).name;
  for (int d : c.gpus)
    if (const auto other = gpu_for("baseline", d).name; other != gpu_name)
      throw CLI::ValidationError("--gpus", "GPU " + std::to_string(d) + " is an " + other + ", GPU " +
                                               std::to_string(c.gpus.front()) + " an " + gpu_name +
                                               ": a baseline is one model's; run once per model");
  const auto catalog = load_catalog(g);
  std::vector<const problems::Problem*> selection;
  for (const auto& p : catalog.all())
    if ((!c.level || p.level == c.level) && (!c.id || p.id == c.id)) selection.push_back(&p);
  if (selection.empty()) throw CLI::ValidationError("--problem", "no such problem in the catalog");
  int failed = 0;
  if (!c.share.empty()) {  // a child of the eager sweep: exactly the problems its parent gave it
    std::vector<const problems::Problem*> todo;
    for (const auto& key : c.share) {
      int level = 0, id = 0;
      const auto* p = std::sscanf(key.c_str(), "%d:%d", &level, &id) == 2 ? catalog.find(level, id) : nullptr;
      if (!p) throw CLI::ValidationError("--share", "no problem " + key + " in the catalog");
      todo.push_back(p);
    }
    exit_code = time_eager(todo, c.gpus.front(), gpu_name, c) ? 1 : 0;
    return;
  }
  if (c.only != "compiled") {
    std::vector<const problems::Problem*> todo;
    const auto eager = report::read_baseline_file(report::baseline_file(gpu_name, "eager"));
    for (const auto* p : selection)
      if (c.redo || !recorded_here(eager, gpu_name, *p)) todo.push_back(p);
    std::printf("eager: %zu problem(s) to time on %zu GPU(s), %zu already recorded on this GPU model with torch %s\n",
                todo.size(), c.gpus.size(), selection.size() - todo.size(), KBENCH_TORCH_VERSION);
    std::fflush(stdout);
    failed += c.gpus.size() > 1 ? time_eager_on_gpus(todo, c, g) : time_eager(todo, c.gpus.front(), gpu_name, c);
  }
  if (c.only != "eager" && c.left_s() > 0) failed += make_compiled(selection, gpu_name, c, catalog);
  std::printf("baseline: %.0f s; %s\n", std::chrono::duration<double>(Clock::now() - c.start).count(),
              c.no_record ? "eager figures printed only; compiled ones in this machine's cache"
                          : ("recorded in " + report::baseline_file(gpu_name, "eager").parent_path().string()).c_str());
  exit_code = failed ? 1 : 0;
}

}  // namespace

void add_baseline_command(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("baseline", "(GPU) records this GPU's eager and torch.compile baselines of every problem "
                                             "in baselines/<gpu>/, resumably: problems recorded on this GPU model with "
                                             "this PyTorch are skipped");
  auto c = std::make_shared<BaselineCommand>();
  add_problem_options(cmd, c->level, c->id, /*required=*/false);
  cmd->add_option("--gpus", c->gpus, "the GPUs' ordinals")->delimiter(',')->type_name("N,N")->default_str("all visible");
  cmd->add_option("--only", c->only, "only the eager or only the compiled baselines")
      ->check(CLI::IsMember({"eager", "compiled"}))->type_name("KIND")->default_str("both");
  cmd->add_flag("--redo", c->redo, "measure again the problems already recorded");
  cmd->add_flag("--retry-failed", c->retry_failed, "make again the compiled baselines recorded with a reason and no "
                                                   "figure (a compile past its limit, a crash)");
  cmd->add_option("--trials", c->timing.trials, "timed trials per problem")
      ->check(CLI::Range(1, 100000))->type_name("N")->capture_default_str();
  cmd->add_option("--warmup", c->timing.warmup, "warm-up runs before timing")
      ->check(CLI::Range(0, 10000))->type_name("N")->capture_default_str();
  cmd->add_flag("--no-record", c->no_record, "leave baselines/ untouched: eager figures printed only, compiled ones kept "
                                             "in this machine's cache (as --compiled on-demand makes them)");
  cmd->add_option("--time-limit", c->time_limit_s, "start no problem after this many seconds (the next run goes on "
                                                   "from there), e.g. within a job's wall time")
      ->check(CLI::PositiveNumber)->type_name("S")->default_str("none");
  cmd->add_option("--share", c->share)->delimiter(',')->group("");  // L:P,...: one GPU's problems of a split eager sweep
  cmd->callback([&g, &exit_code, c] {
    apply_logging(g);
    c->start = Clock::now();
    run_baseline(*c, g, exit_code);
  });
}

}  // namespace kbench::cli
