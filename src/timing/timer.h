// The measurement protocol: warm-up, then N trials, each with the L2 flushed first, bracketed by CUDA
// events on the current stream, and followed by a device synchronisation.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "timing/clocks.h"
#include "timing/statistics.h"

namespace kbench::timing {

struct TimingOptions {
  int warmup = 3;
  int trials = 100;
  bool flush_l2 = true;
  double noisy_cv = 0.10;  // a coefficient of variation above this flags the measurement as noisy
};

struct Measurement {
  std::vector<double> trial_ms;
  Statistics stats;
  bool noisy = false;
  int hidden_work_trials = 0;  // trials whose device work outlasted the timed stream (side streams)
  ClockReport clocks;          // SM clock range and throttling seen across the trials
  std::vector<std::string> warnings;
};

// Times `run` (which enqueues work on the current stream) on the current device. GPU builds only;
// elsewhere it throws with a clear message. `after_trial(i)` runs after each synchronised trial,
// outside the timed region (the caller checks the outputs of timed runs there).
Measurement measure(const std::function<void()>& run, const TimingOptions& options,
                    const std::function<void(int)>& after_trial = {});

nlohmann::json to_json(const Measurement& m);

}  // namespace kbench::timing
