// KernelBench's correctness rule, by the version that defines it. Upstream's eval
// (eval_kernel_against_ref) calls a candidate correct when, on every trial, the output has the
// reference's shape and torch.allclose(reference, candidate, atol=t, rtol=t) holds: each element
// within t + t * |candidate| (the relative part scales the second argument, the candidate), NaN
// never close to anything, infinities close only to themselves, a dtype other than the reference's
// an error. The versions differ in t: v0 and v0.1 (the paper, the leaderboards) used 1e-2; today's
// takes it from the precision (get_tolerance_for_precision: 1e-4 for float32, kbench's only
// precision).
#pragma once

#include <optional>
#include <string>

namespace kbench::check {

enum class KernelBenchRule {
  current,  // "kernelbench": upstream's main today, float32: atol = rtol = 1e-4
  v0_1,     // "kernelbench-v0.1": the paper's, atol = rtol = 1e-2
};

std::string to_string(KernelBenchRule rule);
std::optional<KernelBenchRule> kernelbench_rule_from_string(const std::string& name);

// atol and rtol alike.
double tolerance_of(KernelBenchRule rule);

}  // namespace kbench::check
