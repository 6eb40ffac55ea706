// Degenerate problems, measured: where a comparison at KernelBench v0.1's tolerance cannot tell a right
// answer from a wrong one. Two kinds. "constant": the reference's output barely changes across seeds
// of the problem's own input distribution (within the tolerance), so one fixed answer passes every
// trial (L1#49: the maximum of thousands of values in [0, 1) is 1 give or take a few thousandths).
// "below_tolerance": the outputs are smaller than atol, so zeros pass (softmax over 393216 columns).
// `kbench degenerate` measures every problem on the GPU into problems/degenerate.json; list, show
// and prompt say what it found, and whether kbench's own rules (robustness trials, atol scaled to
// the output) still let a constant through.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/correctness.h"
#include "problems/reference.h"

namespace kbench::check {

struct Degeneracy {
  int seeds = 0;                // seeds of the problem's own distribution compared
  bool seed_invariant = false;  // every seed's output passes KernelBench's comparison against the first's
  double max_change = 0;        // largest max |output(seed) - output(first seed)|
  bool zeros_pass = false;      // all-zero outputs pass KernelBench's comparison on every seed
  double below_atol_share = 0;  // largest share, over seeds, of output values with |value| < atol
  // Does the first seed's output, taken as a constant answer, pass kbench's rules on every trial
  // (own seeds and the robustness distributions that count)? Only where the output ignores its
  // inputs altogether.
  bool constant_passes_kbench = false;
  std::vector<std::string> nonfinite_distributions;  // robustness distributions the reference is not finite on

  // "constant", "below_tolerance", "mostly_below_tolerance" (at least half the values under atol).
  std::vector<std::string> kinds() const;
  // One line for a person or a model (empty when no kind applies).
  std::string note() const;
};

// Runs the reference on `options.trials` seeds from `options.base_seed` and on one seed of each
// robustness distribution (from `options.robust_seed`), at `options.tolerance`. GPU or CPU alike.
Degeneracy measure_degeneracy(problems::Reference& reference, const CheckOptions& options);

// The problem's entry of problems/degenerate.json: the measurements, `kinds` and `note`.
nlohmann::json to_json(const Degeneracy& d);

}  // namespace kbench::check
