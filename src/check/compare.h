// Output comparison: structure, shape, dtype, then values within atol + rtol * |reference|.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <torch/script.h>

#include "check/verdict.h"

namespace kbench::check {

struct Tolerance {
  double atol = 1e-2;
  double rtol = 1e-2;
};

struct Comparison {
  Verdict verdict = Verdict::correct;
  std::string message;      // empty when correct
  double max_abs_error = 0;
  double max_rel_error = 0;
  int64_t mismatched = 0;   // elements outside tolerance
};

Comparison compare_outputs(const c10::IValue& reference, const c10::IValue& candidate, const Tolerance& tol);

// A cheap digest of a tensor's bytes (two chunked sums of its bit patterns), to detect inputs written
// by the candidate without keeping a second copy of multi-GB inputs.
std::pair<int64_t, int64_t> fingerprint(const at::Tensor& t);

// One fingerprint per value, in order ((0, 0) for a value that is not a tensor), or per entry.
using Fingerprints = std::vector<std::pair<int64_t, int64_t>>;
Fingerprints fingerprints(const std::vector<c10::IValue>& values);
Fingerprints fingerprints(const c10::Dict<std::string, at::Tensor>& tensors);

}  // namespace kbench::check
