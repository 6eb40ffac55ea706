#include <fstream>

#include "fixtures.h"
#include "report/printers.h"
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
