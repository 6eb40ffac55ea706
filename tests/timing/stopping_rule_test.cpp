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

TEST_CASE("a trend carried on to the last call moves the mean by half the calls to come times the slope", "[timing]") {
  // 20 calls falling 0.004 ms a call from 5.8 ms: the halves differ by 0.69%, within 1%, but the same
  // line carried on to 100 calls moves the mean by 0.004 * 80 / 2 = 0.16 ms, 2.8% of 5.762.
  std::vector<double> falling;
  for (int i = 0; i < 20; ++i) falling.push_back(5.8 - 0.004 * i);
  CHECK(timing::relative_drift(falling) < 0.01);
  CHECK(timing::projected_trend(falling, 100) == Approx(0.16 / 5.762).epsilon(0.001));
  CHECK(timing::precise_enough(falling, 0.01));
  CHECK_FALSE(timing::precise_enough(falling, 0.01, 100));
  // The slope's sign does not matter, and nothing is carried where no call is to come.
  std::vector<double> rising;
  for (int i = 0; i < 20; ++i) rising.push_back(5.8 + 0.004 * i);
  CHECK(timing::projected_trend(rising, 100) == Approx(0.16 / 5.838).epsilon(0.001));
  CHECK(timing::projected_trend(rising, 20) == 0);
  // Calls alternating 0.99 and 1.01 ms have the slope 0.1 / 665 ms a call (the last is a slow one),
  // 0.6% over 80 calls to come; too few calls have no trend that can be known.
  std::vector<double> steady;
  for (int i = 0; i < 20; ++i) steady.push_back(i % 2 ? 1.01 : 0.99);
  CHECK(timing::projected_trend(steady, 100) == Approx(0.1 / 665 * 40).epsilon(0.001));
  CHECK(timing::precise_enough(steady, 0.01, 100));
  CHECK(std::isinf(timing::projected_trend({1.0, 1.0}, 100)));
}
