// --profile end to end on the GPU, with the project's own reference kernels and one submission fixture
// (tests/fixtures/submissions/l2_12_cublas_epilogue.cu, cuBLAS beside its kernel) as candidates.
#include "fixtures.h"
#include "sandbox/evaluation.h"
#include "sandbox/worker.h"

#include "catch.h"

using namespace kbench;

namespace {

nlohmann::json profiled(int level, int problem, const std::string& file) {
  sandbox::EvalRequest req;
  req.submission = (testing::test_dir().parent_path() / file).string();
  req.level = level;
  req.problem = problem;
  req.check.tolerance = {-1, -1};
  req.timing.trials = 20;
  req.profile = true;
  return sandbox::evaluate_isolated(req, {}, testing::kbench_exe());
}

}  // namespace

TEST_CASE("a two-launch candidate's profile has both kernels, their times adding up to the timed mean", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  const auto record = profiled(1, 37, "level1/37_FrobeniusNorm_.cu");
  INFO(record.dump(1).substr(0, 4000));
  REQUIRE(record["verdict"] == "correct");
  const auto& c = record["profile"]["candidate"];
  REQUIRE(c["launches"].size() == 2);
  CHECK(c["launches"][0]["kernel"] == "sum_sq_partials");
  CHECK(c["launches"][1]["kernel"] == "scale_by_inv_norm");
  double sum = 0;
  for (const auto& l : c["launches"]) {
    CHECK(l["registers_per_thread"].get<int>() > 0);
    CHECK(l["occupancy"].get<double>() > 0);
    sum += l["gpu_ms"].get<double>();
  }
  const double timed = record["timing"]["candidate"]["mean_ms"].get<double>();
  CHECK(sum == Approx(timed).epsilon(0.10));
  CHECK(c["stream"].get<std::string>().rfind("held", 0) == 0);
  // The reference's norm and division, and the bandwidth figures beside both.
  CHECK(record["profile"]["reference"]["ops"].size() >= 2);
  CHECK(record["profile"]["roofline"]["candidate"]["bandwidth_fraction"].get<double>() > 0.3);
}

TEST_CASE("the profile of a candidate that calls cuBLAS shows the matmul among its PyTorch ops, beside its kernel", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  const auto record = profiled(2, 12, "tests/fixtures/submissions/l2_12_cublas_epilogue.cu");
  INFO(record.dump(1).substr(0, 4000));
  REQUIRE(record["verdict"] == "correct");
  const auto& c = record["profile"]["candidate"];
  REQUIRE(c["torch_ops_summary"].size() >= 1);
  CHECK(c["torch_ops_summary"][0]["op"] == "aten::matmul");
  CHECK(c["torch_ops_summary"][0]["share"].get<double>() > 0.5);  // the GEMM dominates
  CHECK(c["kernels"][0]["kernel"] == "bias_mul_leaky_relu");
  CHECK(record["profile"]["roofline"]["flops"].get<double>() > 1.3e11);
}

TEST_CASE("Nsight Compute's figures for each kernel with --ncu, or a message that ncu is absent", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  sandbox::EvalRequest req;
  req.submission = (testing::test_dir().parent_path() / "level1/19_ReLU.cu").string();
  req.level = 1;
  req.problem = 19;
  req.check.tolerance = {-1, -1};
  req.timing.trials = 10;
  req.profile = req.ncu = true;
  const auto record = sandbox::evaluate_isolated(req, {}, testing::kbench_exe());
  INFO(record.dump(1).substr(0, 4000));
  REQUIRE(record["profile"].contains("ncu"));
  const auto& ncu = record["profile"]["ncu"];
  if (ncu.contains("unavailable")) {
    CHECK_THAT(ncu["unavailable"].get<std::string>(), contains_text("not installed"));
    return;
  }
  REQUIRE(ncu.contains("kernels"));
  const auto& relu = record["profile"]["candidate"]["kernels"][0];
  CHECK(relu["ncu"]["dram_throughput_pct"].get<double>() > 50);  // a streaming elementwise kernel
  CHECK_THAT(relu["bound"].get<std::string>(), Catch::Matchers::StartsWith("memory"));
}
