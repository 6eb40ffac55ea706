#include "timing/speedup_audit.h"

#include <cstdio>

namespace kbench::timing {

SpeedupAudit audit_speedup(int64_t input_bytes, int64_t output_bytes, double bandwidth_bytes_per_s,
                           double candidate_ms, double eager_ms, double threshold) {
  SpeedupAudit a;
  if (bandwidth_bytes_per_s <= 0 || candidate_ms <= 0) return a;
  a.floor_ms = static_cast<double>(input_bytes + output_bytes) / bandwidth_bytes_per_s * 1e3;
  a.max_speedup = a.floor_ms > 0 ? eager_ms / a.floor_ms : 0;
  const double speedup = eager_ms / candidate_ms;
  if (speedup > threshold && candidate_ms < a.floor_ms) {
    a.flagged = true;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%.1fx over eager in %.4f ms, under the %.4f ms that reading the inputs and writing the outputs "
                  "(%.1f MiB) takes at this GPU's peak bandwidth (at most %.1fx)",
                  speedup, candidate_ms, a.floor_ms, static_cast<double>(input_bytes + output_bytes) / (1 << 20),
                  a.max_speedup);
    a.reason = buf;
  }
  return a;
}

nlohmann::json to_json(const SpeedupAudit& a, double threshold) {
  nlohmann::json j = {{"flagged", a.flagged}, {"floor_ms", a.floor_ms}, {"max_speedup", a.max_speedup},
                      {"threshold", threshold}};
  if (a.flagged) j["reason"] = a.reason;
  return j;
}

DistributionAudit audit_distribution_speed(const std::map<std::string, double>& candidate_ms,
                                           const std::map<std::string, double>& reference_ms, double factor) {
  DistributionAudit a;
  const auto own_c = candidate_ms.find("own"), own_r = reference_ms.find("own");
  if (own_c == candidate_ms.end() || own_r == reference_ms.end()) return a;
  double sum_c = 0, sum_r = 0;
  for (const auto& [d, ms] : candidate_ms) {
    const auto r = reference_ms.find(d);
    if (d == "own" || r == reference_ms.end()) continue;
    a.distributions.push_back(d);
    sum_c += ms;
    sum_r += r->second;
  }
  if (a.distributions.empty() || own_c->second <= 0 || own_r->second <= 0) return a;
  a.measured = true;
  const double n = static_cast<double>(a.distributions.size());
  a.candidate_own_ms = own_c->second, a.candidate_others_ms = sum_c / n;
  a.reference_own_ms = own_r->second, a.reference_others_ms = sum_r / n;
  const double candidate_ratio = a.candidate_others_ms / a.candidate_own_ms;
  const double reference_ratio = a.reference_others_ms / a.reference_own_ms;
  if (candidate_ratio > factor && reference_ratio <= factor) {
    a.flagged = true;
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "%.4f ms on the problem's own inputs but %.4f ms on other distributions (%.1fx slower; the reference "
                  "%.2fx): its speed depends on the inputs being the problem's own",
                  a.candidate_own_ms, a.candidate_others_ms, candidate_ratio, reference_ratio);
    a.reason = buf;
  }
  return a;
}

nlohmann::json to_json(const DistributionAudit& a, double factor) {
  if (!a.measured) return {{"measured", false}, {"flagged", false}};
  nlohmann::json j = {{"measured", true}, {"flagged", a.flagged}, {"factor", factor}, {"distributions", a.distributions},
                      {"candidate_own_ms", a.candidate_own_ms}, {"candidate_others_ms", a.candidate_others_ms},
                      {"reference_own_ms", a.reference_own_ms}, {"reference_others_ms", a.reference_others_ms}};
  if (a.flagged) j["reason"] = a.reason;
  return j;
}

nlohmann::json to_json(const SpeedupAudit& bandwidth, const DistributionAudit& distribution) {
  std::string reason;
  for (const auto* r : {&bandwidth.reason, &distribution.reason})
    if (!r->empty()) reason += (reason.empty() ? "" : "; ") + *r;
  nlohmann::json j = {{"flagged", bandwidth.flagged || distribution.flagged},
                      {"bandwidth", to_json(bandwidth)},
                      {"distribution", to_json(distribution)}};
  if (!reason.empty()) j["reason"] = reason;
  return j;
}

}  // namespace kbench::timing
