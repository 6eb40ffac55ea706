#include "check/kernelbench_rule.h"

namespace kbench::check {

std::string to_string(KernelBenchRule rule) { return rule == KernelBenchRule::v0_1 ? "kernelbench-v0.1" : "kernelbench"; }

std::optional<KernelBenchRule> kernelbench_rule_from_string(const std::string& name) {
  for (const auto rule : {KernelBenchRule::current, KernelBenchRule::v0_1})
    if (to_string(rule) == name) return rule;
  return std::nullopt;
}

double tolerance_of(KernelBenchRule rule) { return rule == KernelBenchRule::v0_1 ? 1e-2 : 1e-4; }

}  // namespace kbench::check
