// The submission fixtures of tests/fixtures/submissions/expected.json, each with its expected verdict.
#include <cstdlib>

#include "fixtures.h"
#include "sandbox/evaluation.h"
#include "sandbox/worker.h"

#include "catch.h"

using namespace kbench;

namespace {

sandbox::EvalRequest request_for(const nlohmann::json& entry) {
  sandbox::EvalRequest req;
  req.submission = (testing::test_dir() / "fixtures" / "submissions" / entry["file"].get<std::string>()).string();
  req.level = entry["level"];
  req.problem = entry["problem"];
  req.check.tolerance = {-1, -1};
  return req;
}

}  // namespace

// Without a GPU the compile side decides: split, NVRTC, kernel signatures, host program.
TEST_CASE("submissions get their compile-side verdicts without running", "[check]") {
  const auto table = testing::read_json_file(testing::test_dir() / "fixtures" / "submissions" / "expected.json");
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
  const auto table = testing::read_json_file(testing::test_dir() / "fixtures" / "submissions" / "expected.json");
  for (const auto& entry : table["submissions"]) {
    auto req = request_for(entry);
    req.timing.trials = 10;
    sandbox::Budgets budgets;
    if (entry.contains("budget_s")) budgets.correctness_s = entry["budget_s"];
    const auto record = sandbox::evaluate_isolated(req, budgets, testing::kbench_exe());
    std::cout << entry["file"].get<std::string>() << ": " << record.value("verdict", "?") << " — "
              << record.value("message", "") << "\n";
    INFO(entry["file"].get<std::string>() << ": " << record.dump().substr(0, 2000));
    CHECK(record.value("verdict", "") == entry["verdict"].get<std::string>());
  }
}

TEST_CASE("a reference without its archive is a request error that says how to make it", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  // An empty cache: the worker's read of the archive (begun beside CUDA's start-up) fails, and the
  // evaluation ends as an error of the request, not as a verdict on the submission.
  const auto empty_cache = std::filesystem::temp_directory_path() / "kbench-empty-cache";
  testing::remove_tree(empty_cache);
  sandbox::EvalRequest req;
  req.submission = (testing::test_dir().parent_path() / "level1" / "19_ReLU.cu").string();
  req.level = 1;
  req.problem = 19;
  const auto record = [&] {
    const testing::ScopedEnv kbench_cache("KBENCH_CACHE", empty_cache.string());
    return sandbox::evaluate_isolated(req, {}, testing::kbench_exe());
  }();
  INFO(record.dump().substr(0, 2000));
  REQUIRE(record.contains("error"));
  CHECK(!record.contains("verdict"));
  CHECK_THAT(record["error"].get<std::string>(), contains_text("no TorchScript archive"));
  CHECK_THAT(record["error"].get<std::string>(), contains_text("export_problems.py --level 1 --problem 19"));
}
