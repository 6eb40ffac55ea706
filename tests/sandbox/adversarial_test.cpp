// tests/fixtures/adversarial: hostile submissions, each with the verdict it must get, run on the GPU through
// one worker that is reused after clean verdicts and replaced after damaging ones (as in a batch).
#include <chrono>
#include <cstdio>

#include "fixtures.h"
#include "report/scoring.h"
#include "sandbox/batch.h"
#include "sandbox/worker.h"

#include "catch.h"

using namespace kbench;

namespace {

sandbox::Budgets short_budgets() {
  sandbox::Budgets b;
  b.compile_s = 60;
  b.correctness_s = 20;
  b.timing_s = 60;
  b.host_memory_gib = 16;  // host_exhausts_memory reaches it in seconds, well inside the stage budget
  return b;
}

}  // namespace

TEST_CASE("every adversarial submission gets its verdict, and the harness recovers", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  const auto table = testing::read_json_file(testing::test_dir() / "fixtures" / "adversarial" / "expected.json");
  sandbox::Worker worker(testing::kbench_exe());
  std::map<std::string, double> speedups;  // of the correct ones, by file
  std::printf("%-44s %-18s %-18s %8s\n", "case", "expected", "verdict", "seconds");
  for (const auto& entry : table["submissions"]) {
    sandbox::EvalRequest req;
    req.submission = (testing::test_dir() / "fixtures" / "adversarial" / entry["file"].get<std::string>()).string();
    req.level = entry["level"];
    req.problem = entry["problem"];
    req.check.tolerance = {-1, -1};
    req.timing.trials = 20;
    REQUIRE(sandbox::set_compat(req, entry.value("compat", "none")));
    if (entry.contains("kernelbench_rule"))
      req.check.tolerance.kernelbench = check::kernelbench_rule_from_string(entry["kernelbench_rule"]).value();
    req.check.forbid_torch_ops = entry.value("torch_ops", "") == "forbid";
    const auto t0 = std::chrono::steady_clock::now();
    const auto record = worker.evaluate(req, short_budgets());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto verdict = record.value("verdict", "?");
    const auto file = entry["file"].get<std::string>();
    const double speedup = record.contains("timing") ? record["timing"].value("speedup_eager", 0.0) : 0.0;
    std::printf("adversarial %-32s %-18s %-18s %8.1f  %.2fx  %s\n", (file + (entry.contains("torch_ops") ? " (forbid)" : "")).c_str(),
                entry["verdict"].dump().c_str(), verdict.c_str(), seconds, speedup, record.value("message", "").substr(0, 90).c_str());
    INFO(entry["file"].get<std::string>() << ": " << record.dump().substr(0, 1500));
    CHECK(testing::verdict_expected(entry["verdict"], verdict));
    if (entry.contains("verdict_kernelbench"))
      CHECK(record["verdicts"]["kernelbench"]["verdict"] == entry["verdict_kernelbench"]);
    if (entry.contains("flagged")) CHECK(report::speedup_flagged(record) == entry["flagged"].get<bool>());
    if (entry.contains("audit")) CHECK(record["timing"]["audit"][entry["audit"].get<std::string>()].value("flagged", false));
    if (verdict == "correct") speedups[file] = speedup;
    // A cheat that the timed calls defeat runs no faster than the honest kernel it is built on. The
    // margin is far above run-to-run noise and far below what the cheat gained before (18x).
    if (entry.contains("no_faster_than") && verdict == "correct") {
      const auto honest = speedups.find(entry["no_faster_than"].get<std::string>());
      REQUIRE(honest != speedups.end());
      CHECK(speedup < 1.25 * honest->second);
    }
  }
}

TEST_CASE("a batch of hostile and correct submissions ends with every record and verdict", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  const auto dir = testing::scratch_dir("adversarial-batch");
  std::map<std::string, nlohmann::json> expected;
  int sample = 0;
  const auto table = testing::read_json_file(testing::test_dir() / "fixtures" / "adversarial" / "expected.json");
  auto add = [&](const std::filesystem::path& from, int level, int problem, const nlohmann::json& verdict) {
    const auto name = "level_" + std::to_string(level) + "_problem_" + std::to_string(problem) + "_sample_" +
                      std::to_string(sample++) + "_kernel.cu";
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(from, dir / name);
    expected[name] = verdict;
  };
  for (const auto& e : table["submissions"])
    if (!e.contains("compat") && !e.contains("torch_ops"))  // the batch runs in kbench's own mode
      add(testing::test_dir() / "fixtures" / "adversarial" / e["file"].get<std::string>(), e["level"], e["problem"], e["verdict"]);
  // Ten reference kernels, correct on the H100 when this test was written.
  const auto root = testing::test_dir().parent_path();
  for (const auto& [file, problem] : std::vector<std::pair<std::string, int>>{
           {"19_ReLU", 19}, {"20_LeakyReLU", 20}, {"21_Sigmoid", 21}, {"22_Tanh", 22}, {"26_GELU_", 26},
           {"37_FrobeniusNorm_", 37}, {"39_L2Norm_", 39}, {"49_Max_reduction_over_a_dimension", 49},
           {"88_MinGPTNewGelu", 88}, {"100_HingeLoss", 100}})
    add(root / "level1" / (file + ".cu"), 1, problem, "correct");

  sandbox::BatchOptions o;
  o.dir = dir;
  o.out = dir / "results.jsonl";
  o.progress = false;
  o.base.check.tolerance = {-1, -1};
  o.base.timing.trials = 20;
  o.budgets = short_budgets();
  o.worker_exe = testing::kbench_exe();
  const auto summary = sandbox::run_batch(o);
  std::printf("adversarial batch: %d records in %.1f s\n", summary.evaluated + summary.duplicates, summary.wall_s);
  std::ifstream in(o.out);
  std::map<std::string, std::string> got;
  for (std::string line; std::getline(in, line);) {
    const auto r = nlohmann::json::parse(line);
    got[r["batch"]["file"].get<std::string>()] = r.value("verdict", "?");
  }
  CHECK(got.size() == expected.size());
  for (const auto& [file, verdict] : expected) {
    INFO(file << " expected " << verdict.dump() << " got " << got[file]);
    CHECK(testing::verdict_expected(verdict, got[file]));
  }
}
