// Reading result records back: batch JSONL files (shards too) and single eval records.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/verdict.h"

namespace kbench::report {

// A record's verdict: the record's own ("verdict", which --compat decides), or kbench's or
// KernelBench's where the record holds both ("verdicts"; else its own). None where it has none, or a
// name this kbench does not know.
enum class VerdictOf { record, kbench, kernelbench };
std::optional<check::Verdict> verdict_of(const nlohmann::json& record, VerdictOf which = VerdictOf::record);
std::string verdict_text(std::optional<check::Verdict> verdict);  // its name, or "" for none

// Every record in `files`, one per submission (keyed by its batch file, else its path), the latest
// line winning so that a re-run supersedes; sorted by that key. Lines that are not records (a torn
// last line of a killed batch) are skipped.
std::vector<nlohmann::json> read_records(const std::vector<std::string>& files);

}  // namespace kbench::report
