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

}  // namespace kbench::timing
