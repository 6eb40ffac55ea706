// `kbench ci`: this run's records against the recorded ones (results/ci/<gpu>.json).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/verdict.h"

namespace kbench::report {

// `refused`: --torch-ops forbid refused it before it ran (its forward calls PyTorch compute ops, as a
// kernel that leaves a matmul to cuBLAS does). Named "ok", "REGRESSED", "new", "improved", "skipped", "refused".
enum class RegressionStatus { ok, regressed, new_kernel, improved, skipped, refused };
std::string to_string(RegressionStatus status);

struct RegressionRow {
  std::string file;
  std::optional<check::Verdict> recorded_verdict, verdict;  // none: not recorded, or a name kbench no longer has
  double recorded_speedup = 0, speedup = 0;
  double allowed_drop = 0;  // fraction, from the recorded and current noise
  RegressionStatus status = RegressionStatus::ok;
  std::string why;
  nlohmann::json to_json() const;
};

// Noise-aware: a speedup regresses when it falls below recorded * (1 - max(5%, 3 * (cv_then + cv_now))).
// Without timings (no GPU), only compile-side verdicts are compared.
std::vector<RegressionRow> compare_with_recorded(const nlohmann::json& recorded, const std::vector<nlohmann::json>& records,
                                                 bool gpu_run);
nlohmann::json to_recorded(const std::vector<nlohmann::json>& records);  // what --record writes
std::string regression_table(const std::vector<RegressionRow>& rows);

}  // namespace kbench::report
