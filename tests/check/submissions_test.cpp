// The submission fixtures of tests/submissions/expected.json, each with its expected verdict.
#include "fixtures.h"
#include "sandbox/evaluation.h"
#include "sandbox/worker.h"

#include "catch.h"

using namespace kbench;

namespace {

sandbox::EvalRequest request_for(const nlohmann::json& entry) {
  sandbox::EvalRequest req;
  req.submission = (testing::test_dir() / "submissions" / entry["file"].get<std::string>()).string();
  req.level = entry["level"];
  req.problem = entry["problem"];
  req.check.tolerance = {-1, -1};
  return req;
}

}  // namespace

// Without a GPU the compile side decides: split, NVRTC, kernel signatures, host program.
TEST_CASE("submissions get their compile-side verdicts without running", "[check]") {
  const auto table = testing::read_json_file(testing::test_dir() / "submissions" / "expected.json");
  for (const auto& entry : table["submissions"]) {
    auto req = request_for(entry);
    req.compile_only = true;
    const auto record = sandbox::evaluate(req);
    INFO(entry["file"].get<std::string>() << ": " << record.value("message", ""));
    CHECK(record["verdict"] == entry["cpu_verdict"]);
  }
}

TEST_CASE("submissions get their verdicts on the GPU, each in its own worker", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  const auto table = testing::read_json_file(testing::test_dir() / "submissions" / "expected.json");
  for (const auto& entry : table["submissions"]) {
    auto req = request_for(entry);
    req.timing.trials = 10;
    sandbox::Budgets budgets;
    if (entry.contains("budget_s")) budgets.correctness_s = entry["budget_s"];
    const auto record = sandbox::evaluate_isolated(req, budgets, KBENCH_EXE);
    std::cout << entry["file"].get<std::string>() << ": " << record.value("verdict", "?") << " — "
              << record.value("message", "") << "\n";
    INFO(entry["file"].get<std::string>() << ": " << record.dump().substr(0, 2000));
    CHECK(record.value("verdict", "") == entry["verdict"].get<std::string>());
  }
}
