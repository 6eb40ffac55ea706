// kbench degenerate and footprint: facts measured problem by problem on a GPU, each problem on its
// own (one that fails gets a FAILED line, and the sweep goes on). kbench baseline: baseline_command.cpp.
#include <functional>
#include <iostream>
#include <memory>

#include "check/degenerate.h"
#include "check/footprint.h"
#include "check/memory_guard.h"
#include "cli/command_support.h"
#include "compile/submission.h"
#include "log/number_text.h"
#include "problems/reference.h"
#include "sandbox/evaluation.h"

namespace kbench::cli {
namespace {

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
// problem's row and returns what its line says after the problem's name. Returns the rows; `failed`
// counts the errors.
nlohmann::json sweep_problems(const problems::Catalog& catalog, int level, int id, bool json, int& failed,
                              const std::function<std::string(const problems::Problem&, nlohmann::json& row)>& measure) {
  nlohmann::json rows = nlohmann::json::array();
  failed = 0;
  for (const auto& p : catalog.all()) {
    if ((level && p.level != level) || (id && p.id != id)) continue;
    nlohmann::json row = {{"level", p.level}, {"id", p.id}, {"name", p.name}};
    std::string line;
    try {
      line = measure(p, row);
    } catch (const std::exception& e) {
      ++failed;
      const std::string what = e.what();
      row["error"] = what.substr(0, what.find('\n'));
      line = "FAILED: " + row["error"].get<std::string>();
    }
    if (!json) std::printf("L%d %3d %-56s %s\n", p.level, p.id, p.name.c_str(), line.c_str());
    std::fflush(stdout);
    rows.push_back(row);
  }
  return rows;
}

// The commands that measure a fact per problem on a GPU: which problems, which GPU, and (degenerate,
// footprint) whether to record what they measure in their file under problems/.
struct ProblemSweep {
  int level = 0, id = 0, device = 0;
  bool write = false;
};

void add_sweep_options(CLI::App* cmd, ProblemSweep& sweep, bool writes) {
  add_problem_options(cmd, sweep.level, sweep.id, /*required=*/false);
  add_device_option(cmd, sweep.device);
  if (writes) cmd->add_flag("--write", sweep.write, "record each problem in problems/<command>.json as it is measured");
}

void add_degenerate(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("degenerate", "(GPU) finds problems whose check a constant or zeros would pass; --write "
                                               "records problems/degenerate.json");
  auto sweep = std::make_shared<ProblemSweep>();
  add_sweep_options(cmd, *sweep, /*writes=*/true);
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
      char kinds[64];
      std::snprintf(kinds, sizeof kinds, "%-40s ", entry["kinds"].dump().c_str());
      return kinds + entry["note"].get<std::string>();
    });
    if (g.json) std::cout << nlohmann::json{{"gpu", gpu.name}, {"problems", rows}}.dump(2) << "\n";
    else std::printf("%zu problems, %d degenerate, %d failed%s\n", rows.size(), degenerate, failed, file.written().c_str());
    exit_code = failed ? 1 : 0;
  });
}

// One problem's footprint. Out of memory under the limit is a measurement (it needs more); any other
// error is the sweep's.
nlohmann::json footprint_under_limit(const problems::Problem& p, int device, int64_t limit_bytes, bool offload) {
  try {
    problems::Reference reference(p, torch::Device(torch::kCUDA, device));
    return check::to_json(check::measure_footprint(reference, 1, offload));
  } catch (const std::exception& e) {
    if (limit_bytes == 0 || !check::is_out_of_memory(e.what())) throw;
    return check::exceeded_limit_json(limit_bytes);
  }
}

std::string gib(const nlohmann::json& bytes) { return log::fixed(bytes.get<double>() / (1 << 30), 2); }

void add_footprint(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("footprint", "(GPU) measures the GPU memory each problem's evaluation needs at its peak; "
                                              "--write records problems/footprint.json, which --gpu-memory reads to refuse "
                                              "problems that cannot fit");
  auto sweep = std::make_shared<ProblemSweep>();
  auto limit = std::make_shared<sandbox::EvalRequest>();
  add_sweep_options(cmd, *sweep, /*writes=*/true);
  cmd->add_option("--gpu-memory", limit->gpu_memory_gib, "measure each problem as on a GPU that small; one that runs "
                                                         "out of memory under that cap needs more")
      ->check(CLI::PositiveNumber)->type_name("GiB")->default_str("all of it");
  cmd->callback([&g, &exit_code, sweep, limit] {
    apply_logging(g);
    const auto gpu = gpu_for("footprint", sweep->device);
    const auto root = problems::project_root(g.root);
    const auto catalog = problems::Catalog::load(root);
    MeasuredFile file(problems::footprint_file(root), sweep->write,
                      "Measured by kbench footprint --write: see src/check/footprint.h.", gpu.name);
    const auto limit_bytes = sandbox::gpu_memory_bytes(*limit);
    check::limit_gpu_memory(sweep->device, limit_bytes);
    int failed = 0, exceeded = 0, offloaded = 0;
    const auto measure = [&](const problems::Problem& p, bool offload) {
      return footprint_under_limit(p, sweep->device, limit_bytes, offload);
    };
    const auto peak = [](const nlohmann::json& entry) { return gib(entry["peak_bytes"]) + " GiB at its peak"; };
    const auto rows = sweep_problems(catalog, sweep->level, sweep->id, g.json, failed, [&](const problems::Problem& p, nlohmann::json& row) {
      auto entry = measure(p, false);
      std::string line;
      if (entry.contains("peak_bytes")) {
        line = peak(entry) + " (inputs " + gib(entry["input_bytes"]) + ", output " + gib(entry["output_bytes"]) +
               ", weights " + gib(entry["weight_bytes"]) + ")";
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
      return line;
    });
    if (g.json) std::cout << nlohmann::json{{"gpu", gpu.name}, {"gpu_memory_gib", limit->gpu_memory_gib}, {"problems", rows}}.dump(2) << "\n";
    else std::printf("%zu problems: %d fit under --gpu-memory %g GiB (0: none) only with the candidate's output in host "
                     "memory, %d not at all; %d failed%s\n", rows.size(), offloaded, limit->gpu_memory_gib, exceeded, failed,
                     file.written().c_str());
    exit_code = failed || exceeded ? 1 : 0;
  });
}

}  // namespace

void add_sweep_commands(CLI::App& app, GlobalOptions& g, int& exit_code) {
  add_baseline_command(app, g, exit_code);
  add_degenerate(app, g, exit_code);
  add_footprint(app, g, exit_code);
}

}  // namespace kbench::cli
