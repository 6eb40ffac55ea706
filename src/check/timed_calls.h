// Timed calls as honest as checked ones. A candidate that caches answers in device memory, or that
// computes only when it may be checked, must gain nothing from it, so the timed calls follow three
// rules:
// - No two calls see the same inputs. Every call, warm-up included, gets inputs drawn afresh from a
//   seed of this run's (drawn per run, unpredictable), in place of the last call's and before the L2
//   flush, outside the timed region. Pointers may repeat; contents never do.
// - A checked call looks like any other. Each timed call is checked with a probability fixed by its
//   place alone, independently of every other, and its check runs after it: the reference on the
//   same inputs (drawn again from the call's seed, so that the candidate cannot change what it is
//   compared with), then the comparison. Nothing before a call differs, and what a call could learn
//   about earlier checks says nothing about the next. A candidate that skips work on a share f of
//   the N timed calls of its run escapes with probability (1 - p)^(f N) when every call's p is the
//   same; p = 1 - 2^(-20 / N) makes that 2^(-20 f) whatever N is: caught with probability 0.75 for
//   f = 10%, 0.9375 for 20%, 0.99902 for 50%, at least 1 - (1 - f)^10 for every f up to 0.5. About
//   13 checks of 109 calls.
// - A run that may stop early keeps that promise whatever its length. It may stop only after a
//   few counts of calls fixed before it starts (its stops: CallPlan::stops), and each call is checked
//   with the probability of the first stop at or after it, p_i = 1 - 2^(-20 / stop(i)). A run that
//   ends at stop S has only calls with stop(i) <= S, so p_i >= 1 - 2^(-20 / S) for each, and f S
//   skipped calls escape with probability at most 2^(-20 f S / S) = 2^(-20 f), however the stop
//   was reached: the checks are drawn before the run from the run's secret, and nothing the
//   candidate does moves them. The first calls are checked more often than the last (29 calls: p =
//   0.38, about 11 checks; run to 109 calls: about 25).
// - Speed may not depend on the input distribution. Beside the problem's own inputs, a few timed
//   calls, at places drawn per run, use each robustness distribution; the reported times are the
//   own distribution's, and the speedup audit compares the two (timing/speedup_audit.h).
// The baselines (the eager reference, a compiled package) are trusted code: their calls are timed
// the same way, but on one input set per distribution, drawn once and used by that distribution's
// calls in a row, which costs one draw instead of one per call. A baseline's own calls come first,
// all of them, and its distributions' calls in a run of their own after them, whatever the mode: on
// the H100 an eager reference's own calls ran up to 80% slower right after its distributions' calls,
// and an adaptive run that put them between its own calls measured a different eager figure than a
// fixed one.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/compare.h"
#include "check/verdict.h"
#include "compile/host_program.h"
#include "problems/reference.h"
#include "timing/timer.h"

namespace kbench::check {

struct TimedCallOptions {
  timing::TimingOptions timing;  // warm-up and timed calls of the problem's own distribution
  // Robustness distributions timed beside the own one, each on `calls_per_distribution` calls.
  std::vector<std::string> distributions;
  int calls_per_distribution = 3;
  uint64_t seed = 0;  // this run's secret: input seeds, order and checks of the calls (0: drawn)
  bool offload_candidate_output = false;  // as CheckOptions's, for the checked calls
  // A settled candidate's launches per call (CorrectnessResult::settled_launches; -1: none): a timed
  // call that launches another count, or loads a new kernel, compiled or autotuned inside the timed
  // calls, and is `inconsistent`.
  int64_t settled_launches = -1;
};

// The order of one run's calls: which inputs each gets, and which are checked. Drawn from the run's
// seed alone, so that a record can say how to repeat it.
struct CallPlan {
  struct Call {
    uint64_t seed = 0;                               // of the call's inputs
    std::string distribution = problems::kOwnDistribution;
    bool checked = false;
  };
  std::vector<Call> warmup;
  std::vector<Call> timed;
  std::vector<double> check_probability;  // each timed call's chance of being checked
  std::vector<int> stops;                 // the counts of timed calls after which the run may end; the last: all
};
// A candidate's plan: fresh inputs for every call, the distributions' calls shuffled among the own
// ones of the first stop, each timed call checked with check_probability() of its stop. A
// baseline's: no checks, and each distribution's calls in a row (they share one input set), where
// the candidate's are shuffled. Under `fixed` timing the only stop is after all the calls; under an
// adaptive mode the first comes after `min_trials` own calls and every distribution's, the next
// after each `min_trials` more.
enum class Caller { candidate, baseline };
CallPlan plan_calls(const TimedCallOptions& options, uint64_t seed, Caller caller);

// The chance that each call of a run that may end after `timed_calls` calls is checked:
// 1 - 2^(-20 / timed_calls).
double check_probability(int timed_calls);

// Whether the run ends after the calls timed in `trial_ms`, whose SM clocks read `sm_mhz` after
// each: at one of the plan's stops where the calls of the problem's own inputs so far know their
// mean within `target` and every call so far ran at `unthrottled_mhz` or above (0: no clock is
// known, none is asked), or at the last. A GPU below its clock is throttled by the heat or power of
// earlier work, and its speed changes as the clock moves: on the H100, L2#56's eager reference ran
// twenty calls at 1740-1755 MHz and 5.93 ms, then sped up with the clock to 1965 MHz and 5.40 ms,
// and an adaptive figure from those twenty calls was 6.3% off the figure of all the calls.
bool ends_run(const CallPlan& plan, const std::vector<double>& trial_ms, const std::vector<unsigned>& sm_mhz,
              double target, unsigned unthrottled_mhz);

// The chance that none of `calls` timed calls of which a share `skipped` skip their work is checked.
double miss_probability(double check_probability, int calls, double skipped);

struct TimedCalls {
  timing::Measurement own;                                  // the problem's own distribution
  std::map<std::string, timing::Statistics> distributions;  // each robustness distribution timed
  uint64_t seed = 0;
  bool fresh_inputs = true;  // false: a baseline's, one input set per distribution
  timing::TimingMode mode = timing::TimingMode::fixed;
  int timed_calls = 0;  // the calls that count: up to the stop the mode chose
  int max_calls = 0;    // the plan's calls
  int calls_run = 0;    // timed calls made: timed_calls, but max_calls under `both`
  double target = 0;    // adaptive modes: the interval asked for (a baseline's is half a candidate's)
  int min_calls = 0;    // adaptive modes: own calls before the first stop and between two stops
  double interval = 0;  // the 95% interval's half-width reached, as a share of the mean
  double drift = 0;     // the later half's mean against the earlier half's, as a share
  unsigned unthrottled_sm_mhz = 0;  // the SM clock every call before an early stop reached (0: not known)
  // Under `both`: the own distribution's measurement over every call, the fixed count's figure.
  std::optional<timing::Measurement> all_calls;
  double check_probability = 0;  // the least of the calls that count: what the guarantee rests on
  int checked = 0;
  // Checks that could not count (the reference not finite on a robustness distribution's inputs).
  int checks_skipped = 0;
  // A checked call whose output was wrong: `inconsistent`. kbench's alone: KernelBench checks no
  // timed call.
  Verdict verdict = Verdict::correct;
  std::string message;
  double redraw_ms = 0;  // drawing inputs (untimed), summed over the draws
  double checks_ms = 0;  // the checks: inputs drawn again, the reference, the comparison
  double check_inputs_ms = 0, check_reference_ms = 0, check_compare_ms = 0;  // of checks_ms: its three parts
};

// Times a baseline's `call` on `reference`'s inputs, one set per distribution, with no check: the
// eager reference (its forward seeded with the call's seed) or a compiled package. Its own calls
// (stopped as the mode says, with twice the calls before each stop and half the target of a
// candidate's) and then its distributions' (each `calls_per_distribution`), in two runs:
// baseline_passes().
TimedCalls time_calls(problems::Reference& reference, const std::function<void(const std::vector<c10::IValue>&, uint64_t seed)>& call,
                      const TimedCallOptions& options);
std::pair<TimedCallOptions, TimedCallOptions> baseline_passes(const TimedCallOptions& options);

// Times the candidate's forward on fresh inputs and checks a random share of the calls against the
// reference (`tolerance`; robustness distributions under the robustness trials' rule).
TimedCalls time_candidate(problems::Reference& reference, const compile::HostProgram& host,
                          const c10::Dict<std::string, at::Tensor>& params, const TimedCallOptions& options,
                          const Tolerance& tolerance);

// The record's fragment: the own distribution's measurement, each distribution's mean, the protocol.
nlohmann::json to_json(const TimedCalls& t);

// A measurement made earlier (a record's `eager` entry) as the per-distribution means the speedup
// audit compares.
std::map<std::string, double> distribution_means(const nlohmann::json& timing_entry);

}  // namespace kbench::check
