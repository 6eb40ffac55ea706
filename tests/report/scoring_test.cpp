#include <fstream>

#include "fixtures.h"
#include "report/printers.h"
#include "report/records.h"
#include "report/scoring.h"

#include "catch.h"

using namespace kbench;

namespace {

nlohmann::json record(int level, int id, const std::string& verdict, double speedup = 0) {
  nlohmann::json r = {{"problem", {{"level", level}, {"id", id}}}, {"verdict", verdict}};
  if (speedup > 0) r["timing"] = {{"speedup_eager", speedup}};
  return r;
}

}  // namespace

TEST_CASE("pass@k follows the unbiased estimator", "[report]") {
  CHECK(report::at_k(10, 0, 1) == Approx(0.0));
  CHECK(report::at_k(10, 10, 5) == Approx(1.0));
  CHECK(report::at_k(10, 3, 1) == Approx(0.3));
  CHECK(report::at_k(4, 1, 2) == Approx(0.5));  // 1 - C(3,2)/C(4,2) = 1 - 3/6
}

TEST_CASE("fast_p counts correct and faster problems over the whole level", "[report]") {
  const std::vector<nlohmann::json> records = {record(1, 1, "correct", 2.0), record(1, 2, "correct", 0.8),
                                               record(1, 3, "value_mismatch"), record(1, 4, "correct", 1.2)};
  const auto levels = report::score(records, {{1, 10}});
  REQUIRE(levels.size() == 1);
  const auto& s = levels[0];
  CHECK(s.pass_at_1 == Approx(0.3));          // 3 correct of 10 problems in the level
  CHECK(s.fast_eager.at(0.0) == Approx(0.3));
  CHECK(s.fast_eager.at(1.0) == Approx(0.2));  // 2.0 and 1.2
  CHECK(s.fast_eager.at(1.5) == Approx(0.1));
  CHECK(s.geomean_speedup_eager == Approx(std::cbrt(2.0 * 0.8 * 1.2)));
  CHECK(s.verdicts.at("correct") == 3);
  const auto svg = report::make_printer("svg")->render({levels, records});
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK_THAT(svg, contains_text("polyline"));
}

TEST_CASE("kbench report scores against every problem of the level", "[report]") {
  const auto path = std::filesystem::temp_directory_path() / "kbench-report-test.jsonl";
  std::ofstream(path) << record(1, 19, "correct", 1.5).dump() << "\n" << "{\"torn\": " << "\n";
  const auto out = nlohmann::json::parse(testing::run_kbench("report --json " + path.string()));
  REQUIRE(out["levels"].size() == 1);
  CHECK(out["levels"][0]["problems_in_level"] == 100);
  CHECK(out["levels"][0]["fast_p_eager"]["fast_1.0"].get<double>() == Approx(0.01));
}

TEST_CASE("flagged speedups count towards pass@1 but not fast_p, unless asked", "[report]") {
  auto flagged = record(1, 100, "correct", 3161.0);
  flagged["timing"]["audit"] = {{"flagged", true}, {"reason", "under the bandwidth floor"}};
  const std::vector<nlohmann::json> records = {flagged, record(1, 19, "correct", 1.2)};
  const auto s = report::score(records, {{1, 10}})[0];
  CHECK(s.pass_at_1 == Approx(0.2));
  CHECK(s.fast_eager.at(1.0) == Approx(0.1));  // the flagged 3161x is left out
  CHECK(s.geomean_speedup_eager == Approx(1.2));
  const auto counted = report::score(records, {{1, 10}}, {false, true})[0];
  CHECK(counted.fast_eager.at(1.0) == Approx(0.2));
}

TEST_CASE("KernelBench's verdicts count fragile candidates as correct, kbench's do not", "[report]") {
  auto fragile = record(1, 100, "fragile", 2.0);
  fragile["verdicts"] = {{"kbench", {{"verdict", "fragile"}}}, {"kernelbench", {{"verdict", "correct"}}}};
  auto compat = record(1, 95, "correct", 3.0);  // run with --compat kernelbench: the verdict is KernelBench's
  compat["compat"] = "kernelbench";
  compat["verdicts"] = {{"kbench", {{"verdict", "fragile"}}}, {"kernelbench", {{"verdict", "correct"}}}};
  const std::vector<nlohmann::json> records = {fragile, compat, record(1, 19, "correct", 1.5), record(1, 20, "crash")};
  CHECK(report::verdict_of(compat, report::VerdictOf::kbench) == kbench::check::Verdict::fragile);
  CHECK(report::verdict_of(compat) == kbench::check::Verdict::correct);
  // An early verdict holds for both.
  CHECK(report::verdict_of(record(1, 20, "crash"), report::VerdictOf::kernelbench) == kbench::check::Verdict::crash);
  CHECK_FALSE(report::verdict_of(record(1, 21, "corect")).has_value());  // a name kbench does not know is none
  const auto kbench = report::score(records, {{1, 10}})[0];
  CHECK(kbench.pass_at_1 == Approx(0.1));
  CHECK(kbench.verdicts.at("fragile") == 2);
  const auto kernelbench = report::score(records, {{1, 10}}, {true, false})[0];
  CHECK(kernelbench.pass_at_1 == Approx(0.3));
  CHECK(kernelbench.fast_eager.at(1.0) == Approx(0.3));

  const auto path = std::filesystem::temp_directory_path() / "kbench-report-both.jsonl";
  {
    std::ofstream out(path);
    int sample = 0;
    for (auto r : records) {
      r["batch"] = {{"file", "sample_" + std::to_string(sample++) + ".cu"}};  // one line per submission
      out << r.dump() << "\n";
    }
  }
  const auto text = testing::run_kbench("report " + path.string());
  CHECK_THAT(text, contains_text("KernelBench's verdicts"));
  CHECK_THAT(text, contains_text("against torch.compile"));
  const auto json = nlohmann::json::parse(testing::run_kbench("report --json " + path.string()));
  CHECK(json["kernelbench_levels"][0]["pass@1"].get<double>() == Approx(0.03));  // of level 1's 100 problems
  CHECK(json["levels"][0]["pass@1"].get<double>() == Approx(0.01));
}

TEST_CASE("kbench report says which of KernelBench's rules its verdicts used", "[report]") {
  auto today = record(1, 19, "correct", 1.5);
  today["verdicts"] = {{"kbench", {{"verdict", "correct"}}},
                       {"kernelbench", {{"verdict", "value_mismatch"}, {"rule", "kernelbench"}, {"tolerance", 1e-4}}}};
  auto paper = record(1, 20, "correct", 1.5);
  paper["verdicts"] = {{"kbench", {{"verdict", "correct"}}},
                       {"kernelbench", {{"verdict", "correct"}, {"rule", "kernelbench-v0.1"}, {"tolerance", 1e-2}}}};
  auto older = record(1, 21, "correct", 1.5);  // made before the rules were named: atol as given
  older["verdicts"] = {{"kbench", {{"verdict", "correct"}}}, {"kernelbench", {{"verdict", "correct"}}}};
  older["correctness"] = {{"atol", 1e-2}};
  const auto rules = report::kernelbench_rules({today, paper, older, record(1, 22, "crash")});
  REQUIRE(rules.size() == 3);
  CHECK(rules.at("kernelbench").tolerance == 1e-4);
  CHECK(rules.at("kernelbench-v0.1").records == 1);
  CHECK(rules.at("").tolerance == 1e-2);

  const auto path = std::filesystem::temp_directory_path() / "kbench-report-rules.jsonl";
  std::ofstream(path) << today.dump() << "\n";
  const auto text = testing::run_kbench("report " + path.string());
  CHECK_THAT(text, contains_text("KernelBench's verdicts (rule kernelbench (atol = rtol = 0.0001)"));
  const auto json = nlohmann::json::parse(testing::run_kbench("report --json " + path.string()));
  CHECK(json["kernelbench_rules"]["kernelbench"]["records"] == 1);
}

TEST_CASE("kbench report lists flagged records and leaves them out of fast_p", "[report]") {
  auto flagged = record(1, 100, "correct", 3161.0);
  flagged["timing"]["audit"] = {{"flagged", true}, {"reason", "3161.0x over eager, under the bandwidth floor"}};
  flagged["batch"] = {{"file", "level_1_problem_100_sample_0_kernel.cu"}};
  const auto path = std::filesystem::temp_directory_path() / "kbench-report-flagged.jsonl";
  std::ofstream(path) << flagged.dump() << "\n";
  const auto text = testing::run_kbench("report " + path.string());
  CHECK_THAT(text, contains_text("1 speedup(s) flagged"));
  CHECK_THAT(text, contains_text("level_1_problem_100_sample_0_kernel.cu"));
  const auto json = nlohmann::json::parse(testing::run_kbench("report --json " + path.string()));
  CHECK(json["flagged"].size() == 1);
  CHECK(json["levels"][0]["fast_p_eager"]["fast_1.0"].get<double>() == Approx(0.0));
  const auto counted = nlohmann::json::parse(testing::run_kbench("report --json --include-flagged " + path.string()));
  CHECK(counted["levels"][0]["fast_p_eager"]["fast_1.0"].get<double>() == Approx(0.01));
}

TEST_CASE("the report says how many correct submissions used PyTorch compute ops in forward", "[report]") {
  auto with_ops = record(2, 12, "correct", 1.01);
  with_ops["host"] = {{"computing_ops", {"aten::matmul"}}, {"computing_ops_ran", {{"aten::matmul", 8}}}};
  auto kernels_only = record(2, 13, "correct", 1.4);
  kernels_only["host"] = {{"computing_ops", nlohmann::json::array()}, {"computing_ops_ran", nlohmann::json::object()}};
  auto older = record(2, 14, "correct", 2.0);  // before kbench recorded the ops that ran: those its program names
  older["host"] = {{"computing_ops", {"aten::relu"}}};
  auto wrong = record(2, 15, "value_mismatch");
  wrong["host"] = with_ops["host"];
  CHECK(report::used_torch_compute_ops(with_ops));
  CHECK_FALSE(report::used_torch_compute_ops(kernels_only));
  CHECK(report::used_torch_compute_ops(older));
  const std::vector<nlohmann::json> records = {with_ops, kernels_only, older, wrong};
  CHECK(report::score(records, {{2, 100}})[0].correct_using_torch_ops == 2);  // of 3 correct
  const auto path = std::filesystem::temp_directory_path() / "kbench-report-torch-ops.jsonl";
  {
    std::ofstream out(path);
    int n = 0;
    for (auto r : records) {
      r["submission"] = {{"path", "sample_" + std::to_string(n++) + ".cu"}};  // one record per submission
      out << r.dump() << "\n";
    }
  }
  CHECK_THAT(testing::run_kbench("report " + path.string()), contains_text("PyTorch compute ops in forward: 2 of 3 correct"));
}

TEST_CASE("kbench report says per level how far correct candidates are from their bandwidth floor", "[report]") {
  auto timed = [](int id, const std::string& verdict, double mean_ms, double floor_ms) {
    auto r = record(1, id, verdict, 1.0);
    r["timing"]["candidate"] = {{"mean_ms", mean_ms}};
    r["timing"]["audit"] = {{"flagged", false}, {"bandwidth", {{"flagged", false}, {"floor_ms", floor_ms}}}};
    return r;
  };
  auto older = timed(3, "correct", 10.0, 2.0);  // a record from before the distribution audit: the floor at audit's top
  older["timing"]["audit"] = {{"flagged", false}, {"floor_ms", 2.0}};
  const std::vector<nlohmann::json> records = {timed(1, "correct", 1.2, 1.0), timed(2, "correct", 3.0, 1.0), older,
                                               timed(4, "value_mismatch", 1.0, 1.0)};
  const auto levels = report::score(records, {{1, 10}});
  REQUIRE(levels.size() == 1);
  CHECK(levels[0].floor_candidates == 3);  // not the wrong one
  CHECK(levels[0].floor_median == Approx(3.0));
  CHECK(levels[0].floor_best == Approx(1.2));
  CHECK(levels[0].floor_within_2x == Approx(1.0 / 3));
  const auto text = report::make_printer("terminal")->render(report::score_run(records, {{1, 10}}, false));
  CHECK_THAT(text, contains_text("Distance from the bandwidth floor"));
  CHECK_THAT(text, contains_text("3.00x"));
  CHECK(report::to_json(levels[0])["bandwidth_floor"]["median_times_floor"].get<double>() == Approx(3.0));
}
