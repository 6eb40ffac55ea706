// A submission that changes the worker's shared process state reaches no later evaluation: through
// kbench batch, a poisoner comes first and honest samples of the same problem after it, on the same
// GPU. The poisoners get state_changed with nothing measured kept; every honest sample is correct,
// and the eager figure it is timed against was measured where no submission's code had been loaded.
// The figures themselves (each honest speedup alone and after a poisoner) are printed by
// scripts/gpu/process-state-check.sh, not asserted here.
#include <cstdio>
#include <fstream>

#include "fixtures.h"
#include "sandbox/batch.h"

#include "catch.h"

using namespace kbench;

TEST_CASE("a poisoner's changes reach no later sample of its problem in kbench batch", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  const auto root = testing::test_dir().parent_path();
  const auto modelnew = testing::test_dir() / "fixtures" / "modelnew";
  const auto dir = testing::scratch_dir("poisoner-batch");
  // Samples in the order batch runs them: (problem, file name).
  const std::vector<std::pair<std::filesystem::path, std::string>> samples = {
      {modelnew / "l1_19_overrides_relu_in_cpp.py", "level_1_problem_19_sample_0_kernel.py"},
      {modelnew / "l1_19_relu.py", "level_1_problem_19_sample_1_kernel.py"},
      {root / "level1" / "19_ReLU.cu", "level_1_problem_19_sample_2_kernel.cu"},
      {modelnew / "l2_1_cudnn_off_outside_own_calls.py", "level_2_problem_1_sample_0_kernel.py"},
      {root / "level2" / "1_Conv2D_ReLU_BiasAdd.cu", "level_2_problem_1_sample_1_kernel.cu"},
      {modelnew / "l2_1_conv_relu_bias.py", "level_2_problem_1_sample_2_kernel.py"},
  };
  for (const auto& [from, name] : samples) std::filesystem::copy_file(from, dir / name);

  sandbox::BatchOptions o;
  o.dir = dir;
  o.out = dir / "results.jsonl";
  o.progress = false;
  o.base.check.tolerance = {-1, -1};
  o.budgets.correctness_s = 60;
  o.budgets.timing_s = 60;
  o.worker_exe = testing::kbench_exe();
  sandbox::run_batch(o);

  std::ifstream in(o.out);
  int records = 0;
  for (std::string line; std::getline(in, line); ++records) {
    const auto r = nlohmann::json::parse(line);
    const std::string file = r["batch"]["file"];
    const bool poisoner = r["batch"]["sample"] == 0;
    const auto timing = r.value("timing", nlohmann::json::object());
    std::printf("poisoner batch %-40s %-14s eager %8.3f ms  speedup %6.2fx  %s\n", file.c_str(),
                r.value("verdict", "?").c_str(), timing.value("eager", nlohmann::json::object()).value("mean_ms", 0.0),
                timing.value("speedup_eager", 0.0), r.value("message", "").substr(0, 80).c_str());
    INFO(file << ": " << r.dump().substr(0, 3000));
    if (poisoner) {
      CHECK(r["verdict"] == "state_changed");
      CHECK(timing.contains("discarded"));
      CHECK(r["process_state"].contains("changed"));
      continue;
    }
    CHECK(r["verdict"] == "correct");
    REQUIRE(timing.contains("eager"));
    CHECK(timing["eager"].value("clean", false));
    CHECK_FALSE(r["process_state"].contains("changed"));
  }
  CHECK(records == static_cast<int>(samples.size()));
}
