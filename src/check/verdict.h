// The verdicts of ../DESIGN.md: what happened to a submission, in one word and one line.
#pragma once

#include <optional>
#include <string>

namespace kbench::check {

enum class Verdict {
  correct,
  compile_error,
  host_error,
  launch_error,
  runtime_error,
  timeout,
  crash,
  shape_mismatch,
  dtype_mismatch,
  value_mismatch,
  input_mutated,
  no_custom_kernel,
  inconsistent,
  fragile,      // right on the problem's own inputs only: wrong on the robustness trials' inputs
  not_checked,  // compiled, but nothing ran it (no GPU, or --compile-only): never counts as correct
  unsupported_backend,  // a ModelNew whose kernels use a backend kbench does not run (Triton, ...)
  state_changed,  // the submission changed process state the reference and the baselines share
};

std::string to_string(Verdict v);
std::optional<Verdict> verdict_from_string(const std::string& s);
std::string describe(Verdict v);  // what the verdict means, for README and --help

}  // namespace kbench::check
