#include "sandbox/ci_run.h"

#include <fstream>
#include <unistd.h>

#include "compile/submission.h"
#include "launch/cuda_driver.h"
#include "problems/catalog.h"
#include "report/baselines.h"
#include "report/records.h"
#include "sandbox/batch.h"

namespace kbench::sandbox {
namespace {

nlohmann::json read_json(const std::filesystem::path& file) { return nlohmann::json::parse(compile::file_bytes(file)); }

// This GPU's record; without a GPU, every GPU's (compile-side verdicts are the same on all).
nlohmann::json recorded_results(const std::filesystem::path& file, const std::filesystem::path& all_gpus, bool gpu_present) {
  nlohmann::json recorded = nlohmann::json::object();
  if (std::filesystem::exists(file)) return read_json(file);
  if (!gpu_present && std::filesystem::is_directory(all_gpus))
    for (const auto& entry : std::filesystem::directory_iterator(all_gpus))
      if (entry.path().extension() == ".json") recorded.update(read_json(entry.path()));
  return recorded;
}

}  // namespace

nlohmann::json CiOutcome::to_json() const {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& r : rows) kernels.push_back(r.to_json());
  return {{"kernels", kernels}, {"regressed", regressed}, {"refused", refused}, {"gpu", gpu_present}};
}

CiOutcome run_ci(const CiOptions& options) {
  if (options.record && options.settings.request.check.forbid_torch_ops)
    throw std::runtime_error("--record keeps kbench's own policy: run it without --torch-ops forbid");
  const auto root = problems::project_root(options.root);
  auto gpu = launch::query_device(0);
  if (options.settings.request.compile_only) {
    gpu = launch::DeviceInfo{};
    gpu.why_absent = "--compile-only";
  }
  if (options.record && !gpu.present) throw std::runtime_error("--record needs a GPU: a record holds verdicts and timings");

  BatchOptions batch;
  batch.base = options.settings.request;
  batch.budgets = options.settings.budgets;
  batch.base.root = options.root;
  batch.base.compile_only = !gpu.present;
  batch.dir = options.dir.empty() ? root : options.dir;
  // Without `out` the records are only the comparison's input: a scratch file, removed after.
  batch.out = !options.out.empty() ? options.out
                                   : std::filesystem::temp_directory_path() / ("kbench-ci-" + std::to_string(::getpid()) + ".jsonl");
  std::filesystem::remove(batch.out);  // a batch's output resumes; a ci run starts afresh
  batch.progress = options.progress;
  batch.worker_exe = options.worker_exe;
  run_batch(batch);
  const auto records = report::read_records({batch.out.string()});  // sorted by kernel file
  if (options.out.empty()) std::filesystem::remove(batch.out);

  CiOutcome outcome;
  outcome.gpu_present = gpu.present;
  outcome.recorded = !options.recorded.empty()
                         ? options.recorded
                         : root / "results" / "ci" / (report::gpu_slug(gpu.present ? gpu.name : "") + ".json");
  outcome.rows = report::compare_with_recorded(recorded_results(outcome.recorded, root / "results" / "ci", gpu.present),
                                               records, gpu.present);
  for (const auto& r : outcome.rows) {
    outcome.regressed += r.status == report::RegressionStatus::regressed;
    outcome.skipped += r.status == report::RegressionStatus::skipped;
    outcome.refused += r.status == report::RegressionStatus::refused;
  }
  if (options.record) {
    std::filesystem::create_directories(outcome.recorded.parent_path());
    std::ofstream(outcome.recorded) << report::to_recorded(records).dump(2) << "\n";
  }
  return outcome;
}

}  // namespace kbench::sandbox
