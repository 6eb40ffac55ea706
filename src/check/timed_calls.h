// Timed calls as honest as checked ones. A candidate that caches answers in device memory, or that
// computes only when it may be checked, must gain nothing from it, so the timed calls follow three
// rules:
// - No two calls see the same inputs. Every call, warm-up included, gets inputs drawn afresh from a
//   seed of this run's (drawn per run, unpredictable), in place of the last call's and before the L2
//   flush, outside the timed region. Pointers may repeat; contents never do.
// - A checked call looks like any other. Each timed call is checked with the same probability p,
//   independently of every other, and its check runs after it: the reference on the same inputs
//   (drawn again from the call's seed, so that the candidate cannot change what it is compared
//   with), then the comparison. Nothing before a call differs, and what a call could learn about
//   earlier checks says nothing about the next. A candidate that skips work on a share f of its N
//   timed calls escapes with probability (1 - p)^(f N); p = 1 - 2^(-20 / N) makes that 2^(-20 f)
//   whatever N is: caught with probability 0.75 for f = 10%, 0.9375 for 20%, 0.99902 for 50%, at
//   least 1 - (1 - f)^10 for every f up to 0.5. About 13 checks of 109 calls.
// - Speed may not depend on the input distribution. Beside the problem's own inputs, a few timed
//   calls, at places drawn per run, use each robustness distribution; the reported times are the
//   own distribution's, and the speedup audit compares the two (timing/speedup_audit.h).
// The baselines (the eager reference, a compiled package) are trusted code: their calls are timed
// the same way, but on one input set per distribution, drawn once and used by that distribution's
// calls in a row, which costs one draw instead of one per call.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
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
  double check_probability = 0;  // each timed call's chance of being checked
};
// A candidate's plan: fresh inputs for every call, the distributions' calls shuffled among the own
// ones, each timed call checked with check_probability(). A baseline's: no checks, and each
// distribution's calls in a row (they share one input set).
enum class Caller { candidate, baseline };
CallPlan plan_calls(const TimedCallOptions& options, uint64_t seed, Caller caller);

// The chance that each of `timed_calls` calls is checked: 1 - 2^(-20 / timed_calls).
double check_probability(int timed_calls);

// The chance that none of `calls` timed calls of which a share `skipped` skip their work is checked.
double miss_probability(double check_probability, int calls, double skipped);

struct TimedCalls {
  timing::Measurement own;                                  // the problem's own distribution
  std::map<std::string, timing::Statistics> distributions;  // each robustness distribution timed
  uint64_t seed = 0;
  bool fresh_inputs = true;  // false: a baseline's, one input set per distribution
  int timed_calls = 0;
  double check_probability = 0;
  int checked = 0;
  // Checks that could not count (the reference not finite on a robustness distribution's inputs).
  int checks_skipped = 0;
  // A checked call whose output was wrong, under kbench's rule and under KernelBench's (on the
  // problem's own inputs only): `inconsistent`.
  Verdict verdict = Verdict::correct, upstream_verdict = Verdict::correct;
  std::string message, upstream_message;
  double redraw_ms = 0;  // drawing inputs (untimed), summed over the draws
  double checks_ms = 0;  // the checks: inputs drawn again, the reference, the comparison
};

// Times a baseline's `call` on `reference`'s inputs, one set per distribution, with no check: the
// eager reference (its forward seeded with the call's seed) or a compiled package.
TimedCalls time_calls(problems::Reference& reference, const std::function<void(const std::vector<c10::IValue>&, uint64_t seed)>& call,
                      const TimedCallOptions& options);

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
