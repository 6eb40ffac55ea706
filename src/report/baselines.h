// Recorded reference times in KernelBench's baseline layout:
//   baselines/<gpu>/{eager,compiled}.json: {"level1": {"19_ReLU.py": {"mean": ms, "std": ..., ...}}}
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kbench::report {

// "NVIDIA H100 80GB HBM3" -> "H100_80GB_HBM3": the folder name under baselines/.
std::string gpu_slug(const std::string& gpu_name);

std::filesystem::path baseline_file(const std::string& gpu_name, const std::string& kind);
// A baseline file of baselines/' layout as read (not an object where it is missing or unreadable),
// for several lookups (baseline_entry) from one read.
nlohmann::json read_baseline_file(const std::filesystem::path& file);
// The problem's entry in such a file's contents, if it has one.
std::optional<nlohmann::json> baseline_entry(const nlohmann::json& doc, int level, const std::string& problem_name);
// The problem's entry in `file`, if the file has one.
std::optional<nlohmann::json> baseline_entry_in(const std::filesystem::path& file, int level, const std::string& problem_name);

// The problem's entry: a figure ("mean", ms) or, for compiled ones, the reason there is none.
std::optional<nlohmann::json> recorded_baseline(const std::string& gpu_name, const std::string& kind, int level,
                                                const std::string& problem_name);

// A compiled figure of a baseline file as a record's timing entry: {"mean_ms", "source": how it was
// made and `where`, ...}; without "mean_ms" where the entry holds only the reason there is none.
nlohmann::json compiled_timing_entry(const nlohmann::json& recorded, const std::string& where);

// Adds or replaces one problem's entry and rewrites the file (sorted, stable diffs), under a lock
// file, so that processes timing on several GPUs can record into one file.
void record_baseline(const std::string& gpu_name, const std::string& kind, int level,
                     const std::string& problem_name, const nlohmann::json& entry);

}  // namespace kbench::report
