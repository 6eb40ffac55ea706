// Reading result records back: batch JSONL files (shards too) and single eval records.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kbench::report {

// Every record in `files`, one per submission (keyed by its batch file, else its path), the latest
// line winning so that a re-run supersedes; sorted by that key. Lines that are not records (a torn
// last line of a killed batch) are skipped.
std::vector<nlohmann::json> read_records(const std::vector<std::string>& files);

}  // namespace kbench::report
