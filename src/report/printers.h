// Renderings of results: one printer per format behind one interface (terminal table, Markdown,
// JSON, SVG plot), plus the few-line summary of a single evaluation.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/scoring.h"

namespace kbench::report {

struct ScoredRun {
  std::vector<LevelScore> levels;              // kbench's verdicts
  std::vector<nlohmann::json> records;
  std::vector<LevelScore> kernelbench_levels;  // KernelBench's verdicts (fragile counted as correct)
  bool include_flagged = false;                // flagged speedups were counted (kbench report --include-flagged)
};

// Scores `records` under kbench's and KernelBench's verdicts.
ScoredRun score_run(std::vector<nlohmann::json> records, const std::map<int, int>& level_sizes, bool include_flagged);

class Printer {
 public:
  virtual ~Printer() = default;
  virtual std::string render(const ScoredRun& run) const = 0;
};

std::unique_ptr<Printer> make_printer(const std::string& format);  // "terminal", "markdown", "json", "svg"

// A few lines for the terminal: problem, verdict and message, compile, timing and speedups.
std::string eval_summary(const nlohmann::json& record);

}  // namespace kbench::report
