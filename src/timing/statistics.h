// Summary statistics of a sample of trial times.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

namespace kbench::timing {

struct Statistics {
  int count = 0;
  double mean = 0, median = 0, stddev = 0, min = 0, max = 0;
  double cv = 0;  // stddev / mean: the noise flag compares it to a threshold
};

Statistics summarize(std::vector<double> samples);
nlohmann::json to_json(const Statistics& s);

}  // namespace kbench::timing
