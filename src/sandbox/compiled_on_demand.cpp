#include "sandbox/compiled_on_demand.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <sys/wait.h>

#include "compile/child_process.h"
#include "compile/python_runtime.h"
#include "launch/cuda_driver.h"
#include "log/log.h"
#include "report/baselines.h"
#include "sandbox/gpu_lock.h"

namespace kbench::sandbox {
namespace {

// This process's environment, with inductor's artefacts kept beside the machine's record unless
// the user put them elsewhere.
std::vector<std::string> sitting_environment(const std::filesystem::path& record) {
  auto env = compile::current_environment();
  if (!std::getenv("TORCHINDUCTOR_CACHE_DIR")) env.push_back("TORCHINDUCTOR_CACHE_DIR=" + (record.parent_path() / "inductor").string());
  return env;
}

// A line of the sitting's --json output, for the log: "level2/19_x: figure (compiled 0.1 ms, ...)".
void log_progress(const std::string& line) {
  const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("status") || !j.contains("name")) return;
  log::info("compiled baseline on demand: level" + std::to_string(j.value("level", 0)) + "/" + j.value("name", "") + ": " +
            j.value("status", "") + " " + j.value("detail", ""));
}

}  // namespace

std::vector<std::string> compile_baselines_arguments(const std::filesystem::path& root, const std::filesystem::path& record,
                                                     const std::vector<int>& devices) {
  std::string ordinals, locks;
  for (int d : devices) {
    ordinals += (ordinals.empty() ? "" : ",") + std::to_string(d);
    locks += (locks.empty() ? "" : ",") + gpu_lock_path(d).string();
  }
  return {(root / "scripts" / "tools" / "compile_baselines.py").string(), "--path", "inductor", "--record", record.string(),
          "--devices", ordinals, "--gpu-locks", locks};
}

std::filesystem::path machine_compiled_record(const std::string& gpu_name) {
  return problems::cache_dir() / "compiled" / report::gpu_slug(gpu_name) / ("torch-" KBENCH_TORCH_VERSION) /
         ("kbench-" KBENCH_VERSION) / "compiled.json";
}

CompiledOnDemand::CompiledOnDemand(const problems::Catalog& catalog, std::string gpu_name, std::vector<int> devices)
    : catalog_(catalog), gpu_name_(std::move(gpu_name)), devices_(std::move(devices)),
      record_(machine_compiled_record(gpu_name_)) {}

CompiledOnDemand::~CompiledOnDemand() {
  if (sittings_.joinable()) sittings_.join();
}

std::optional<nlohmann::json> CompiledOnDemand::known(const problems::Problem& problem) {
  if (const auto it = found_.find(problem.key()); it != found_.end()) return it->second;
  std::optional<nlohmann::json> entry;
  const auto recorded = report::recorded_baseline(gpu_name_, "compiled", problem.level, problem.name);
  if (recorded && recorded->contains("mean"))
    entry = report::compiled_timing_entry(*recorded, "recorded in baselines/" + report::gpu_slug(gpu_name_) + "/compiled.json");
  else if (const auto made = report::baseline_entry_in(record_, problem.level, problem.name))
    entry = report::compiled_timing_entry(*made, "made on demand on this machine, kept in " + record_.string());
  if (entry) found_.emplace(problem.key(), *entry);
  return entry;
}

bool CompiledOnDemand::known(int level, int id) {
  const auto* problem = catalog_.find(level, id);
  std::lock_guard<std::mutex> lock(mutex_);
  return problem && known(*problem);
}

void CompiledOnDemand::make_ahead(const std::vector<std::pair<int, int>>& problems) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [level, id] : problems) {
    const auto* problem = catalog_.find(level, id);
    if (!problem || asked_.count(problem->key()) || known(*problem)) continue;
    asked_.insert(problem->key());
    queued_.push_back(problem);
  }
  if (!queued_.empty() && !running_) {
    if (sittings_.joinable()) sittings_.join();  // the last sitting's thread, which has finished
    running_ = true;
    sittings_ = std::thread(&CompiledOnDemand::run_sittings, this);
  }
}

nlohmann::json CompiledOnDemand::figure(int level, int id) {
  const auto* problem = catalog_.find(level, id);
  if (!problem) return {{"source", "none: no such problem in the catalog"}};
  make_ahead({{level, id}});
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (auto entry = known(*problem)) return *entry;
    const bool waiting = std::find(queued_.begin(), queued_.end(), problem) != queued_.end() || sitting_.count(problem);
    if (!waiting)
      return {{"source", "none: on demand, scripts/tools/compile_baselines.py recorded nothing for it (" + last_words_ + ")"}};
    changed_.wait_for(lock, std::chrono::seconds(1));
  }
}

void CompiledOnDemand::run_sittings() {
  const auto root = catalog_.root();
  for (;;) {
    std::vector<std::string> problems;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (queued_.empty()) {
        running_ = false;
        changed_.notify_all();
        return;
      }
      for (const auto* p : queued_) problems.push_back(p->spec());
      sitting_.insert(queued_.begin(), queued_.end());
      queued_.clear();
    }
    auto args = compile_baselines_arguments(root, record_, devices_);
    args.insert(args.end(), {"--json", "--log-dir", (record_.parent_path() / "logs").string(), "--problems"});
    args.insert(args.end(), problems.begin(), problems.end());
    compile::ChildOptions options;
    options.environment = sitting_environment(record_);
    options.working_directory = root.string();
    options.own_process_group = true;
    std::string last;
    options.on_line = [&](const std::string& line) {
      if (!line.empty()) last = line;
      log_progress(line);
      std::lock_guard<std::mutex> lock(mutex_);
      changed_.notify_all();
    };
    log::info("compiled baseline on demand: torch.compile for " + std::to_string(problems.size()) +
              " problem(s) on this machine, once; kept in " + record_.string());
    try {
      const auto result = compile::run_child(compile::python::executable(), args, options);
      if (!result.exited_cleanly())
        last = (WIFEXITED(result.status) ? "exit code " + std::to_string(WEXITSTATUS(result.status))
                                         : "ended by signal " + std::to_string(WTERMSIG(result.status))) + ": " + last;
    } catch (const std::exception& e) {
      last = e.what();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    last_words_ = last;
    sitting_.clear();
    changed_.notify_all();
  }
}

std::vector<std::shared_ptr<CompiledOnDemand>> compiled_makers(const problems::Catalog& catalog, const std::vector<int>& gpus) {
  std::vector<std::shared_ptr<CompiledOnDemand>> per_gpu;
  if (launch::device_count() == 0) return per_gpu;
  std::vector<std::string> model;
  std::map<std::string, std::vector<int>> devices_of;
  for (int g : gpus) model.push_back(launch::query_device(g).name), devices_of[model.back()].push_back(g);
  std::map<std::string, std::shared_ptr<CompiledOnDemand>> of_model;
  for (const auto& [name, devices] : devices_of) of_model[name] = std::make_shared<CompiledOnDemand>(catalog, name, devices);
  for (const auto& name : model) per_gpu.push_back(of_model.at(name));
  return per_gpu;
}

}  // namespace kbench::sandbox
