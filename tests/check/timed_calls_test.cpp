// The plan of a run's timed calls and what its checks promise: no GPU needed. That the calls get
// those inputs and that the checks catch what they should is the adversarial test's, on the GPU.
#include "check/timed_calls.h"

#include <cmath>
#include <functional>
#include <random>
#include <set>

#include "catch.h"  // last: libtorch brings glog, whose CHECK would replace Catch's

using namespace kbench;

namespace {

check::TimedCallOptions hundred_calls(timing::TimingMode mode = timing::TimingMode::fixed) {
  check::TimedCallOptions o;
  o.timing.mode = mode;
  o.timing.warmup = 3;
  o.timing.trials = 100;
  o.timing.min_trials = 20;
  o.distributions = {"normal", "logistic_x10", "uniform_pm0.1"};
  o.calls_per_distribution = 3;
  return o;
}

}  // namespace

TEST_CASE("every call of a plan gets inputs of its own, the distributions at places drawn per run", "[check]") {
  const auto mode = GENERATE(timing::TimingMode::fixed, timing::TimingMode::adaptive);
  INFO(timing::mode_name(mode) << " timing");
  const auto o = hundred_calls(mode);
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

TEST_CASE("each timed call of a fixed run is checked with the plan's probability, independently of its place", "[check]") {
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

TEST_CASE("a baseline times all its own calls first, then each distribution's calls in a row, in a run of their own", "[check]") {
  // Whatever the mode, so that an adaptive baseline's own calls are timed as a fixed one's: never
  // after a distribution's calls, and an early stop never cuts the distributions short.
  for (const auto mode : {timing::TimingMode::fixed, timing::TimingMode::adaptive, timing::TimingMode::both}) {
    INFO("mode " << timing::mode_name(mode));
    const auto [own_pass, distribution_pass] = check::baseline_passes(hundred_calls(mode));
    const auto own = check::plan_calls(own_pass, 7, check::Caller::baseline);
    REQUIRE(own.timed.size() == 100);
    CHECK(own.warmup.size() == 3);
    for (const auto& c : own.timed) CHECK((c.distribution == "own" && !c.checked));
    // Adaptive: twice a candidate's own calls before each stop, to half its target.
    CHECK(own.stops == (mode == timing::TimingMode::fixed ? std::vector<int>{100} : std::vector<int>{40, 80, 100}));
    CHECK(own_pass.timing.target == Approx(0.005));

    const auto distributions = check::plan_calls(distribution_pass, 7, check::Caller::baseline);
    CHECK(distributions.warmup.empty());
    CHECK(distributions.stops == std::vector<int>{9});  // every one of them, in every mode
    std::vector<std::string> runs;  // the distributions in the order their runs of calls come
    for (const auto& c : distributions.timed) {
      CHECK_FALSE(c.checked);
      if (runs.empty() || runs.back() != c.distribution) runs.push_back(c.distribution);
    }
    CHECK(runs == std::vector<std::string>{"normal", "logistic_x10", "uniform_pm0.1"});
  }
}

TEST_CASE("an adaptive run may stop after the first stop's calls and after each minimum count more", "[check]") {
  const auto plan = check::plan_calls(hundred_calls(timing::TimingMode::adaptive), 3, check::Caller::candidate);
  CHECK(plan.stops == std::vector<int>{29, 49, 69, 89, 109});
  CHECK(check::plan_calls(hundred_calls(), 3, check::Caller::candidate).stops == std::vector<int>{109});
  // Every distribution's calls before the first stop, so that a run ended there has all of them.
  for (size_t i = 29; i < plan.timed.size(); ++i) CHECK(plan.timed[i].distribution == "own");
  // Each call is checked with the probability of the first stop at or after it.
  for (size_t i = 0; i < plan.timed.size(); ++i) {
    const int stop = i < 29 ? 29 : 29 + 20 * ((static_cast<int>(i) - 29) / 20 + 1);
    INFO("call " << i);
    CHECK(plan.check_probability[i] == Approx(check::check_probability(stop)));
  }
  // A minimum count above the maximum: one stop, after every call.
  auto few = hundred_calls(timing::TimingMode::adaptive);
  few.timing.trials = 10;
  CHECK(check::plan_calls(few, 3, check::Caller::candidate).stops == std::vector<int>{19});
}

namespace {

// Simulated call times: `time(i)` for call i, fed to ends_run one call at a time as the timing loop
// does, each call's SM clock read as `clock(i)` against an unthrottled line of 1961 MHz (an H100's);
// the number of calls the run makes.
int calls_until_stop(const check::CallPlan& plan, const std::function<double(int)>& time, double target = 0.01,
                     const std::function<unsigned(int)>& clock = [](int) { return 1980u; }) {
  std::vector<double> ms;
  std::vector<unsigned> mhz;
  for (int i = 0; i < static_cast<int>(plan.timed.size()); ++i) {
    ms.push_back(time(i));
    mhz.push_back(clock(i));
    if (check::ends_run(plan, ms, mhz, target, 1961)) break;
  }
  return static_cast<int>(ms.size());
}

}  // namespace

TEST_CASE("a steady kernel stops at the first stop, a noisy one or one fast on some calls and slow on others runs on",
          "[check]") {
  const auto plan = check::plan_calls(hundred_calls(timing::TimingMode::adaptive), 11, check::Caller::candidate);
  std::mt19937_64 rng(11);
  std::normal_distribution<double> steady(1.0, 0.01), noisy(1.0, 0.04);
  CHECK(calls_until_stop(plan, [&](int) { return steady(rng); }) == 29);
  // 4% noise: n >= (2 * 0.04 / 0.01)^2 = 64 own calls, the stop after 89 calls (80 own ones).
  const int noisy_calls = calls_until_stop(plan, [&](int) { return noisy(rng); });
  CHECK(noisy_calls >= 69);
  CHECK(noisy_calls <= 109);
  // Fast on some calls and slow on others: the interval of the mean of all the calls is wide, so the
  // stop does not come earlier, whether the slow calls alternate, come at random or are one in five.
  std::bernoulli_distribution half(0.5);
  CHECK(calls_until_stop(plan, [&](int i) { return i % 2 ? 0.5 : 1.0; }) == 109);
  CHECK(calls_until_stop(plan, [&](int) { return half(rng) ? 0.5 : 1.0; }) == 109);
  CHECK(calls_until_stop(plan, [&](int i) { return i % 5 == 0 ? 2.0 : steady(rng); }) == 109);
  // A kernel that settles slowly (0.15% faster each call for sixty calls, 1% noise) runs on:
  // its mean is not yet the one it keeps.
  const int settling_calls = calls_until_stop(plan, [&](int i) { return steady(rng) - 0.0015 * std::min(i, 60); });
  CHECK(settling_calls > 29);
  // The distributions' calls do not count: a kernel slow on other inputs and steady on its own stops.
  CHECK(calls_until_stop(plan, [&](int i) { return plan.timed[static_cast<size_t>(i)].distribution == "own" ? steady(rng) : 5.0; }) == 29);
  // Under fixed timing the only stop is after every call.
  const auto fixed = check::plan_calls(hundred_calls(), 11, check::Caller::candidate);
  CHECK(calls_until_stop(fixed, [&](int) { return steady(rng); }) == 109);
}

TEST_CASE("an adaptive run does not stop early while the GPU runs below its unthrottled clock", "[check]") {
  const auto candidate = check::plan_calls(hundred_calls(timing::TimingMode::adaptive), 5, check::Caller::candidate);
  const auto [own_pass, distribution_pass] = check::baseline_passes(hundred_calls(timing::TimingMode::adaptive));
  const auto baseline = check::plan_calls(own_pass, 5, check::Caller::baseline);
  const auto steady = [](int i) { return i % 2 ? 1.01 : 0.99; };
  // Steady times at the full clock: the first stop.
  CHECK(calls_until_stop(candidate, steady) == 29);
  CHECK(calls_until_stop(baseline, steady, own_pass.timing.target) == 40);
  // The same times while the clock recovers from earlier work (L2#56's eager reference on the H100:
  // 1740-1755 MHz for its first twenty calls, 1830 MHz and above after): the run goes on until every
  // call so far reached the line, which no later stop can undo, so to the last call.
  const auto recovering = [](int i) { return i < 25 ? 1740u : 1965u; };
  CHECK(calls_until_stop(candidate, steady, 0.01, recovering) == 109);
  CHECK(calls_until_stop(baseline, steady, own_pass.timing.target, recovering) == 100);
  // One call below the line is enough, whenever it comes before the stop.
  CHECK(calls_until_stop(candidate, steady, 0.01, [](int i) { return i == 28 ? 1950u : 1980u; }) == 109);
  // Where no clock is known (0 read, 0 asked), only the times decide.
  std::vector<double> ms;
  std::vector<unsigned> unknown;
  for (int i = 0; i < 29; ++i) ms.push_back(steady(i)), unknown.push_back(0);
  CHECK(check::ends_run(candidate, ms, unknown, 0.01, 0));
  CHECK_FALSE(check::ends_run(candidate, ms, unknown, 0.01, 1961));
}

TEST_CASE("a candidate skipping work on a share of its calls is caught as often as promised however the run ends",
          "[check]") {
  // Simulated runs of an adaptive plan: the candidate skips its work on a share f of the calls,
  // chosen in three ways: at random, on the last calls before the first stop, and on calls after the
  // first stop, where checks are rarest. A skipped call takes as long as any other (the hardest case:
  // timing does not give it away); the candidate is steady (1% noise, the run ends at the first stop)
  // in half the runs and noisy (4%, it runs on) in the others. Each run ends where the stop rule ends
  // it; the candidate is caught when a skipped call that ran was checked. Promised: caught with
  // probability at least 1 - 2^(-20 f) for the share f of the calls that ran; the measured rate over
  // the runs is compared with the mean of that promise.
  const auto o = hundred_calls(timing::TimingMode::adaptive);
  const int runs = 4000;
  std::mt19937_64 rng(2024);
  std::normal_distribution<double> steady(1.0, 0.01), noisy(1.0, 0.04);
  enum Where { at_random, before_first_stop, after_first_stop };
  for (double f : {0.05, 0.1, 0.2, 0.5}) {
    for (Where where : {at_random, before_first_stop, after_first_stop}) {
      int caught = 0;
      double promised = 0;
      for (int r = 0; r < runs; ++r) {
        const auto plan = check::plan_calls(o, rng(), check::Caller::candidate);
        const int n = static_cast<int>(plan.timed.size()), first = plan.stops.front();
        std::vector<bool> skips(static_cast<size_t>(n), false);
        std::bernoulli_distribution share(f);
        for (int i = 0; i < n; ++i) {
          bool skip = share(rng);
          if (where == before_first_stop) skip = i >= first - static_cast<int>(std::ceil(f * first)) && i < first;
          if (where == after_first_stop) skip = i >= first && (i - first) % static_cast<int>(std::round(1 / f)) == 0;
          skips[static_cast<size_t>(i)] = skip;
        }
        const int ran = calls_until_stop(plan, [&](int) { return r % 2 ? noisy(rng) : steady(rng); });
        int skipped = 0;
        bool seen = false;
        for (int i = 0; i < ran; ++i)
          if (skips[static_cast<size_t>(i)]) ++skipped, seen = seen || plan.timed[static_cast<size_t>(i)].checked;
        caught += seen;
        promised += 1 - std::pow(2.0, -20.0 * skipped / ran);
      }
      const double rate = static_cast<double>(caught) / runs, floor = promised / runs;
      INFO("skipping (" << where << "), share " << f << ": caught in " << rate << " of runs, promised " << floor);
      CHECK(rate >= floor - 4 * std::sqrt(floor * (1 - floor) / runs) - 1e-9);
    }
  }
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
