#include "timing/stopping_rule.h"

#include <cmath>
#include <limits>

#include "timing/statistics.h"

namespace kbench::timing {

double t_quantile_975(int degrees) {
  if (degrees < 1) return std::numeric_limits<double>::infinity();
  // Cornish-Fisher expansion around the normal quantile: within 0.2% of the exact value from 5
  // degrees of freedom on (0.11% at 5); below that, the table.
  static const double small[] = {12.706, 4.303, 3.182, 2.776};
  if (degrees <= 4) return small[degrees - 1];
  const double z = 1.959964, n = degrees;
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
  return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * n * n * n);
}

double relative_half_width(const std::vector<double>& samples) {
  const auto s = summarize(samples);
  if (s.count < 2 || s.mean <= 0) return std::numeric_limits<double>::infinity();
  return t_quantile_975(s.count - 1) * s.stddev / std::sqrt(static_cast<double>(s.count)) / s.mean;
}

double relative_drift(const std::vector<double>& samples) {
  const size_t half = samples.size() / 2;
  if (half == 0) return std::numeric_limits<double>::infinity();
  double earlier = 0, later = 0;
  for (size_t i = 0; i < half; ++i) earlier += samples[i], later += samples[samples.size() - half + i];
  if (earlier <= 0) return std::numeric_limits<double>::infinity();
  return std::abs(later / earlier - 1);
}

bool precise_enough(const std::vector<double>& samples, double target) {
  return relative_half_width(samples) <= target && relative_drift(samples) <= target;
}

}  // namespace kbench::timing
