// Where a forward's GPU time goes, as the record's `profile` section says it: the reference's
// operators with the kernels they launched (from libtorch's profiler), the candidate's kernels and
// PyTorch ops summed per name, and what bounds each candidate kernel. Pure functions over events
// and JSON, so that the GPU parts only collect.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kbench::profile {

// One event of libtorch's profiler, as the reference's breakdown needs it.
struct ProfiledEvent {
  std::string name;
  bool on_gpu = false;              // a kernel, copy or fill that ran on the device
  uint64_t start_ns = 0, duration_ns = 0;
  uint64_t correlation = 0;         // an operator's id
  uint64_t linked_correlation = 0;  // on the device: the id of the operator that launched it
  uint64_t thread = 0;
  uint64_t flops = 0;               // PyTorch's FLOP formula for the operator (with_flops), 0 for none
};

// {"gpu_ms", "ops": [{"op", "gpu_ms", "share", "kernels": [{"name", "launches", "gpu_ms"}]}],
//  "kernels": [{"name", "op", "gpu_ms", "share"}], "flops": {"count", "from"} or null}: device time
// summed per top-level operator (aten::linear, not the aten::addmm inside it), slowest first. With
// no device event at all, {"unavailable": why, "operators_seen": n}.
nlohmann::json summarize_reference(const std::vector<ProfiledEvent>& events);

// The candidate's forward from its launches ([{"kernel", "gpu_ms", "grid", "block", ...}] in call
// order) and the PyTorch ops its host program ran between them ([{"op", "gpu_ms", ...}]): adds
// "kernels" (per kernel name: launches, total time, share of the forward, the slowest launch's shape
// and occupancy, slowest first), "torch_ops_summary" (per op name), and the time in kernels, in ops,
// and in neither (gaps) to `candidate`, which holds "forward_ms", "launches" and "torch_ops".
void summarize_candidate(nlohmann::json& candidate);

// Names what bounds each of `candidate["kernels"]` ("bound"): from Nsight Compute's figures where the
// kernel has them ("ncu"), else from its launch shape and occupancy, which can only say what is
// visibly wrong (too few blocks, low occupancy).
void annotate_bounds(nlohmann::json& candidate, int multiprocessors);

// Share of the peak (percent) from which a unit counts as the bound.
inline constexpr double kBusyPercent = 60.0;

}  // namespace kbench::profile
