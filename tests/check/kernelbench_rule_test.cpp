// KernelBench's rule as upstream's eval applies it, by version (check/kernelbench_rule.h): on the
// CPU, its thresholds on tensors made for each edge (the candidate's magnitude in the relative
// part, NaN, infinities, shape and dtype, robustness trials); on the GPU, the fixtures of
// tests/fixtures/kernelbench_rule/ evaluated under both versions, each with the verdicts of expected.json.
#include <limits>

#include <torch/script.h>

#include "check/compare.h"
#include "check/kernelbench_rule.h"
#include "fixtures.h"
#include "sandbox/evaluation.h"
#include "sandbox/worker.h"

#include "catch.h"

using namespace kbench;
using check::KernelBenchRule;
using check::Verdict;

namespace {

check::Comparison compare(const at::Tensor& ref, const at::Tensor& cand, KernelBenchRule rule, bool robustness = false) {
  return check::compare_outputs(ref, cand, {1e-2, 1e-2, robustness, rule});
}

at::Tensor one(float v) { return torch::tensor({v}); }

}  // namespace

TEST_CASE("KernelBench's rules go by name: today's (1e-4) and v0.1's (1e-2)", "[check]") {
  CHECK(check::to_string(KernelBenchRule::current) == "kernelbench");
  CHECK(check::to_string(KernelBenchRule::v0_1) == "kernelbench-v0.1");
  CHECK(check::kernelbench_rule_from_string("kernelbench-v0.1") == KernelBenchRule::v0_1);
  CHECK(check::kernelbench_rule_from_string("kernelbench") == KernelBenchRule::current);
  CHECK_FALSE(check::kernelbench_rule_from_string("v0.1").has_value());
  CHECK(check::tolerance_of(KernelBenchRule::current) == 1e-4);
  CHECK(check::tolerance_of(KernelBenchRule::v0_1) == 1e-2);
}

TEST_CASE("an error between 1e-4 and 1e-2 fails today's rule, passes v0.1's and kbench's", "[check]") {
  torch::manual_seed(3);
  const auto ref = torch::rand({10000}) + 0.5;
  const auto cand = ref * 1.001;  // 0.1 % off
  for (const auto rule : {KernelBenchRule::current, KernelBenchRule::v0_1}) {
    const auto c = compare(ref, cand, rule);
    INFO(check::to_string(rule) << ": " << c.kernelbench_message);
    CHECK(c.verdict == Verdict::correct);
    CHECK(c.kernelbench_verdict == (rule == KernelBenchRule::current ? Verdict::value_mismatch : Verdict::correct));
  }
  // kbench's own atol and rtol, however large, are not KernelBench's.
  CHECK(check::compare_outputs(ref, cand, {0.5, 0.5}).kernelbench_verdict == Verdict::value_mismatch);
  CHECK(compare(ref, ref * 1.00003, KernelBenchRule::current).kernelbench_verdict == Verdict::correct);
}

TEST_CASE("KernelBench's relative tolerance scales the candidate, as torch.allclose(reference, candidate)", "[check]") {
  // |0 - 0.0101| <= 0.01 + 0.01 * 0.0101 holds; with the reference's magnitude it would not.
  CHECK(compare(one(0.0f), one(0.0101f), KernelBenchRule::v0_1).kernelbench_verdict == Verdict::correct);
  CHECK(compare(one(0.0101f), one(0.0f), KernelBenchRule::v0_1).kernelbench_verdict == Verdict::value_mismatch);
  // Today's rule at its edge: 1e-4 off from 0 passes, 2e-4 does not.
  CHECK(compare(one(0.0f), one(1e-4f), KernelBenchRule::current).kernelbench_verdict == Verdict::correct);
  CHECK(compare(one(0.0f), one(2e-4f), KernelBenchRule::current).kernelbench_verdict == Verdict::value_mismatch);
}

TEST_CASE("under KernelBench's rule NaN is close to nothing, an infinity only to itself", "[check]") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const auto rule : {KernelBenchRule::current, KernelBenchRule::v0_1}) {
    const auto both_nan = compare(torch::tensor({1.0f, nan}), torch::tensor({1.0f, nan}), rule);
    CHECK(both_nan.kernelbench_verdict == Verdict::value_mismatch);  // allclose's equal_nan is False
    CHECK(both_nan.verdict == Verdict::correct);                  // kbench's: NaN where the reference has NaN
    CHECK(compare(torch::tensor({1.0f, inf}), torch::tensor({1.0f, inf}), rule).kernelbench_verdict == Verdict::correct);
    CHECK(compare(torch::tensor({1.0f, 1.0f}), torch::tensor({1.0f, inf}), rule).kernelbench_verdict == Verdict::value_mismatch);
    CHECK(compare(torch::tensor({1.0f, 1.0f}), torch::tensor({1.0f, nan}), rule).kernelbench_verdict == Verdict::value_mismatch);
  }
}

TEST_CASE("a shape or a dtype other than the reference's fails KernelBench's rule and kbench's", "[check]") {
  const auto ref = torch::ones({4, 4});
  const auto shape = compare(ref, torch::ones({16}), KernelBenchRule::current);
  CHECK(shape.verdict == Verdict::shape_mismatch);
  CHECK(shape.kernelbench_verdict == Verdict::shape_mismatch);
  const auto dtype = compare(ref, torch::ones({4, 4}, at::kDouble), KernelBenchRule::v0_1);
  CHECK(dtype.verdict == Verdict::dtype_mismatch);
  CHECK(dtype.kernelbench_verdict == Verdict::dtype_mismatch);  // upstream's allclose raises: a failure there too
}

TEST_CASE("KernelBench's rule is not applied on robustness trials, which KernelBench does not run", "[check]") {
  const auto ref = torch::full({100}, 0.5f);
  const auto c = compare(ref, ref * 1.001, KernelBenchRule::current, /*robustness=*/true);
  CHECK(c.kernelbench_verdict == Verdict::correct);
  CHECK(c.upstream_mismatched == 0);
}

TEST_CASE("kbench eval --compat names the rule of KernelBench's verdict; requests carry it to the worker", "[check]") {
  sandbox::EvalRequest req;
  CHECK(sandbox::compat_mode(req) == "none");
  CHECK(req.check.tolerance.kernelbench == KernelBenchRule::current);
  REQUIRE(sandbox::set_compat(req, "kernelbench-v0.1"));
  CHECK(req.compat_kernelbench);
  CHECK(sandbox::compat_mode(req) == "kernelbench-v0.1");
  const auto back = sandbox::EvalRequest::from_json(req.to_json());
  CHECK(back.compat_kernelbench);
  CHECK(back.check.tolerance.kernelbench == KernelBenchRule::v0_1);
  CHECK_FALSE(sandbox::set_compat(req, "upstream"));
  CHECK(sandbox::compat_mode(req) == "kernelbench-v0.1");  // unchanged
  REQUIRE(sandbox::set_compat(req, "none"));
  CHECK_FALSE(req.compat_kernelbench);
  CHECK(req.check.tolerance.kernelbench == KernelBenchRule::current);
}

TEST_CASE("each KernelBench-rule fixture gets its verdicts under both rules", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  const auto dir = testing::test_dir() / "fixtures" / "kernelbench_rule";
  const auto table = testing::read_json_file(dir / "expected.json")["fixtures"];
  sandbox::Worker worker(testing::kbench_exe());
  const sandbox::Budgets budgets;  // builds get build_s (600 s) each
  for (const auto& e : table) {
    for (const std::string mode : {"kernelbench", "kernelbench-v0.1"}) {
      sandbox::EvalRequest req;
      req.submission = (dir / e["file"].get<std::string>()).string();
      req.level = e["level"];
      req.problem = e["problem"];
      req.check.tolerance.atol = req.check.tolerance.rtol = -1;
      req.time = false;
      REQUIRE(sandbox::set_compat(req, mode));
      const auto record = worker.evaluate(req, budgets);
      INFO(e["file"].get<std::string>() << " --compat " << mode << ": " << record.dump().substr(0, 1500));
      CHECK(record["verdict"] == e["verdict_" + mode]);
      CHECK(record["verdicts"]["kbench"]["verdict"] == e["verdict"]);
      CHECK(record["verdicts"]["kernelbench"]["rule"] == mode);
      CHECK(record["compat"] == mode);
    }
  }
}
