// The plan of a run's timed calls and what its checks promise: no GPU needed. That the calls get
// those inputs and that the checks catch what they should is the adversarial test's, on the GPU.
#include "check/timed_calls.h"

#include <cmath>
#include <set>

#include "catch.h"  // last: libtorch brings glog, whose CHECK would replace Catch's

using namespace kbench;

namespace {

check::TimedCallOptions hundred_calls() {
  check::TimedCallOptions o;
  o.timing.warmup = 3;
  o.timing.trials = 100;
  o.distributions = {"normal", "logistic_x10", "uniform_pm0.1"};
  o.calls_per_distribution = 3;
  return o;
}

}  // namespace

TEST_CASE("every call of a plan gets inputs of its own, the distributions at places drawn per run", "[check]") {
  const auto o = hundred_calls();
  const auto plan = check::plan_calls(o, 1234, check::Caller::candidate);
  REQUIRE(plan.warmup.size() == 3);
  REQUIRE(plan.timed.size() == 109);
  std::set<uint64_t> seeds;
  std::map<std::string, int> per_distribution;
  for (const auto& c : plan.warmup) {
    seeds.insert(c.seed);
    CHECK(c.distribution == "own");
    CHECK_FALSE(c.checked);
  }
  for (const auto& c : plan.timed) {
    seeds.insert(c.seed);
    ++per_distribution[c.distribution];
  }
  CHECK(seeds.size() == 112);  // no two calls share inputs
  CHECK(per_distribution == std::map<std::string, int>{{"own", 100}, {"normal", 3}, {"logistic_x10", 3}, {"uniform_pm0.1", 3}});

  // The same seed repeats the run; another seed moves the distributions' calls and the checks.
  const auto again = check::plan_calls(o, 1234, check::Caller::candidate),
             other = check::plan_calls(o, 99, check::Caller::candidate);
  bool same = true, moved = false, checks_moved = false;
  for (size_t i = 0; i < plan.timed.size(); ++i) {
    same = same && again.timed[i].seed == plan.timed[i].seed && again.timed[i].checked == plan.timed[i].checked;
    moved = moved || other.timed[i].distribution != plan.timed[i].distribution;
    checks_moved = checks_moved || other.timed[i].checked != plan.timed[i].checked;
  }
  CHECK(same);
  CHECK(moved);
  CHECK(checks_moved);
}

TEST_CASE("each timed call is checked with the plan's probability, independently of its place", "[check]") {
  // Over many runs: the share checked, and that it is the same in the first and the second half of a
  // run (nothing about a call's place says whether it is checked).
  const auto o = hundred_calls();
  int checked = 0, first_half = 0, second_half = 0, calls = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    const auto plan = check::plan_calls(o, seed, check::Caller::candidate);
    for (size_t i = 0; i < plan.timed.size(); ++i) {
      ++calls;
      if (!plan.timed[i].checked) continue;
      ++checked;
      (i < plan.timed.size() / 2 ? first_half : second_half)++;
    }
  }
  CHECK(static_cast<double>(checked) / calls == Approx(check::check_probability(109)).margin(0.01));
  CHECK(static_cast<double>(first_half) / second_half == Approx(54.0 / 55.0).margin(0.06));
}

TEST_CASE("a baseline's calls are never checked and take each distribution's calls in a row", "[check]") {
  const auto o = hundred_calls();
  const auto plan = check::plan_calls(o, 7, check::Caller::baseline);
  REQUIRE(plan.timed.size() == 109);
  std::vector<std::string> runs;  // the distributions in the order their runs of calls come
  for (const auto& c : plan.timed) {
    CHECK_FALSE(c.checked);
    if (runs.empty() || runs.back() != c.distribution) runs.push_back(c.distribution);
  }
  CHECK(runs == std::vector<std::string>{"own", "normal", "logistic_x10", "uniform_pm0.1"});
}

TEST_CASE("a candidate that skips work on a share of its timed calls is caught at least as often as the issue asks", "[check]") {
  // Caught with probability 1 - (1 - p)^(f N) = 1 - 2^(-20 f); asked: at least 1 - (1 - f)^10, for
  // every share f up to one half, whatever the number of timed calls.
  for (int calls : {29, 109, 1000}) {
    const double p = check::check_probability(calls);
    for (double f : {0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5}) {
      INFO(calls << " timed calls, skipped share " << f);
      CHECK(1 - check::miss_probability(p, calls, f) >= 1 - std::pow(1 - f, 10) - 1e-12);
      CHECK(1 - check::miss_probability(p, calls, f) == Approx(1 - std::pow(2.0, -20 * f)));
    }
  }
  const double p = check::check_probability(109);
  CHECK(p == Approx(0.1195).margin(1e-4));
  CHECK(1 - check::miss_probability(p, 109, 0.1) == Approx(0.75));
  CHECK(1 - check::miss_probability(p, 109, 0.2) == Approx(0.9375));
  CHECK(1 - check::miss_probability(p, 109, 0.5) == Approx(0.99902).margin(1e-5));
}

TEST_CASE("a record's timing entry gives its means by distribution", "[check]") {
  const nlohmann::json entry = {{"mean_ms", 2.0},
                                {"distributions", {{"normal", {{"mean_ms", 3.0}}}, {"uniform_pm0.1", {{"mean_ms", 4.0}}}}}};
  CHECK(check::distribution_means(entry) ==
        std::map<std::string, double>{{"own", 2.0}, {"normal", 3.0}, {"uniform_pm0.1", 4.0}});
  // A figure from before the distributions were timed has the own one only.
  CHECK(check::distribution_means({{"mean_ms", 1.5}}) == std::map<std::string, double>{{"own", 1.5}});
}
