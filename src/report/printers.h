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
  std::vector<LevelScore> levels;
  std::vector<nlohmann::json> records;
};

class Printer {
 public:
  virtual ~Printer() = default;
  virtual std::string render(const ScoredRun& run) const = 0;
};

std::unique_ptr<Printer> make_printer(const std::string& format);  // "terminal", "markdown", "json", "svg"

// A few lines for the terminal: problem, verdict and message, compile, timing and speedups.
std::string eval_summary(const nlohmann::json& record);

}  // namespace kbench::report
