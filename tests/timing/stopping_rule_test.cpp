// The adaptive stopping rule's interval: Student's quantile and the interval of a sample's mean.
#include "timing/stopping_rule.h"

#include <cmath>
#include <vector>

#include "catch.h"

using namespace kbench;

TEST_CASE("Student's 97.5% quantile is close to the exact one at every count", "[timing]") {
  // Exact values (R's qt(0.975, df)).
  for (const auto& [degrees, exact] : std::vector<std::pair<int, double>>{
           {1, 12.7062}, {2, 4.3027}, {4, 2.7764}, {5, 2.5706}, {10, 2.2281}, {19, 2.0930}, {28, 2.0484}, {99, 1.9842}}) {
    INFO(degrees << " degrees of freedom");
    CHECK(timing::t_quantile_975(degrees) == Approx(exact).epsilon(0.002));
  }
  CHECK(std::isinf(timing::t_quantile_975(0)));
}

TEST_CASE("the interval of the mean narrows with the count and widens with the noise", "[timing]") {
  // 20 calls alternating 0.99 and 1.01 ms: mean 1, sample std 0.01 * sqrt(20 / 19), so the interval
  // is 2.093 * 0.01026 / sqrt(20) = 0.48% either side.
  std::vector<double> quiet, noisy;
  for (int i = 0; i < 20; ++i) quiet.push_back(i % 2 ? 1.01 : 0.99), noisy.push_back(i % 2 ? 1.05 : 0.95);
  CHECK(timing::relative_half_width(quiet) == Approx(0.004802).epsilon(0.002));
  CHECK(timing::precise_enough(quiet, 0.01));
  CHECK_FALSE(timing::precise_enough(noisy, 0.01));  // five times wider: 2.4%
  for (int i = 0; i < 400; ++i) noisy.push_back(i % 2 ? 1.05 : 0.95);
  CHECK(timing::precise_enough(noisy, 0.01));  // 1.966 * 0.05 / sqrt(420) = 0.48%
  // Nothing is known from one call, or of a mean of zero.
  CHECK(std::isinf(timing::relative_half_width({1.0})));
  CHECK_FALSE(timing::precise_enough({0.0, 0.0, 0.0}, 0.01));
}

TEST_CASE("calls that drift between their halves are not known, however narrow their interval", "[timing]") {
  // Steady: the halves agree.
  std::vector<double> steady;
  for (int i = 0; i < 20; ++i) steady.push_back(i % 2 ? 1.01 : 0.99);
  CHECK(timing::relative_drift(steady) == Approx(0.0).margin(1e-12));
  // The eager baseline of L2#56 on the H100, its first twenty calls as the ten-call means ran:
  // 5.79 ms falling to 5.71 ms. The interval of their mean is within 1%, the drift is not.
  std::vector<double> settling;
  for (int i = 0; i < 20; ++i) settling.push_back(5.80 - 0.008 * i);
  CHECK(timing::relative_half_width(settling) < 0.01);
  CHECK(timing::relative_drift(settling) == Approx(0.08 / 5.76).epsilon(0.01));  // 1.4%
  CHECK_FALSE(timing::precise_enough(settling, 0.01));
  // An odd count leaves its middle call out of both halves.
  CHECK(timing::relative_drift({1.0, 5.0, 1.0}) == Approx(0.0).margin(1e-12));
  CHECK(std::isinf(timing::relative_drift({1.0})));
}
