#include "check/degenerate.h"

#include <algorithm>
#include <cstdio>

#include "check/reference_outputs.h"

namespace kbench::check {
namespace {

c10::IValue reference_forward(problems::Reference& reference, const TrialInputs& inputs) {
  torch::NoGradGuard no_grad;
  return reference.forward(reference.make_inputs(inputs.seed, inputs.distribution), inputs.seed);
}

double share_below(const c10::IValue& value, double atol) {
  std::vector<at::Tensor> tensors;
  collect_tensors(value, tensors);
  double below = 0, total = 0;
  for (const auto& t : tensors) {
    below += static_cast<double>(t.abs().lt(atol).sum().item<int64_t>());
    total += static_cast<double>(t.numel());
  }
  return total > 0 ? below / total : 0;
}

double max_change(const c10::IValue& a, const c10::IValue& b) {
  std::vector<at::Tensor> ta, tb;
  collect_tensors(a, ta);
  collect_tensors(b, tb);
  double change = 0;
  for (size_t i = 0; i < ta.size() && i < tb.size(); ++i) {
    if (ta[i].sizes() != tb[i].sizes() || ta[i].numel() == 0) continue;
    const auto x = ta[i].is_floating_point() ? ta[i] : ta[i].to(at::kDouble);
    const auto y = tb[i].is_floating_point() ? tb[i] : tb[i].to(at::kDouble);
    change = std::max(change, (x - y).abs().max().item<double>());
  }
  return change;
}

}  // namespace

std::vector<std::string> Degeneracy::kinds() const {
  std::vector<std::string> out;
  if (seed_invariant) out.push_back("constant");
  if (zeros_pass) out.push_back("below_tolerance");
  else if (below_atol_share >= 0.5) out.push_back("mostly_below_tolerance");
  return out;
}

std::string Degeneracy::note() const {
  std::string text;
  char buf[256];
  if (seed_invariant) {
    std::snprintf(buf, sizeof buf,
                  "on its own inputs the output barely depends on them (it moves by at most %.3g across %d seeds, "
                  "within the tolerance), so a constant answer passes KernelBench's check",
                  max_change, seeds);
    text += buf;
  }
  if (zeros_pass || below_atol_share >= 0.5) {
    std::snprintf(buf, sizeof buf, "%s%.0f%% of its output values are smaller than atol%s", text.empty() ? "" : "; ",
                  100 * below_atol_share, zeros_pass ? ", so zeros pass KernelBench's check" : "");
    text += buf;
  }
  if (text.empty()) return text;
  text += constant_passes_kbench
              ? ". kbench's rules do not catch a constant here either: the output ignores its inputs"
              : ". kbench catches such answers (robustness trials on other inputs, atol scaled to the output)";
  return text;
}

Degeneracy measure_degeneracy(problems::Reference& reference, const CheckOptions& options) {
  Degeneracy d;
  // "KernelBench's check" here is v0.1's (1e-2), the one the published scores used: what a constant
  // or zeros could have passed there.
  auto tol = options.tolerance;
  tol.kernelbench = KernelBenchRule::v0_1;
  const auto first = reference_forward(reference, {options.base_seed, problems::kOwnDistribution});
  const auto zeros = map_tensors(first, [](const at::Tensor& t) { return torch::zeros_like(t); });
  d.seeds = options.trials;
  d.seed_invariant = true;
  d.zeros_pass = compare_outputs(first, zeros, tol).kernelbench_verdict == Verdict::correct;
  d.below_atol_share = share_below(first, tol.atol);
  d.constant_passes_kbench = true;
  for (int i = 1; i < options.trials; ++i) {
    const auto out = reference_forward(reference, {options.base_seed + static_cast<uint64_t>(i), problems::kOwnDistribution});
    const auto as_constant = compare_outputs(out, first, tol);
    d.seed_invariant = d.seed_invariant && as_constant.kernelbench_verdict == Verdict::correct;
    d.constant_passes_kbench = d.constant_passes_kbench && as_constant.verdict == Verdict::correct;
    d.max_change = std::max(d.max_change, max_change(out, first));
    d.zeros_pass = d.zeros_pass && compare_outputs(out, zeros, tol).kernelbench_verdict == Verdict::correct;
    d.below_atol_share = std::max(d.below_atol_share, share_below(out, tol.atol));
  }
  for (size_t j = 0; j < problems::kRobustnessDistributions.size(); ++j) {
    const auto& dist = problems::kRobustnessDistributions[j];
    const auto out = reference_forward(reference, {options.robust_seed + j, dist});
    if (!all_finite(out)) {
      d.nonfinite_distributions.push_back(dist);
      continue;
    }
    auto robust = tol;
    robust.robustness = true;  // as the robustness trials compare
    d.constant_passes_kbench = d.constant_passes_kbench && compare_outputs(out, first, robust).verdict == Verdict::correct;
  }
  return d;
}

nlohmann::json to_json(const Degeneracy& d) {
  return {{"kinds", d.kinds()}, {"note", d.note()}, {"seeds", d.seeds}, {"seed_invariant", d.seed_invariant},
          {"max_change", d.max_change}, {"zeros_pass", d.zeros_pass}, {"below_atol_share", d.below_atol_share},
          {"constant_passes_kbench", d.constant_passes_kbench}, {"nonfinite_distributions", d.nonfinite_distributions}};
}

}  // namespace kbench::check
