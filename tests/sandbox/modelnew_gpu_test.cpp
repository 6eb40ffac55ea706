// tests/fixtures/modelnew and tests/fixtures/triton on a GPU: every KernelBench-format fixture gets its
// verdict through kbench batch (its extensions built ahead of the GPU, beside a .cu sample) and kbench
// report, then through a worker as kbench eval runs it, finding its extensions in the cache, then
// through kbench serve, in its ModelNew spares.
#include <chrono>
#include <cstdio>
#include <dlfcn.h>
#include <fstream>

#include "fixtures.h"
#include "compile/extension_build.h"
#include "compile/python_runtime.h"
#include "sandbox/batch.h"
#include "sandbox/worker.h"
#include "serve/test_server.h"

#include "catch.h"

using namespace kbench;

namespace {

std::filesystem::path fixtures() { return testing::test_dir() / "fixtures" / "modelnew"; }

sandbox::Budgets fixture_budgets() {
  sandbox::Budgets b;
  b.correctness_s = 60;
  b.timing_s = 60;
  return b;
}

double speedup_of(const nlohmann::json& record) {
  return record.value("timing", nlohmann::json::object()).value("speedup_eager", 0.0);
}

void check_record(const nlohmann::json& entry, const nlohmann::json& record, const std::string& backend) {
  const std::string file = entry["file"];
  INFO(file << ": " << record.dump().substr(0, 3000));
  CHECK(testing::verdict_expected(entry["verdict"], record.value("verdict", "?")));
  CHECK(record.value("message", "").find(entry.value("message", "")) != std::string::npos);
  CHECK(record["submission"]["format"] == "modelnew");
  if (record["submission"].contains("backend")) CHECK(record["submission"]["backend"] == backend);
  // A correct ModelNew's kernels were seen: counted as launches, their outputs' memory given to them.
  if (entry["verdict"] == "correct") CHECK(record["correctness"]["trials"][0]["launches"].get<int>() >= 1);
}

// Every fixture of `fixtures`/expected.json through kbench batch (its builds ahead of the GPU,
// beside a .cu sample) and kbench report, then through a worker as kbench eval runs it, finding its
// extensions in the cache. `backend`: what each record must name.
void fixtures_through_batch_and_eval(const std::filesystem::path& fixtures, const std::string& backend) {
  const auto table = testing::read_json_file(fixtures / "expected.json")["submissions"];
  const auto label = fixtures.filename().string();
  const auto dir = testing::scratch_dir(label + "-batch");
  std::map<std::string, nlohmann::json> entry_of;
  int sample = 0;
  for (const auto& e : table) {
    const auto name = "level_" + std::to_string(e["level"].get<int>()) + "_problem_" +
                      std::to_string(e["problem"].get<int>()) + "_sample_" + std::to_string(sample++) + "_kernel.py";
    std::filesystem::copy_file(fixtures / e["file"].get<std::string>(), dir / name);
    entry_of[name] = e;
  }
  // kbench's own format in the same run directory.
  std::filesystem::copy_file(testing::test_dir().parent_path() / "level1" / "19_ReLU.cu",
                             dir / "level_1_problem_19_sample_99_kernel.cu");

  sandbox::BatchOptions o;
  o.dir = dir;
  o.out = dir / "results.jsonl";
  o.progress = false;
  o.base.check.tolerance = {-1, -1};
  o.base.timing.trials = 20;
  o.budgets = fixture_budgets();
  o.worker_exe = testing::kbench_exe();
  const auto summary = sandbox::run_batch(o);
  std::printf("%s batch: %d records in %.1f s, builds ahead of the GPU %.1f s on %d threads\n", label.c_str(),
              summary.evaluated, summary.wall_s, summary.compile_s, summary.compile_threads);
  std::ifstream in(o.out);
  int records = 0;
  for (std::string line; std::getline(in, line); ++records) {
    const auto r = nlohmann::json::parse(line);
    const std::string file = r["batch"]["file"];
    std::printf("%s batch %-44s %-20s %6.2fx %s\n", label.c_str(), file.c_str(), r.value("verdict", "?").c_str(),
                speedup_of(r), r.value("message", "").substr(0, 100).c_str());
    if (file.find(".cu") != std::string::npos) {
      CHECK(r["verdict"] == "correct");
      continue;
    }
    check_record(entry_of.at(file), r, backend);
  }
  CHECK(records == static_cast<int>(table.size()) + 1);

  const auto report = nlohmann::json::parse(testing::run_kbench("--json report " + o.out.string()));
  INFO(report.dump().substr(0, 2000));
  REQUIRE(report["levels"].size() >= 1);
  int scored = 0;
  for (const auto& level : report["levels"]) scored += level["submissions"].get<int>();
  CHECK(scored == records);

  sandbox::Worker worker(testing::kbench_exe());
  std::map<std::string, double> speedups;
  for (const auto& e : table) {
    sandbox::EvalRequest req;
    req.submission = (fixtures / e["file"].get<std::string>()).string();
    req.level = e["level"];
    req.problem = e["problem"];
    req.check.tolerance = {-1, -1};
    req.timing.trials = 20;
    const auto t0 = std::chrono::steady_clock::now();
    const auto record = worker.evaluate(req, fixture_budgets());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s eval %-36s %-20s %6.1f s %6.2fx  %s\n", label.c_str(), e["file"].get<std::string>().c_str(),
                record.value("verdict", "?").c_str(), seconds, speedup_of(record),
                record.value("message", "").substr(0, 90).c_str());
    const auto compile = record.value("compile", nlohmann::json::object());
    if (compile.contains("triton"))
      std::printf("%s eval %-36s triton %s\n", label.c_str(), e["file"].get<std::string>().c_str(),
                  compile["triton"].dump().c_str());
    check_record(e, record, backend);
    speedups[e["file"]] = speedup_of(record);
    // A record kbench made for a killed worker (the forger's) has no compile section.
    for (const auto& extension : record.value("compile", nlohmann::json::object()).value("extensions", nlohmann::json::array()))
      CHECK(extension["from_cache"] == true);  // built by the batch above
  }
  // Through kbench serve: each in one of the GPU's ModelNew spares, started ahead.
  testing::TestServer server(testing::options_for(testing::kbench_exe()));
  for (const auto& e : table) {
    const auto file = fixtures / e["file"].get<std::string>();
    auto body = nlohmann::json::parse(testing::eval_body(file, e["level"], e["problem"], {{"timing_trials", 20}}));
    body["name"] = file.filename().string();  // a .py goes as a ModelNew
    const auto t0 = std::chrono::steady_clock::now();
    const auto answer = testing::post(server, body.dump());
    REQUIRE(answer);
    REQUIRE(answer->status == 200);
    const auto record = nlohmann::json::parse(answer->body);
    std::printf("%s serve %-36s %-20s %6.1f s  %s\n", label.c_str(), e["file"].get<std::string>().c_str(),
                record.value("verdict", "?").c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                record.value("message", "").substr(0, 90).c_str());
    check_record(e, record, backend);
  }

  // A fixture beside its twin, the same computation another way (a CUDA graph beside plain launches):
  // both speedups, for the record.
  for (const auto& e : table)
    if (e.contains("twin"))
      std::printf("%s twins %s %.2fx beside %s %.2fx\n", label.c_str(), e["file"].get<std::string>().c_str(),
                  speedups[e["file"]], e["twin"].get<std::string>().c_str(), speedups[e["twin"]]);
}

}  // namespace

TEST_CASE("kbench exports a wrapper for every launch entry point an extension is linked to call", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  for (const auto* list : {&compile::wrapped_launch_functions(), &compile::wrapped_library_functions()})
    for (const auto& function : *list) {
      INFO(function);
      CHECK(::dlsym(RTLD_DEFAULT, ("__wrap_" + function).c_str()) != nullptr);
    }
  // What Triton's stubs are linked to call (compile/triton_runtime.h).
  for (const char* function : {"__wrap_dlsym", "__wrap_cuModuleLoadData"}) CHECK(::dlsym(RTLD_DEFAULT, function) != nullptr);
}

TEST_CASE("every ModelNew fixture gets its verdict through batch and report, eval and serve", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  fixtures_through_batch_and_eval(testing::test_dir() / "fixtures" / "modelnew", "cuda");
}

TEST_CASE("every Triton fixture gets its verdict through batch and report, eval and serve", "[gpu][triton]") {
  if (!testing::gpu_or_skip()) return;
  const auto python = compile::python::executable();
  if (std::system((python + " -c 'import triton' 2>/dev/null").c_str()) != 0) {
    WARN("skipped: " << python << " has no triton");
    return;
  }
  fixtures_through_batch_and_eval(testing::test_dir() / "fixtures" / "triton", "triton");
}
