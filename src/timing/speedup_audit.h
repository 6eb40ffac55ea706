// Speedups that the problem's memory traffic does not allow are audited, not trusted. A kernel must
// at least read the problem's inputs and write its outputs once: (input bytes + output bytes) over
// the GPU's peak memory bandwidth is a floor no honest run goes under (the L2 is flushed before each
// timed trial). A record whose speedup is above a threshold AND whose time is under that floor did
// not do the work it claims (a constant, skipped work, a cached answer): it is flagged, and kbench
// report leaves it out of fast_p unless asked to count it.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace kbench::timing {

inline constexpr double kDefaultSuspiciousSpeedup = 10.0;  // KernelBench flags speedups above 10x too

struct SpeedupAudit {
  bool flagged = false;
  double floor_ms = 0;            // (input + output bytes) / peak bandwidth
  double max_speedup = 0;         // eager mean / floor: the most this problem allows on this GPU
  std::string reason;             // why it is flagged (empty when not)
};

// `bandwidth_bytes_per_s` <= 0 (unknown) disables the floor: nothing is flagged.
SpeedupAudit audit_speedup(int64_t input_bytes, int64_t output_bytes, double bandwidth_bytes_per_s,
                           double candidate_ms, double eager_ms, double threshold = kDefaultSuspiciousSpeedup);

nlohmann::json to_json(const SpeedupAudit& a, double threshold = kDefaultSuspiciousSpeedup);

}  // namespace kbench::timing
