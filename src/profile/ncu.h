// Nsight Compute for the candidate's kernels (--ncu): where ncu is, the command line that starts a
// worker under it, and its report read back through ncu's CSV export of the raw metrics page
// (parsed with libcsv): per kernel, SM and DRAM throughput as % of peak, achieved occupancy, L2 hit
// rate and the stall reason warps spend most cycles in.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kbench::profile {

struct NcuLocation {
  std::string path;        // empty when absent
  std::string why_absent;  // one line for the record and the terminal
};

// $KBENCH_NCU, else `ncu` on PATH, else `ncu` in `cuda_bin`.
NcuLocation find_ncu(const std::string& cuda_bin = "/usr/local/cuda/bin");

// ncu and its options, to which the worker's own command line is appended: profile only the
// launches of `kernel_names` inside the NVTX range of the one forward (candidate_profile.h's
// kNvtxRange), at most `launch_count` of them, with kbench's metric set, into `report` (.ncu-rep).
std::vector<std::string> ncu_command(const std::string& ncu, const std::string& report,
                                     const std::vector<std::string>& kernel_names, int launch_count);

// The raw page of an exported report as CSV (`ncu --import report --csv --page raw --print-units
// base`), read into {"kernels": [{"kernel", "launches", "duration_ms", "sm_throughput_pct",
// "dram_throughput_pct", "achieved_occupancy_pct", "l2_hit_rate_pct", "top_stall",
// "top_stall_cycles_per_issue"}]}: one entry per kernel name, the mean over its profiled launches.
// Throws with ncu's message when the export fails.
nlohmann::json read_ncu_report(const std::string& ncu, const std::string& report);
nlohmann::json parse_ncu_raw_csv(const std::string& csv);  // the same from the CSV text

// Puts each kernel's figures under "ncu" in the profile's `candidate["kernels"]` and names its bound again.
void merge_ncu(nlohmann::json& candidate, const nlohmann::json& ncu_kernels);

}  // namespace kbench::profile
