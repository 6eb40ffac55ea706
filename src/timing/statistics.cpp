#include "timing/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kbench::timing {

Statistics summarize(std::vector<double> samples) {
  Statistics s;
  s.count = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.min = samples.front();
  s.max = samples.back();
  const size_t n = samples.size();
  s.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  double sq = 0;
  for (double x : samples) sq += (x - s.mean) * (x - s.mean);
  s.stddev = n > 1 ? std::sqrt(sq / static_cast<double>(n - 1)) : 0.0;  // sample std, as torch.std
  s.cv = s.mean > 0 ? s.stddev / s.mean : 0.0;
  return s;
}

nlohmann::json to_json(const Statistics& s) {
  return {{"mean_ms", s.mean}, {"median_ms", s.median}, {"std_ms", s.stddev}, {"min_ms", s.min},
          {"max_ms", s.max}, {"cv", s.cv}, {"num_trials", s.count}};
}

}  // namespace kbench::timing
