// The measurement loop: warm-up, then up to N trials (a `finished` hook may end them sooner), each
// with the L2 flushed first, bracketed by CUDA events on the current stream, and followed by a
// device synchronisation. What runs between the calls (fresh inputs before each, checks after) and
// when they end is the caller's: check/timed_calls.h.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "timing/clocks.h"
#include "timing/statistics.h"

namespace kbench::timing {

// How many timed calls run. `fixed`: all of them (KernelBench's count, for comparing with its
// figures). `adaptive`: from `min_trials` on, until the mean is known within `target`
// (timing/stopping_rule.h) with every call at the GPU's unthrottled clock (check::ends_run), at most
// all of them. `both`: adaptive's calls, run to the maximum, so that one run gives the adaptive
// figure and the figure of all the calls, on the same calls.
enum class TimingMode { fixed, adaptive, both };
const char* mode_name(TimingMode mode);
// The mode called `name`; false where none is.
bool parse_mode(const std::string& name, TimingMode& mode);

struct TimingOptions {
  int warmup = 3;
  int trials = 100;  // the most, under an adaptive mode
  bool flush_l2 = true;
  double noisy_cv = 0.10;  // a coefficient of variation above this flags the measurement as noisy
  // Fixed by default: KernelBench's count, and adaptive figures still part from it by up to 2.2%
  // in some runs (README, "How kbench measures").
  TimingMode mode = TimingMode::fixed;
  int min_trials = 20;   // adaptive: calls before the first stop, and between two stops
  double target = 0.01;  // adaptive: the 95% interval's half-width, as a share of the mean
};

struct Measurement {
  std::vector<double> trial_ms;
  std::vector<unsigned> trial_sm_mhz;  // the SM clock read after each trial (0 where NVML is not available)
  Statistics stats;
  bool noisy = false;
  int hidden_work_trials = 0;  // trials whose device work outlasted the timed stream (side streams)
  ClockReport clocks;          // SM clock range and throttling seen across the trials
  std::vector<std::string> warnings;
};

// What measure() calls around the calls of `run`, outside the timed region.
struct CallHooks {
  // Before every call, warm-up ones included (`call` is -warmup..-1 for them, then 0..trials-1),
  // before the L2 flush: where the call's inputs are drawn.
  std::function<void(int call)> before;
  // After every timed call, once the device is synchronised: where its output is checked.
  std::function<void(int call)> after;
  // After `after`, with the calls so far (their times and SM clocks): true ends the timed calls there.
  std::function<bool(int call, const Measurement& so_far)> finished;
};

// Times `run` (which enqueues work on the current stream) on the current device. GPU builds only;
// elsewhere it throws with a clear message.
Measurement measure(const std::function<void()>& run, const TimingOptions& options, const CallHooks& hooks = {});

// The same measurement restricted to the trials `keep` accepts: statistics and the noise flag of
// those; clocks, hidden work and warnings stay those of the whole loop.
Measurement select_trials(const Measurement& all, const std::function<bool(int trial)>& keep,
                          const TimingOptions& options);

nlohmann::json to_json(const Measurement& m);

}  // namespace kbench::timing
