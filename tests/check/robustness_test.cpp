// The rules that make `correct` hard to earn without computing the answer, checked on the CPU:
// the comparison with atol scaled to the output, what a failed robustness trial becomes, and the
// degenerate-problem measurement (on small scripted models saved as archives). The GPU test
// (tests/sandbox/adversarial_test.cpp) runs the same rules on real submissions.
#include <cstdlib>

#include <ATen/Context.h>
#include <torch/script.h>

#include "check/compare.h"
#include "check/correctness.h"
#include "check/degenerate.h"
#include "check/exact_reference.h"
#include "problems/reference.h"

#include "catch.h"
#include "fixtures.h"

using namespace kbench;
using check::Verdict;

TEST_CASE("atol shrinks with a small output, so zeros fail kbench's rule but pass KernelBench's", "[check]") {
  // Softmax-like: 100000 values near 1e-5 that sum to 1.
  const auto ref = torch::softmax(torch::rand({100000}, torch::kFloat), 0);
  const auto zeros = torch::zeros_like(ref);
  const auto cmp = check::compare_outputs(ref, zeros, {1e-2, 1e-2});
  CHECK(cmp.kernelbench_verdict == Verdict::correct);
  CHECK(cmp.verdict == Verdict::value_mismatch);
  CHECK(cmp.smallest_scaled_atol == Approx(1e-2 * ref.abs().mean().item<double>()).epsilon(1e-3));
  CHECK_THAT(cmp.message, contains_text("mean |value|"));
  // A right answer (float rounding away) passes both.
  const auto close = ref * (1 + 1e-5);
  const auto ok = check::compare_outputs(ref, close, {1e-2, 1e-2});
  CHECK(ok.verdict == Verdict::correct);
  CHECK(ok.kernelbench_verdict == Verdict::correct);
}

TEST_CASE("outputs of magnitude 1 and more keep KernelBench v0.1's atol", "[check]") {
  const auto ref = torch::rand({1000}) * 4 + 1;  // mean |value| about 3
  const auto off = ref + 5e-3;                   // within 1e-2 + 1e-2 |ref|
  const auto cmp = check::compare_outputs(ref, off, {1e-2, 1e-2, false, check::KernelBenchRule::v0_1});
  CHECK(cmp.verdict == Verdict::correct);
  CHECK(cmp.kernelbench_verdict == Verdict::correct);
  CHECK(cmp.smallest_scaled_atol == Approx(1e-2));
  CHECK(check::scaled_atol(1e-2, 0.5) == Approx(5e-3));
  CHECK(check::scaled_atol(1e-2, 7.0) == Approx(1e-2));
}

TEST_CASE("robustness trials tolerate rounding relative to the output's scale, not wrong answers", "[check]") {
  // A cumulative sum of signed values: rounding accumulates with the terms while the sum crosses 0.
  torch::manual_seed(3);
  const auto x = torch::randn({32768}) * 18;
  const auto ref = x.cumsum(0);                        // float32, one order of additions
  const auto exact = x.to(at::kDouble).cumsum(0).to(at::kFloat);  // what a more careful kernel gives
  check::Tolerance robust{1e-2, 1e-2, true};
  CHECK(check::compare_outputs(ref, exact, robust).verdict == Verdict::correct);
  CHECK(check::kbench_atol(robust, 2000.0) == Approx(20.0));  // 1% of the output's mean magnitude
  CHECK(check::kbench_atol({1e-2, 1e-2, false}, 2000.0) == Approx(1e-2));
  // A kernel right only on non-negative inputs is off by the size of the values: still caught.
  const auto relu_only = torch::relu(x).cumsum(0);
  CHECK(check::compare_outputs(ref, relu_only, robust).verdict == Verdict::value_mismatch);
  CHECK(check::compare_outputs(ref, torch::zeros_like(ref), robust).verdict == Verdict::value_mismatch);
}

TEST_CASE("an all-zero reference is matched by zeros under both rules, and NaN never passes", "[check]") {
  const auto ref = torch::zeros({64});
  CHECK(check::compare_outputs(ref, torch::zeros({64}), {1e-2, 1e-2}).verdict == Verdict::correct);
  auto nan = torch::zeros({64});
  nan[3] = std::nan("");
  const auto cmp = check::compare_outputs(ref, nan, {1e-2, 1e-2});
  CHECK(cmp.verdict == Verdict::value_mismatch);
  CHECK(cmp.kernelbench_verdict == Verdict::value_mismatch);
}

TEST_CASE("a number is compared as a one-element tensor, under both rules", "[check]") {
  const auto cmp = check::compare_outputs(c10::IValue(1e-4), c10::IValue(0.0), {1e-2, 1e-2});
  CHECK(cmp.kernelbench_verdict == Verdict::correct);
  CHECK(cmp.verdict == Verdict::value_mismatch);
}

TEST_CASE("a wrong answer on robustness inputs is fragile, a crash or a mutation stays what it is", "[check]") {
  CHECK(check::robustness_verdict(Verdict::value_mismatch) == Verdict::fragile);
  CHECK(check::robustness_verdict(Verdict::shape_mismatch) == Verdict::fragile);
  CHECK(check::robustness_verdict(Verdict::dtype_mismatch) == Verdict::fragile);
  CHECK(check::robustness_verdict(Verdict::runtime_error) == Verdict::runtime_error);
  CHECK(check::robustness_verdict(Verdict::input_mutated) == Verdict::input_mutated);
  CHECK(check::robustness_verdict(Verdict::no_custom_kernel) == Verdict::no_custom_kernel);
  CHECK(check::verdict_from_string("fragile") == Verdict::fragile);
  const auto a = check::draw_robust_seed(), b = check::draw_robust_seed();
  CHECK(a >= 1000);
  CHECK(a != b);  // a collision of two 30-bit draws: about one in a billion
}

namespace {

// A problem whose model is `forward_body` over one [256, 256] U[0, 1) input, saved as the archive
// problems::Reference loads, in a cache of its own.
problems::Problem scripted_problem(const std::string& name, const std::string& forward_body,
                                   const std::vector<std::pair<std::string, at::Tensor>>& parameters = {}) {
  const auto cache = std::filesystem::temp_directory_path() / "kbench-degenerate-test";
  ::setenv("KBENCH_CACHE", cache.c_str(), 1);
  problems::Problem p;
  p.level = 9;
  p.id = 1;
  p.name = name;
  p.sha256 = "0123456789abcdef";
  p.input_generator =
      "def _draw(x: Tensor, dist: str) -> Tensor:\n"
      "    if dist == 'own':\n        return x.uniform_()\n"
      "    return x.normal_().mul_(3.0)\n"
      "def make_inputs(device: Device, dist: str = 'own'):\n"
      "    return (_draw(torch.empty(256, 256, device=device), dist),)\n";
  torch::jit::Module m(name);
  for (const auto& [parameter, value] : parameters) m.register_parameter(parameter, value, /*is_buffer=*/false);
  m.define("def forward(self, x: Tensor) -> Tensor:\n    " + forward_body + "\n");
  const auto archive = problems::archive_path(p, problems::libtorch_version());
  std::filesystem::create_directories(archive.parent_path());
  m.save(archive.string());
  return p;
}

check::Degeneracy measured(const std::string& name, const std::string& body) {
  problems::Reference reference(scripted_problem(name, body), torch::kCPU);
  check::CheckOptions options;
  options.robust_seed = 1000;
  return check::measure_degeneracy(reference, options);
}

}  // namespace

TEST_CASE("degenerate problems are found: constant outputs, outputs under atol, and real ones", "[check]") {
  const testing::ScopedEnv kbench_cache("KBENCH_CACHE");  // scripted_problem sets it

  // mean(x) over 65536 U[0, 1) values: 0.5 give or take 0.001 on every seed.
  const auto mean = measured("mean_of_uniform", "return x.mean()");
  CHECK(mean.seed_invariant);
  CHECK_FALSE(mean.constant_passes_kbench);  // the robustness inputs move it
  CHECK(mean.kinds() == std::vector<std::string>{"constant"});
  CHECK_THAT(mean.note(), contains_text("kbench catches"));

  // Tiny values: zeros pass KernelBench's comparison (and so does any output of another seed).
  const auto tiny = measured("tiny_values", "return x * 1e-4");
  CHECK(tiny.zeros_pass);
  CHECK(tiny.below_atol_share == Approx(1.0));
  CHECK(tiny.kinds() == std::vector<std::string>{"constant", "below_tolerance"});
  CHECK_FALSE(tiny.constant_passes_kbench);  // atol scaled to 1e-4-sized values

  // An output that ignores its input: nothing can catch a constant there, and the note says so.
  const auto fixed = measured("ignores_input", "return x.sum() * 0.0 + 3.0");
  CHECK(fixed.seed_invariant);
  CHECK(fixed.constant_passes_kbench);
  CHECK_THAT(fixed.note(), contains_text("do not catch"));

  // A real function of its input.
  const auto real = measured("doubles", "return x * 2.0");
  CHECK_FALSE(real.seed_invariant);
  CHECK_FALSE(real.zeros_pass);
  CHECK(real.kinds().empty());
  CHECK(real.note().empty());
  CHECK(real.max_change > 0.5);

  const auto j = check::to_json(mean);
  CHECK(j["kinds"] == nlohmann::json::array({"constant"}));
  CHECK(j["seeds"] == 5);
}

TEST_CASE("a candidate that matches the reference only as float64 computes it passes kbench's rule, and says so",
          "[check]") {
  // (x * w + 1) - x * w on U[0, 1) inputs: float32 loses the 1 wherever x * w is over 2^24 (it gives
  // 0 or 2), float64 keeps it; the exact answer is 1 everywhere. With w = 1.69e7 that is 0.7% of
  // the outputs, as float32's rounding puts few out; with w = 1e8, 83%, as a wrong kernel does.
  const testing::ScopedEnv kbench_cache("KBENCH_CACHE");  // scripted_problem sets it
  const auto cancels = "return (x * self.w + 1.0) - x * self.w";
  problems::Reference reference(scripted_problem("float64_retry", cancels, {{"w", torch::full({256}, 1.69e7)}}), torch::kCPU);
  const check::TrialInputs made{7, "own"};
  const auto float32 = reference.forward(reference.make_inputs(7, "own"), 7).toTensor();
  check::Tolerance tolerance;
  c10::IValue exact = torch::ones_like(float32);
  const auto against_float32 = check::compare_outputs(float32, exact, tolerance);
  REQUIRE(against_float32.verdict == Verdict::value_mismatch);
  CHECK(against_float32.mismatched * 100 < float32.numel());
  const auto retried = check::with_exact_reference_retry(against_float32, exact, tolerance, reference, made, false);
  CHECK(retried.verdict == Verdict::correct);
  CHECK_THAT(retried.message, contains_text("in float64"));
  CHECK(retried.max_abs_error == Approx(0.0).margin(1e-6));
  CHECK(retried.kernelbench_verdict == against_float32.kernelbench_verdict);  // KernelBench's rule: PyTorch's reference
  // The reference itself is untouched: float32 parameters, the same output.
  CHECK(reference.state().at("w").scalar_type() == at::kFloat);
  CHECK(reference.module().attr("w").toTensor().scalar_type() == at::kFloat);
  CHECK(torch::equal(reference.forward(reference.make_inputs(7, "own"), 7).toTensor(), float32));

  // Most values out: not tried, though float64 would agree.
  problems::Reference most(scripted_problem("float64_not_tried", cancels, {{"w", torch::full({256}, 1e8)}}), torch::kCPU);
  const auto most_float32 = most.forward(most.make_inputs(7, "own"), 7).toTensor();
  c10::IValue most_exact = torch::ones_like(most_float32);
  const auto against_most = check::compare_outputs(most_float32, most_exact, tolerance);
  REQUIRE(against_most.mismatched * 100 > most_float32.numel());
  CHECK(check::with_exact_reference_retry(against_most, most_exact, tolerance, most, made, false).verdict ==
        Verdict::value_mismatch);

  // An output wrong by more than the float32 reference's rounding stays wrong, with the first message.
  c10::IValue wrong = torch::full_like(float32, 3.0);
  const auto against_float32_wrong = check::compare_outputs(float32, wrong, tolerance);
  const auto still = check::with_exact_reference_retry(against_float32_wrong, wrong, tolerance, reference, made, false);
  CHECK(still.verdict == Verdict::value_mismatch);
  CHECK(still.message == against_float32_wrong.message);

  // A module that cannot run in float64 (a float32 operand of its own: mm refuses mixed dtypes)
  // keeps the first verdict, and nothing throws.
  problems::Reference mixed(scripted_problem("float64_refused", "return torch.mm(x, torch.ones(256, 256))"), torch::kCPU);
  const auto mixed_output = mixed.forward(mixed.make_inputs(7, "own"), 7).toTensor();
  c10::IValue off = mixed_output * 2.0;
  const auto against_mixed = check::compare_outputs(mixed_output, off, tolerance);
  REQUIRE(against_mixed.verdict == Verdict::value_mismatch);
  check::Comparison kept;
  REQUIRE_NOTHROW(kept = check::with_exact_reference_retry(against_mixed, off, tolerance, mixed, made, false));
  CHECK(kept.verdict == Verdict::value_mismatch);
  CHECK(kept.message == against_mixed.message);
}

TEST_CASE("an allocation that failed is told apart from other errors, also inside a TorchScript traceback", "[check]") {
  CHECK(kbench::check::is_out_of_memory(
      "The following operation failed in the TorchScript interpreter.\nRuntimeError: CUDA out of memory. Tried to allocate 8.00 GiB."));
  CHECK_FALSE(kbench::check::is_out_of_memory("RuntimeError: index 7 is out of bounds for dimension 0"));
}

TEST_CASE("a candidate that fails against the reference's output is compared with the reference run again without TF32",
          "[check]") {
  // On the CPU TF32 changes nothing, so the reference's own output stands for the exact one, and an
  // output off by 1 for the reference as TF32 computed it (what large inputs do to a convolution).
  const testing::ScopedEnv kbench_cache("KBENCH_CACHE");  // scripted_problem sets it
  problems::Reference reference(scripted_problem("exact_retry", "return x * 2.0"), torch::kCPU);
  const check::TrialInputs made{7, "own"};
  const auto exact = reference.forward(reference.make_inputs(7, "own"), 7).toTensor();
  const c10::IValue rounded = exact + 1.0;
  check::Tolerance tolerance;
  at::globalContext().setAllowTF32CuDNN(true);

  c10::IValue right = exact.clone();
  const auto against_rounded = check::compare_outputs(rounded, right, tolerance);
  REQUIRE(against_rounded.verdict == Verdict::value_mismatch);
  const auto retried = check::with_exact_reference_retry(against_rounded, right, tolerance, reference, made, false);
  CHECK(retried.verdict == Verdict::correct);
  CHECK_THAT(retried.message, contains_text("without TF32"));
  CHECK(retried.max_abs_error == Approx(0.0).margin(1e-6));
  CHECK(retried.kernelbench_verdict == against_rounded.kernelbench_verdict);  // KernelBench's rule keeps PyTorch's defaults
  CHECK(at::globalContext().allowTF32CuDNN());                           // the flag as it was

  // A wrong output stays wrong, with the first comparison's message.
  c10::IValue wrong = exact * 3.0;
  const auto against_rounded_wrong = check::compare_outputs(rounded, wrong, tolerance);
  const auto still = check::with_exact_reference_retry(against_rounded_wrong, wrong, tolerance, reference, made, false);
  CHECK(still.verdict == Verdict::value_mismatch);
  CHECK(still.message == against_rounded_wrong.message);
  // Rounding cannot change a shape: no second reference run, the first comparison stands.
  c10::IValue halved = exact.narrow(0, 0, exact.size(0) / 2).clone();
  const auto against_rounded_shape = check::compare_outputs(rounded, halved, tolerance);
  REQUIRE(against_rounded_shape.verdict == Verdict::shape_mismatch);
  CHECK(check::with_exact_reference_retry(against_rounded_shape, halved, tolerance, reference, made, false).message ==
        against_rounded_shape.message);
}
