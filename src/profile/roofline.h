// How far a measured time is from what the GPU's peaks allow: the bytes the problem must move
// (inputs read and outputs written once, as the speedup audit counts them) over peak memory
// bandwidth, and, where the problem's FLOP count is known, its FLOPs over the FP32 peak.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace kbench::profile {

struct RooflineInputs {
  int64_t bytes = 0;            // input + output bytes
  double peak_bandwidth = 0;    // bytes/s; <= 0 unknown
  double flops = 0;             // the problem's FLOPs per forward; <= 0 unknown
  double peak_flops = 0;        // FP32 FLOP/s; <= 0 unknown
};

// {"bytes", "floor_ms", "peak_bytes_per_s", "flops", "peak_flops_per_s", "candidate": {...}, "reference": {...}}:
// per measured time its bytes/s, the share of peak bandwidth it reaches (floor / time) and how many
// times the floor it takes, and its FLOP/s and their share of the peak where FLOPs are known.
// A time <= 0 (not measured) is left out.
nlohmann::json roofline(const RooflineInputs& in, double candidate_ms, double reference_ms);

}  // namespace kbench::profile
