// Output comparison: structure, shape, dtype, then values, under two rules at once. KernelBench's is
// upstream's torch.allclose under the version named in the tolerance (check/kernelbench_rule.h).
// kbench's is |candidate - reference| <= atol + rtol * |reference|, with atol scaled to each output tensor's
// magnitude, atol * min(1, mean |reference|): for outputs of magnitude 1 and more nothing changes,
// while for smaller ones a comparison that no answer could fail (softmax over 393216 columns gives
// values near 2.5e-6, far below atol = 1e-2, so zeros would pass) becomes one that can. Zeros never
// pass it unless the reference is all zeros.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <torch/script.h>

#include "check/kernelbench_rule.h"
#include "check/verdict.h"

namespace kbench::check {

struct Tolerance {
  double atol = 1e-2;
  double rtol = 1e-2;
  // Robustness trials: kbench's atol is at least rtol x mean |reference|. Signed inputs make sums
  // cancel (a cumulative sum, a row sum of a product), so an output value can be far smaller than
  // the terms it came from, and float32 rounding, the reference's own included, is then relative
  // to the terms: a right kernel must not fail for it. A kernel that is right only on the problem's
  // own inputs is off by the size of the values themselves, and still fails. KernelBench has no
  // such trials: its rule is not evaluated, and the upstream fields stay `correct`.
  bool robustness = false;
  // KernelBench's rule: its own tolerance, whatever kbench's atol and rtol are.
  KernelBenchRule kernelbench = KernelBenchRule::current;
};

struct Comparison {
  Verdict verdict = Verdict::correct;           // kbench's rule (atol scaled to the output)
  std::string message;                          // empty when correct
  Verdict kernelbench_verdict = Verdict::correct;  // KernelBench's rule (tol.kernelbench)
  std::string kernelbench_message;
  double max_abs_error = 0;
  double max_rel_error = 0;
  double smallest_scaled_atol = -1;  // kbench's atol for the output tensor that made it smallest (-1: no tensor)
  int64_t mismatched = 0;            // elements outside kbench's tolerance
  int64_t upstream_mismatched = 0;   // ... outside KernelBench's
};

// kbench's absolute tolerance for a reference output whose mean |value| is `mean_abs`:
// atol x min(1, mean_abs); for robustness trials at least rtol x mean_abs.
double scaled_atol(double atol, double mean_abs);
double kbench_atol(const Tolerance& tol, double mean_abs);

Comparison compare_outputs(const c10::IValue& reference, const c10::IValue& candidate, const Tolerance& tol);

// A cheap digest of a tensor's bytes (two chunked sums of its bit patterns), to detect inputs written
// by the candidate without keeping a second copy of multi-GB inputs.
std::pair<int64_t, int64_t> fingerprint(const at::Tensor& t);

// One fingerprint per value, in order ((0, 0) for a value that is not a tensor), or per entry.
using Fingerprints = std::vector<std::pair<int64_t, int64_t>>;
Fingerprints fingerprints(const std::vector<c10::IValue>& values);
// A module's parameters and buffers by name, but for the running statistics of torch.nn's
// normalisation layers (`is_running_statistic`): in training mode, as KernelBench runs both models,
// every forward of the reference (and of a ModelNew's BatchNorm) updates them, and they do not enter
// the output, so they are the models' own bookkeeping, not weights a candidate may write.
bool is_running_statistic(const std::string& name);
Fingerprints fingerprints(const c10::Dict<std::string, at::Tensor>& tensors);

}  // namespace kbench::check
