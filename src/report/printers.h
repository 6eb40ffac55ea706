// Human-readable renderings of result records.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kbench::report {

// A few lines for the terminal: problem, verdict and message, compile, timing and speedups.
std::string eval_summary(const nlohmann::json& record);

}  // namespace kbench::report
