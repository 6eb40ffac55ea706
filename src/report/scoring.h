// KernelBench's scores over result records: fast_p, pass@k / fast_p@k, geometric-mean speedups.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kbench::report {

// Speedup thresholds reported by default (p in fast_p).
inline const std::vector<double> kThresholds = {0.0, 0.5, 1.0, 1.5, 2.0};

// Which verdict of a record counts, and whether flagged speedups do. A record holds kbench's verdict
// and KernelBench's (`verdicts`; older records and early verdicts have one `verdict` for both); a
// record whose speedup the audit flagged (timing.audit.flagged: faster than the problem's memory
// traffic allows) counts towards pass@k but not towards fast_p and the geometric means, unless
// `include_flagged`.
struct ScoringRules {
  bool kernelbench = false;  // KernelBench's verdicts: fragile counts as correct, KernelBench's tolerance
  bool include_flagged = false;
};

bool speedup_flagged(const nlohmann::json& record);

// The rules that KernelBench's verdicts of `records` used (verdicts.kernelbench.rule:
// "kernelbench", "kernelbench-v0.1"), each with its tolerance (atol = rtol) and how many records
// used it. "" stands for records made before kbench named the rules (atol and rtol as given, 1e-2
// by default: v0.1's tolerance). Records that failed before any check used none.
struct RuleUse {
  double tolerance = 0;
  int records = 0;
};
std::map<std::string, RuleUse> kernelbench_rules(const std::vector<nlohmann::json>& records);

// Whether forward called PyTorch ops that compute values (host.computing_ops_ran: the ops that ran in
// the trials; records made before kbench recorded them: the ops its program names).
bool used_torch_compute_ops(const nlohmann::json& record);

struct ProblemSamples {
  int samples = 0;
  int correct = 0;
  std::vector<double> speedup_eager;     // one per correct sample that was timed
  std::vector<double> speedup_compiled;  // one per correct sample with a compiled baseline
  std::vector<double> times_floor;       // one per correct timed sample: its mean / the audit's bandwidth floor
};

struct LevelScore {
  int level = 0;
  int problems_in_level = 0;  // the denominator: every problem of the level, sampled or not
  int problems_sampled = 0;
  int submissions = 0;
  int max_samples = 0;
  std::map<std::string, int> verdicts;
  int correct_using_torch_ops = 0;  // correct submissions whose forward called PyTorch compute ops
  std::map<double, double> fast_eager, fast_compiled;  // p -> fast_p (expected over samples)
  double pass_at_1 = 0;
  std::map<int, double> pass_at_k, fast1_at_k;         // k -> pass@k, fast_1@k (k > 1 when samples allow)
  double geomean_speedup_eager = 0;                   // over correct, timed samples
  double geomean_speedup_compiled = 0;
  bool has_compiled = false;
  // How far correct candidates are from their bandwidth floor (timing.audit.floor_ms: inputs read and
  // outputs written once at peak bandwidth): their time in multiples of it, 1 being memory-bound peak.
  int floor_candidates = 0;
  double floor_median = 0, floor_best = 0;
  double floor_within_2x = 0;  // share of those candidates within twice their floor
};

// Unbiased estimator of the chance that at least one of k draws (of n, c good) is good.
double at_k(int n, int c, int k);

// Scores per level from records (several samples per problem allowed). `level_sizes` gives the
// number of problems per level (100, 100, 50 for KernelBench).
std::vector<LevelScore> score(const std::vector<nlohmann::json>& records, const std::map<int, int>& level_sizes,
                              const ScoringRules& rules = {});

nlohmann::json to_json(const LevelScore& s);

// fast_p against eager for p in [0, p_max]: the curve the SVG plot draws.
std::vector<std::pair<double, double>> fast_curve(const std::vector<nlohmann::json>& records, int level,
                                                  int problems_in_level, const std::string& baseline, double p_max,
                                                  const ScoringRules& rules = {});

}  // namespace kbench::report
