// kbench ci's comparison with the recorded results (report/regression.h), on records made by hand.
#include "report/regression.h"

#include "catch.h"

using namespace kbench;

namespace {

nlohmann::json record(const std::string& file, const std::string& verdict, double speedup) {
  return {{"batch", {{"file", file}}}, {"verdict", verdict}, {"timing", {{"speedup_eager", speedup}}}};
}

}  // namespace

TEST_CASE("ci: a kernel refused by --torch-ops forbid is listed as refused, a changed verdict still regresses", "[report]") {
  const nlohmann::json recorded = {{"level2/12_Gemm.cu", {{"verdict", "correct"}, {"speedup_eager", 1.2}}},
                                   {"level1/19_ReLU.cu", {{"verdict", "correct"}, {"speedup_eager", 1.0}}},
                                   {"level1/21_Sigmoid.cu", {{"verdict", "correct"}, {"speedup_eager", 1.0}}}};
  auto refused = record("level2/12_Gemm.cu", "no_custom_kernel", 0);
  refused["torch_ops_refused"] = {"aten::matmul"};
  const auto rows = report::compare_with_recorded(
      recorded, {refused, record("level1/19_ReLU.cu", "correct", 1.0), record("level1/21_Sigmoid.cu", "no_custom_kernel", 0)},
      /*gpu_run=*/true);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].status == report::RegressionStatus::refused);
  CHECK(rows[0].to_json()["status"] == "refused");
  CHECK_THAT(rows[0].why, contains_text("aten::matmul"));
  CHECK(rows[1].status == report::RegressionStatus::ok);
  CHECK(rows[2].status == report::RegressionStatus::regressed);  // refused by no policy: a kernel that stopped doing the work
  CHECK(rows[2].to_json()["status"] == "REGRESSED");
  CHECK(rows[2].verdict == check::Verdict::no_custom_kernel);
  CHECK(rows[2].recorded_verdict == check::Verdict::correct);
}
