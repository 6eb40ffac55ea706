// The adaptive stopping rule's interval: Student's quantile and the interval of a sample's mean.
#include "timing/stopping_rule.h"

#include <cmath>
#include <random>

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
  std::mt19937_64 rng(5);
  std::normal_distribution<double> one_percent(1.0, 0.01), five_percent(1.0, 0.05);
  std::vector<double> quiet, noisy;
  for (int i = 0; i < 20; ++i) quiet.push_back(one_percent(rng)), noisy.push_back(five_percent(rng));
  // 1% noise, 20 calls: about 2.09 * 0.01 / sqrt(20) = 0.47% either side.
  CHECK(timing::relative_half_width(quiet) == Approx(0.0047).margin(0.0015));
  CHECK(timing::precise_enough(quiet, 0.01));
  CHECK_FALSE(timing::precise_enough(noisy, 0.01));
  for (int i = 0; i < 400; ++i) noisy.push_back(five_percent(rng));
  CHECK(timing::precise_enough(noisy, 0.01));  // 1.97 * 0.05 / sqrt(420) = 0.48%
  // Nothing is known from one call, or of a mean of zero.
  CHECK(std::isinf(timing::relative_half_width({1.0})));
  CHECK_FALSE(timing::precise_enough({0.0, 0.0, 0.0}, 0.01));
}
