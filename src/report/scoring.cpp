#include "report/scoring.h"

#include <algorithm>
#include <cmath>

#include "report/records.h"

namespace kbench::report {
namespace {

// The verdict that counts under `rules`.
std::optional<check::Verdict> verdict_under(const nlohmann::json& r, const ScoringRules& rules) {
  return verdict_of(r, rules.kernelbench ? VerdictOf::kernelbench : VerdictOf::kbench);
}

std::string problem_key(const nlohmann::json& r) {
  return std::to_string(r["problem"].value("level", 0)) + "/" + std::to_string(r["problem"].value("id", 0));
}

double geomean(const std::vector<double>& xs) {
  if (xs.empty()) return 0;
  double log_sum = 0;
  for (double x : xs) log_sum += std::log(x);
  return std::exp(log_sum / static_cast<double>(xs.size()));
}

std::map<std::string, ProblemSamples> collect(const std::vector<nlohmann::json>& records, int level,
                                              const ScoringRules& rules) {
  std::map<std::string, ProblemSamples> per_problem;
  for (const auto& r : records) {
    if (!r.contains("problem") || r["problem"].value("level", 0) != level) continue;
    auto& p = per_problem[problem_key(r)];
    ++p.samples;
    if (verdict_under(r, rules) != check::Verdict::correct) continue;
    ++p.correct;
    if (!rules.include_flagged && speedup_flagged(r)) continue;  // solved, but its speedup is not credible
    if (r.contains("timing") && r["timing"].contains("speedup_eager"))
      p.speedup_eager.push_back(r["timing"]["speedup_eager"].get<double>());
    if (r.contains("timing") && r["timing"].contains("speedup_compiled"))
      p.speedup_compiled.push_back(r["timing"]["speedup_compiled"].get<double>());
    if (r.contains("timing") && r["timing"].contains("audit") && r["timing"].contains("candidate")) {
      // The bandwidth audit's floor: under audit.bandwidth, or audit itself in records made before
      // the distribution audit joined it.
      const auto& audit = r["timing"]["audit"];
      const double floor_ms = audit.contains("bandwidth") ? audit["bandwidth"].value("floor_ms", 0.0) : audit.value("floor_ms", 0.0);
      const double mean = r["timing"]["candidate"].value("mean_ms", 0.0);
      if (floor_ms > 0 && mean > 0) p.times_floor.push_back(mean / floor_ms);
    }
  }
  return per_problem;
}

int count_above(const std::vector<double>& xs, double p) {
  int n = 0;
  for (double x : xs) n += x > p;
  return n;
}

}  // namespace

std::map<std::string, RuleUse> kernelbench_rules(const std::vector<nlohmann::json>& records) {
  std::map<std::string, RuleUse> rules;
  for (const auto& r : records) {
    const auto verdicts = r.find("verdicts");
    if (verdicts == r.end() || !verdicts->contains("kernelbench")) continue;
    const auto& kernelbench = (*verdicts)["kernelbench"];
    auto& use = rules[kernelbench.value("rule", "")];
    use.tolerance = kernelbench.value("tolerance", r.contains("correctness") ? r["correctness"].value("atol", 0.0) : 0.0);
    ++use.records;
  }
  return rules;
}

bool speedup_flagged(const nlohmann::json& record) {
  const auto timing = record.find("timing");
  if (timing == record.end() || !timing->contains("audit")) return false;
  return (*timing)["audit"].value("flagged", false);
}

bool used_torch_compute_ops(const nlohmann::json& record) {
  const auto host = record.find("host");
  if (host == record.end() || !host->is_object()) return false;
  for (const char* key : {"computing_ops_ran", "computing_ops"})
    if (const auto ops = host->find(key); ops != host->end()) return !ops->empty();
  return false;
}

double at_k(int n, int c, int k) {
  if (n - c < k) return 1.0;
  double none = 1.0;  // C(n-c, k) / C(n, k) as a running product
  for (int i = n - c + 1; i <= n; ++i) none *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - none;
}

std::vector<LevelScore> score(const std::vector<nlohmann::json>& records, const std::map<int, int>& level_sizes,
                              const ScoringRules& rules) {
  std::vector<LevelScore> out;
  for (const auto& [level, size] : level_sizes) {
    const auto per_problem = collect(records, level, rules);
    if (per_problem.empty()) continue;
    LevelScore s;
    s.level = level;
    s.problems_in_level = size;
    s.problems_sampled = static_cast<int>(per_problem.size());
    for (const auto& r : records)
      if (r.contains("problem") && r["problem"].value("level", 0) == level) {
        const auto verdict = verdict_under(r, rules);
        ++s.verdicts[verdict_text(verdict)], ++s.submissions;
        s.correct_using_torch_ops += verdict == check::Verdict::correct && used_torch_compute_ops(r);
      }
    std::vector<double> all_eager, all_compiled, times_floor;
    for (const auto& [key, p] : per_problem) {
      s.max_samples = std::max(s.max_samples, p.samples);
      s.pass_at_1 += static_cast<double>(p.correct) / p.samples;
      for (double t : kThresholds) {
        s.fast_eager[t] += static_cast<double>(count_above(p.speedup_eager, t)) / p.samples;
        s.fast_compiled[t] += static_cast<double>(count_above(p.speedup_compiled, t)) / p.samples;
      }
      all_eager.insert(all_eager.end(), p.speedup_eager.begin(), p.speedup_eager.end());
      all_compiled.insert(all_compiled.end(), p.speedup_compiled.begin(), p.speedup_compiled.end());
      times_floor.insert(times_floor.end(), p.times_floor.begin(), p.times_floor.end());
    }
    int min_samples = s.max_samples;
    for (const auto& [key, p] : per_problem) min_samples = std::min(min_samples, p.samples);
    for (int k : {2, 5, 10})
      if (k <= min_samples)
        for (const auto& [key, p] : per_problem) {
          s.pass_at_k[k] += at_k(p.samples, p.correct, k);
          s.fast1_at_k[k] += at_k(p.samples, count_above(p.speedup_eager, 1.0), k);
        }
    // Shares of the whole level: problems nobody submitted for count as failures.
    s.pass_at_1 /= size;
    for (auto& [t, v] : s.fast_eager) v /= size;
    for (auto& [t, v] : s.fast_compiled) v /= size;
    for (auto& [k, v] : s.pass_at_k) v /= size;
    for (auto& [k, v] : s.fast1_at_k) v /= size;
    s.geomean_speedup_eager = geomean(all_eager);
    s.geomean_speedup_compiled = geomean(all_compiled);
    s.has_compiled = !all_compiled.empty();
    if (!times_floor.empty()) {
      std::sort(times_floor.begin(), times_floor.end());
      const size_t n = times_floor.size();
      s.floor_candidates = static_cast<int>(n);
      s.floor_median = n % 2 ? times_floor[n / 2] : (times_floor[n / 2 - 1] + times_floor[n / 2]) / 2;
      s.floor_best = times_floor.front();
      s.floor_within_2x = static_cast<double>(std::upper_bound(times_floor.begin(), times_floor.end(), 2.0) - times_floor.begin()) / n;
    }
    out.push_back(s);
  }
  return out;
}

nlohmann::json to_json(const LevelScore& s) {
  nlohmann::json fe, fc, pk, fk;
  for (const auto& [t, v] : s.fast_eager) fe["fast_" + nlohmann::json(t).dump()] = v;
  for (const auto& [t, v] : s.fast_compiled) fc["fast_" + nlohmann::json(t).dump()] = v;
  for (const auto& [k, v] : s.pass_at_k) pk["pass@" + std::to_string(k)] = v;
  for (const auto& [k, v] : s.fast1_at_k) fk["fast_1@" + std::to_string(k)] = v;
  return {{"level", s.level}, {"problems_in_level", s.problems_in_level}, {"problems_sampled", s.problems_sampled},
          {"submissions", s.submissions}, {"max_samples", s.max_samples}, {"verdicts", s.verdicts},
          {"correct_using_torch_ops", s.correct_using_torch_ops},
          {"pass@1", s.pass_at_1}, {"fast_p_eager", fe}, {"fast_p_compiled", s.has_compiled ? fc : nlohmann::json()},
          {"pass@k", pk}, {"fast_1@k", fk}, {"geomean_speedup_eager", s.geomean_speedup_eager},
          {"geomean_speedup_compiled", s.has_compiled ? nlohmann::json(s.geomean_speedup_compiled) : nlohmann::json()},
          {"bandwidth_floor", s.floor_candidates ? nlohmann::json{{"candidates", s.floor_candidates},
                                                                   {"median_times_floor", s.floor_median},
                                                                   {"best_times_floor", s.floor_best},
                                                                   {"within_2x", s.floor_within_2x}}
                                                 : nlohmann::json()}};
}

std::vector<std::pair<double, double>> fast_curve(const std::vector<nlohmann::json>& records, int level,
                                                  int problems_in_level, const std::string& baseline, double p_max,
                                                  const ScoringRules& rules) {
  const auto per_problem = collect(records, level, rules);
  std::vector<std::pair<double, double>> curve;
  for (int i = 0; i <= 100; ++i) {
    const double p = p_max * i / 100.0;
    double sum = 0;
    for (const auto& [key, s] : per_problem)
      sum += static_cast<double>(count_above(baseline == "compiled" ? s.speedup_compiled : s.speedup_eager, p)) / s.samples;
    curve.emplace_back(p, sum / problems_in_level);
  }
  return curve;
}

}  // namespace kbench::report
