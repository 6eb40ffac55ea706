// The baselines a candidate is timed against, as a worker measures and keeps them: the eager
// reference and the compiled package (or the figure recorded for this GPU), once per problem and
// timing options, each entry saying where it was measured. Only figures measured where no
// submission's code had been loaded (`clean`) are handed to later workers (sandbox/gpu_runner.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include "check/timed_calls.h"
#include "sandbox/evaluation.h"

namespace kbench::sandbox {

// Where a baseline is measured: the worker's context (its reference and figures, and whether a
// submission's code has been loaded), the problem, its GPU and the request's timing options.
struct BaselineSite {
  EvalContext& context;
  const problems::Problem& problem;
  const launch::DeviceInfo& gpu;
  const EvalRequest& req;
};

// Figures measured earlier on this GPU (EvalRequest::known_baselines), marked so that a record
// never presents them as timed in this process; the worker's own figures are kept where it has them.
void take_known_baselines(const EvalRequest& req, const problems::Problem& problem, BaselineTimings& baselines);

#ifdef KBENCH_WITH_CUDA
// The eager reference's timed calls: measured once per problem and timing options in this worker
// (or taken from an earlier one), on the problem's own inputs and on each robustness distribution
// the reference runs on.
const nlohmann::json& eager_baseline(const BaselineSite& site, const check::TimedCallOptions& calls);

// The compiled baseline, as --compiled says: none (off); the figure the parent found or made on this
// machine (on-demand: EvalRequest::compiled_figure); else this GPU's AOTInductor package of the
// reference where one exists, timed on fresh inputs as the candidate is, else the figure recorded in
// baselines/<gpu>/compiled.json. The entry's "source" says which.
const nlohmann::json& compiled_baseline(const BaselineSite& site, const check::TimedCallOptions& calls);
#endif

}  // namespace kbench::sandbox
