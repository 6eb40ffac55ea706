// Speedups that a candidate's honest work does not allow are audited, not trusted. Two audits.
//
// Bandwidth: speedups that the problem's memory traffic does not allow. A kernel must
// at least read the problem's inputs and write its outputs once: (input bytes + output bytes) over
// the GPU's peak memory bandwidth is a floor no honest run goes under (the L2 is flushed before each
// timed trial). A record whose speedup is above a threshold AND whose time is under that floor did
// not do the work it claims (a constant, skipped work, a cached answer): it is flagged, and kbench
// report leaves it out of fast_p unless asked to count it.
//
// Distribution: a kernel that shortcuts on the problem's own inputs (almost always U[0, 1)) and
// computes honestly on others passes every check and is fast only where it is timed. The timed
// calls include a few on each robustness distribution (check/timed_calls.h); a candidate whose own
// distribution's time is under 1/1.5 of its time on the others, where the reference's is not, is
// flagged the same way.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <vector>

#include <nlohmann/json.hpp>

namespace kbench::timing {

inline constexpr double kDefaultSuspiciousSpeedup = 10.0;  // KernelBench flags speedups above 10x too
inline constexpr double kDistributionSpeedFactor = 1.5;

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

struct DistributionAudit {
  bool measured = false;  // both sides were timed on at least one other distribution
  bool flagged = false;
  double candidate_own_ms = 0, candidate_others_ms = 0;  // others: the mean over the other distributions
  double reference_own_ms = 0, reference_others_ms = 0;
  std::vector<std::string> distributions;                // those both were timed on
  std::string reason;
};

// Mean times by distribution ("own" and each robustness distribution) of the candidate and the
// reference; only distributions both have count.
DistributionAudit audit_distribution_speed(const std::map<std::string, double>& candidate_ms,
                                           const std::map<std::string, double>& reference_ms,
                                           double factor = kDistributionSpeedFactor);

nlohmann::json to_json(const DistributionAudit& a, double factor = kDistributionSpeedFactor);

// The record's `timing.audit`: flagged when either audit is, with both audits' details.
nlohmann::json to_json(const SpeedupAudit& bandwidth, const DistributionAudit& distribution);

}  // namespace kbench::timing
