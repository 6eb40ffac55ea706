// Batch discovery, deduplication and resumption, on the CPU (verdicts there are compile-side).
#include <fstream>

#include "fixtures.h"
#include "compile/extension_build.h"
#include "compile/submission.h"
#include "sandbox/batch.h"

#include "catch.h"

using namespace kbench;

namespace {

std::filesystem::path fresh_dir(const std::string& name) {
  return testing::scratch_dir("batch-" + name);
}

void copy_submission(const std::string& fixture, const std::filesystem::path& to) {
  std::filesystem::create_directories(to.parent_path());
  std::filesystem::copy_file(testing::test_dir() / "fixtures" / "submissions" / fixture, to);
}

std::vector<nlohmann::json> read_lines(const std::filesystem::path& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

sandbox::BatchOptions options_for(const std::filesystem::path& dir) {
  sandbox::BatchOptions o;
  o.dir = dir;
  o.out = dir / "results.jsonl";
  o.progress = false;
  o.compile_threads = 2;
  o.base.check.tolerance = {-1, -1};
  o.worker_exe = testing::kbench_exe();
  return o;
}

}  // namespace

TEST_CASE("discovery knows both layouts and lists what it does not match", "[sandbox]") {
  const auto dir = fresh_dir("discover");
  copy_submission("../../../level1/19_ReLU.cu", dir / "level_1_problem_19_sample_0_kernel.cu");
  copy_submission("../../../level1/19_ReLU.cu", dir / "level2" / "5" / "try.cu");
  copy_submission("../../../level1/19_ReLU.cu", dir / "notes" / "scratch.cu");
  const auto found = sandbox::discover(dir);
  REQUIRE(found.submissions.size() == 2);
  CHECK(found.submissions[0].level == 1);
  CHECK(found.submissions[0].problem == 19);
  CHECK(found.submissions[1].level == 2);
  CHECK(found.submissions[1].problem == 5);
  REQUIRE(found.unmatched.size() == 1);
  CHECK(found.unmatched[0] == "notes/scratch.cu");
}

TEST_CASE("a batch records every submission once, evaluates duplicates once, and resumes", "[sandbox]") {
  const auto dir = fresh_dir("resume");
  copy_submission("../../../level1/19_ReLU.cu", dir / "level_1_problem_19_sample_0_kernel.cu");
  copy_submission("../../../level1/19_ReLU.cu", dir / "level_1_problem_19_sample_1_kernel.cu");  // identical
  copy_submission("l1_19_compile_error.cu", dir / "level_1_problem_19_sample_2_kernel.cu");
  copy_submission("l1_19_missing_host.cu", dir / "level_1_problem_19_sample_3_kernel.cu");
  auto o = options_for(dir);

  const auto first = sandbox::run_batch(o);
  CHECK(first.evaluated == 3);
  CHECK(first.duplicates == 1);
  auto lines = read_lines(o.out);
  REQUIRE(lines.size() == 4);
  std::map<std::string, std::string> verdict_of;
  for (const auto& r : lines) verdict_of[r["batch"]["file"]] = r["verdict"];
  CHECK(verdict_of["level_1_problem_19_sample_2_kernel.cu"] == "compile_error");
  CHECK(verdict_of["level_1_problem_19_sample_3_kernel.cu"] == "host_error");
  CHECK(verdict_of["level_1_problem_19_sample_0_kernel.cu"] == verdict_of["level_1_problem_19_sample_1_kernel.cu"]);

  // A killed run leaves a torn last line; the next run cuts it and evaluates only what is missing.
  {
    auto kept = read_lines(o.out);
    kept.pop_back();
    std::ofstream out(o.out, std::ios::trunc);
    for (const auto& r : kept) out << r.dump() << "\n";
    out << "{\"verdict\": \"corr";
  }
  const auto second = sandbox::run_batch(o);
  CHECK(second.resumed == 3);
  CHECK(second.evaluated + second.duplicates == 1);
  lines = read_lines(o.out);
  CHECK(lines.size() == 4);
  std::set<std::string> files;
  for (const auto& r : lines) files.insert(r["batch"]["file"].get<std::string>());
  CHECK(files.size() == 4);
}

TEST_CASE("a batch takes KernelBench's ModelNew files beside .cu files, and builds them before evaluating",
          "[sandbox][modelnew]") {
  // Compile-side only (a ModelNew that imports and builds is not_checked); the verdicts decided
  // before any build (tests/fixtures/modelnew/expected.json) are what a GPU gives too.
  const auto dir = fresh_dir("modelnew");
  const auto fixtures = testing::test_dir() / "fixtures" / "modelnew";
  std::map<std::string, std::string> expected;
  int sample = 0;
  auto add = [&](const std::filesystem::path& from, const std::string& verdict, const std::string& extension) {
    const auto name = "level_1_problem_19_sample_" + std::to_string(sample++) + "_kernel" + extension;
    std::filesystem::copy_file(from, dir / name);
    expected[name] = verdict;
  };
  const auto table = testing::read_json_file(fixtures / "expected.json");
  for (const auto& e : table["submissions"])
    if (e.value("before_build", false) && e["problem"] == 19)
      add(fixtures / e["file"].get<std::string>(), e["verdict"], ".py");
  add(fixtures / "cpu" / "relu_cpp.py", "not_checked", ".py");
  add(testing::test_dir() / "fixtures" / "triton" / "l1_19_relu.py", "unsupported_backend", ".py");  // no GPU runs it
  add(testing::test_dir() / ".." / "level1" / "19_ReLU.cu", "not_checked", ".cu");
  std::ofstream(dir / "helper.py") << "print('not a submission')\n";  // neither matched nor listed
  std::filesystem::copy_file(fixtures / "l1_19_relu.py", dir / "draft.py");  // a ModelNew: listed as unmatched

  const auto found = sandbox::discover(dir);
  CHECK(found.submissions.size() == expected.size());
  CHECK(found.unmatched == std::vector<std::string>{"draft.py"});
  compile::set_build_executable(testing::kbench_exe());
  auto o = options_for(dir);
  o.base.compile_only = true;  // the same verdicts on a GPU machine (relu_cpp.py's kernel is for the CPU)
  const auto summary = sandbox::run_batch(o);
  CHECK(summary.evaluated == static_cast<int>(expected.size()));
  for (const auto& r : read_lines(o.out)) {
    const std::string file = r["batch"]["file"];
    INFO(file << ": " << r.value("message", ""));
    CHECK(r["verdict"] == expected.at(file));
    if (file.substr(file.size() - 3) == ".py") CHECK(r["submission"]["format"] == "modelnew");
    if (r["verdict"] == "not_checked" && r["submission"]["format"] == "modelnew") {
      // Built by the batch's build pass (or an earlier run), never by the worker.
      REQUIRE(r["compile"]["extensions"].size() == 1);
      CHECK(r["compile"]["extensions"][0]["from_cache"] == true);
      CHECK(r["worker_evaluations"] == 1);
    }
  }
  const auto report = nlohmann::json::parse(testing::run_kbench("--json report " + o.out.string()));
  INFO(report.dump().substr(0, 2000));
  REQUIRE(report["levels"].size() == 1);
  CHECK(report["levels"][0]["submissions"] == static_cast<int>(expected.size()));
  CHECK(report["levels"][0]["verdicts"]["unsupported_backend"] == 1);
  CHECK(expected.size() >= 10);
}

TEST_CASE("shards partition the submissions by content", "[sandbox]") {
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < 300; ++i) {
    const auto hash = compile::content_hash("submission " + std::to_string(i));
    int owners = 0;
    for (int s = 0; s < 3; ++s)
      if (sandbox::in_shard(hash, s, 3)) ++owners, ++counts[s];
    CHECK(owners == 1);
  }
  for (int c : counts) CHECK(c > 50);
}

TEST_CASE("a batch reuses a problem's kept reference outputs for its later samples", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  // Two different submissions of L3#4 (LeNet-5: a small output from several kernels, which pays to
  // keep) that both reach the comparison, in one worker: the second compares against kept outputs.
  const auto dir = fresh_dir("reuse");
  copy_submission("l3_4_value_mismatch.cu", dir / "level_3_problem_4_sample_0_kernel.cu");
  copy_submission("l3_4_value_mismatch.cu", dir / "level_3_problem_4_sample_1_kernel.cu");
  std::ofstream(dir / "level_3_problem_4_sample_1_kernel.cu", std::ios::app) << "// another sample\n";
  auto o = options_for(dir);
  o.base.time = false;
  sandbox::run_batch(o);
  const auto lines = read_lines(o.out);
  REQUIRE(lines.size() == 2);
  std::map<std::string, nlohmann::json> by_file;
  for (const auto& r : lines) by_file[r["batch"]["file"]] = r;
  const auto& first = by_file["level_3_problem_4_sample_0_kernel.cu"];
  const auto& second = by_file["level_3_problem_4_sample_1_kernel.cu"];
  CHECK(first["verdict"] == "value_mismatch");
  CHECK(second["verdict"] == "value_mismatch");
  CHECK(first["reference_outputs"]["computed"] == 1);
  CHECK(second["worker_evaluations"] == 2);
  CHECK(second["reference_outputs"]["reused"] == 1);
  CHECK(second["reference_outputs"]["computed"] == 0);
  // The same comparison either way: the kept output is the reference's answer.
  CHECK(first["correctness"]["trials"][0]["max_abs_error"] == second["correctness"]["trials"][0]["max_abs_error"]);
}

TEST_CASE("a worker restarted in a batch reuses the baselines timed before it", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  // L1#19: a correct sample times the eager reference; an illegal address replaces the worker; the
  // next correct sample, in the new worker, gets the figure from the batch instead of timing again.
  const auto dir = fresh_dir("known-baselines");
  const auto correct = testing::test_dir().parent_path() / "level1" / "19_ReLU.cu";
  std::filesystem::copy_file(correct, dir / "level_1_problem_19_sample_0_kernel.cu");
  copy_submission("l1_19_illegal_address.cu", dir / "level_1_problem_19_sample_1_kernel.cu");
  std::filesystem::copy_file(correct, dir / "level_1_problem_19_sample_2_kernel.cu");
  std::ofstream(dir / "level_1_problem_19_sample_2_kernel.cu", std::ios::app) << "// another sample\n";
  auto o = options_for(dir);
  o.base.timing.trials = 10;
  sandbox::run_batch(o);
  std::map<int, nlohmann::json> by_sample;
  for (const auto& r : read_lines(o.out)) by_sample[r["batch"]["sample"].get<int>()] = r;
  REQUIRE(by_sample.size() == 3);
  CHECK(by_sample[0]["verdict"] == "correct");
  CHECK(by_sample[1]["verdict"] == "runtime_error");
  REQUIRE(by_sample[2]["verdict"] == "correct");
  CHECK(by_sample[2]["worker_evaluations"] == 1);  // a fresh worker
  CHECK(by_sample[0]["timing"]["eager_reused"] == false);
  CHECK(by_sample[2]["timing"]["eager_reused"] == true);
  CHECK(by_sample[2]["timing"]["eager"]["mean_ms"] == by_sample[0]["timing"]["eager"]["mean_ms"]);
  // Marked as the earlier worker's, for the eager and the compiled figure alike. A compiled figure
  // carries over only where it was timed in the worker (an AOTInductor package in the cache,
  // scripts/tools/compile_baselines.py --path aoti); one read from baselines/ is read again instead.
  CHECK(!by_sample[0]["timing"]["eager"].contains("from_earlier_worker"));
  CHECK(by_sample[2]["timing"]["eager"]["from_earlier_worker"] == true);
  if (by_sample[0]["timing"]["compiled"].value("clean", false)) {
    CHECK(by_sample[2]["timing"]["compiled"]["from_earlier_worker"] == true);
  } else {
    WARN("no AOTInductor package of L1#19 in the cache: the compiled figure's carry-over is not tested");
    CHECK(!by_sample[2]["timing"]["compiled"].contains("from_earlier_worker"));
  }
  // The candidate itself is timed again: only the reference's figures carry over.
  CHECK(by_sample[2]["timing"]["candidate"] != by_sample[0]["timing"]["candidate"]);
}
