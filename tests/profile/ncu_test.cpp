// Nsight Compute's side of --ncu without a GPU: reading its CSV export (a saved export in ncu's raw
// page layout), the command line, the "no ncu" message, and the whole ncu pass with a stand-in ncu
// that runs a stand-in worker and "exports" the saved file.
#include <cstdlib>
#include <fstream>
#include <sys/stat.h>

#include "fixtures.h"
#include "profile/ncu.h"
#include "sandbox/ncu_pass.h"

#include "catch.h"

using namespace kbench;

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string script(const std::string& name, const std::string& body) {
  const auto path = std::filesystem::temp_directory_path() / ("kbench-ncu-test-" + name + ".sh");
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path.string();
}

// A profiled record of a two-kernel candidate, as the profile stage writes it (the fields the ncu
// pass and the bounds read).
nlohmann::json profiled_record() {
  return {{"profile",
           {{"candidate",
             {{"multiprocessors", 132},
              {"kernels",
               {{{"kernel", "scale_by_inv_norm"}, {"launches", 1}, {"gpu_ms", 4.0}, {"grid_blocks", 1056}, {"occupancy", 1.0}},
                {{"kernel", "sum_sq_partials"}, {"launches", 1}, {"gpu_ms", 2.1}, {"grid_blocks", 1056}, {"occupancy", 1.0}}}}}}}}};
}

}  // namespace

TEST_CASE("ncu's raw CSV export gives per-kernel throughput, occupancy, L2 hits and the top stall", "[profile]") {
  const auto figures = profile::parse_ncu_raw_csv(read_file(testing::test_dir() / "fixtures" / "profile" / "ncu_raw_export.csv"));
  const auto& kernels = figures["kernels"];
  REQUIRE(kernels.size() == 2);
  CHECK(kernels[0]["kernel"] == "sum_sq_partials");
  CHECK(kernels[0]["launches"] == 1);
  CHECK(kernels[0]["dram_throughput_pct"].get<double>() == Approx(91.2));
  CHECK(kernels[0]["duration_ms"].get<double>() == Approx(2.104576));  // "2,104,576" nanoseconds
  // not_selected (20) is higher, but an eligible warp that was not picked waits on nothing.
  CHECK(kernels[0]["top_stall"] == "long_scoreboard");
  // Two launches of one kernel: their mean.
  CHECK(kernels[1]["launches"] == 2);
  CHECK(kernels[1]["sm_throughput_pct"].get<double>() == Approx(32.0));
  CHECK(kernels[1]["achieved_occupancy_pct"].get<double>() == Approx(94.0));
  CHECK(kernels[1]["l2_hit_rate_pct"].get<double>() == Approx(10.0));
}

TEST_CASE("an ncu export without a kernel column is an error, not an empty profile", "[profile]") {
  CHECK_THROWS_WITH(profile::parse_ncu_raw_csv("\"ID\",\"Metric\"\n\"0\",\"1\"\n"), contains_text("Kernel Name"));
  CHECK_THROWS_WITH(profile::parse_ncu_raw_csv(""), contains_text("no kernel"));
}

TEST_CASE("ncu is told the candidate's kernels, the NVTX range and the report", "[profile]") {
  const auto args = profile::ncu_command("/opt/ncu", "/tmp/r.ncu-rep", {"relu", "scale"}, 32);
  const std::string line = [&] {
    std::string s;
    for (const auto& a : args) s += a + " ";
    return s;
  }();
  CHECK(args.front() == "/opt/ncu");
  CHECK_THAT(line, contains_text("--kernel-name regex:^(relu|scale)$"));
  CHECK_THAT(line, contains_text("--nvtx-include kbench_candidate/"));
  CHECK_THAT(line, contains_text("--export /tmp/r.ncu-rep"));
  CHECK_THAT(line, contains_text("dram__throughput.avg.pct_of_peak_sustained_elapsed"));
}

TEST_CASE("without ncu, kbench says where it looked and how to point it at one", "[profile]") {
  testing::ScopedEnv no_path("PATH", "/nonexistent");
  testing::ScopedEnv no_ncu("KBENCH_NCU", "");
  const auto where = profile::find_ncu("/nonexistent/cuda/bin");
  CHECK(where.path.empty());
  CHECK_THAT(where.why_absent, contains_text("not installed"));
  CHECK_THAT(where.why_absent, contains_text("/nonexistent/cuda/bin"));
  CHECK_THAT(where.why_absent, contains_text("KBENCH_NCU"));
}

TEST_CASE("an ncu that is not there leaves a clear message in the record's profile", "[profile]") {
  testing::ScopedEnv bad_ncu("KBENCH_NCU", "/nonexistent/ncu");
  auto record = profiled_record();
  sandbox::EvalRequest req;
  req.ncu = true;
  sandbox::add_ncu_figures(record, req, {}, sandbox::kForkWithoutExec);
  CHECK_THAT(record["profile"]["ncu"].value("unavailable", ""), contains_text("KBENCH_NCU=/nonexistent/ncu is not an executable"));
  CHECK_FALSE(record["profile"]["candidate"]["kernels"][0].contains("ncu"));
}

TEST_CASE("a candidate that was not profiled gets no ncu figures, and the record says why", "[profile]") {
  nlohmann::json record = {{"verdict", "value_mismatch"}};
  sandbox::EvalRequest req;
  req.ncu = true;
  sandbox::add_ncu_figures(record, req, {}, sandbox::kForkWithoutExec);
  CHECK_THAT(record["profile"]["ncu"].value("skipped", ""), contains_text("not profiled"));
}

TEST_CASE("the ncu pass runs its worker under ncu, reads the export and names each kernel's bound (CPU, stand-in ncu)",
          "[profile]") {
  const auto csv = (testing::test_dir() / "fixtures" / "profile" / "ncu_raw_export.csv").string();
  // ncu: with --import it prints the export; otherwise it runs the command line at its end (the
  // worker) and then writes the report named after --export, as ncu does when its target exits.
  const auto ncu = script("ncu", "if [ \"$1\" = --import ]; then cat '" + csv + "'; exit 0; fi\n"
                                 "report=''\nwhile [ $# -gt 2 ]; do [ \"$1\" = --export ] && report=$2; shift; done\n"
                                 "\"$1\" \"$2\"\necho report > \"$report\"");
  // The worker under it: answers one request as a worker that ran the forward, then ends at EOF.
  const auto worker = testing::fake_worker("ncu-target", "next_request\n"
                                                         "reply '{\"record\":{\"verdict\":\"not_checked\",\"ncu_target\":{\"ran\":true}}}'\n"
                                                         "cat >/dev/null");
  testing::ScopedEnv use_ncu("KBENCH_NCU", ncu);
  auto record = profiled_record();
  sandbox::EvalRequest req;
  req.ncu = true;
  sandbox::add_ncu_figures(record, req, {}, worker);
  const auto& ncu_section = record["profile"]["ncu"];
  INFO(ncu_section.dump());
  REQUIRE(ncu_section.contains("kernels"));
  const auto& kernels = record["profile"]["candidate"]["kernels"];
  CHECK(kernels[0]["ncu"]["dram_throughput_pct"].get<double>() == Approx(89.0));
  CHECK_THAT(kernels[0].value("bound", ""), Catch::Matchers::StartsWith("memory: DRAM throughput at 89%"));
  CHECK_THAT(kernels[1].value("bound", ""), Catch::Matchers::StartsWith("memory"));
}

TEST_CASE("an ncu that writes no report leaves an error in the record, not a crash (CPU, stand-in ncu)", "[profile]") {
  const auto ncu = script("ncu-silent", "while [ $# -gt 2 ]; do shift; done\n\"$1\" \"$2\"");
  const auto worker = testing::fake_worker("ncu-target2", "next_request\n"
                                                          "reply '{\"record\":{\"verdict\":\"not_checked\",\"ncu_target\":{\"ran\":true}}}'\n"
                                                          "cat >/dev/null");
  testing::ScopedEnv use_ncu("KBENCH_NCU", ncu);
  auto record = profiled_record();
  sandbox::EvalRequest req;
  req.ncu = true;
  sandbox::add_ncu_figures(record, req, {}, worker);
  CHECK_THAT(record["profile"]["ncu"].value("error", ""), contains_text("no report"));
  CHECK_FALSE(record["profile"]["candidate"]["kernels"][0].contains("ncu"));
}
