// --gpu-memory: kbench behaving as on a smaller GPU. On the CPU: the measured footprints a catalog
// reads, and the refusal of a problem that needs more than the limit, decided before anything runs.
// On the GPU: the cap on the caching allocator, and a whole evaluation under 22 GiB.
#include <fstream>

#include "catch.h"
#include "check/memory_guard.h"
#include "fixtures.h"
#include "problems/catalog.h"
#include "sandbox/evaluation.h"
#include "sandbox/worker.h"

#ifdef KBENCH_WITH_CUDA
#include <ATen/ATen.h>
#include <c10/cuda/CUDACachingAllocator.h>
#endif

using namespace kbench;

namespace {
constexpr int64_t GiB = int64_t{1} << 30;
}

TEST_CASE("a catalog reads each problem's measured footprint, or the limit it ran out of memory under", "[problems]") {
  const auto root = std::filesystem::temp_directory_path() / "kbench-footprint-root";
  testing::remove_tree(root);
  std::filesystem::create_directories(root / "problems");
  std::filesystem::copy_file(testing::test_dir().parent_path() / "problems" / "manifest.json", root / "problems" / "manifest.json");
  std::ofstream(root / "problems" / "footprint.json") << nlohmann::json{
      {"problems",
       {{"level1/19_ReLU", {{"peak_bytes", 18 * GiB}, {"input_bytes", 6 * GiB}}},
        {"level1/45_Average_Pooling_2D", {{"out_of_memory_under_bytes", 22 * GiB}}}}}};
  const auto catalog = problems::Catalog::load(root);
  const auto& relu = catalog.get(1, 19);
  CHECK(relu.footprint_bytes == 18 * GiB);
  CHECK_FALSE(relu.footprint_exceeded);
  const auto& pooling = catalog.get(1, 45);
  CHECK(pooling.footprint_bytes == 22 * GiB);
  CHECK(pooling.footprint_exceeded);
  CHECK(catalog.get(1, 1).footprint_bytes == 0);  // not measured
  CHECK(problems::to_json(relu)["gpu_memory_bytes"] == 18 * GiB);
  CHECK(problems::to_json(pooling)["gpu_memory_more_than_bytes"] == 22 * GiB);
  testing::remove_tree(root);
}

TEST_CASE("under --gpu-memory a problem measured to need more is refused, and one that fits is not", "[sandbox]") {
  problems::Problem relu;
  relu.footprint_bytes = 18 * GiB;
  sandbox::EvalRequest req;
  CHECK(sandbox::exceeds_gpu_memory(req, relu).empty());  // no limit
  req.gpu_memory_gib = 16;
  CHECK_THAT(sandbox::exceeds_gpu_memory(req, relu),
             contains_text("needs 18.0 GiB of GPU memory (problems/footprint.json), more than --gpu-memory 16 GiB allows"));
  req.gpu_memory_gib = 18;
  CHECK(sandbox::exceeds_gpu_memory(req, relu).empty());
  req.gpu_memory_gib = 16;
  req.compile_only = true;  // compiling needs no GPU memory
  CHECK(sandbox::exceeds_gpu_memory(req, relu).empty());

  // Out of memory under 22 GiB: refused at 22 GiB and below, tried above.
  problems::Problem pooling;
  pooling.footprint_bytes = 22 * GiB;
  pooling.footprint_exceeded = true;
  req = {};
  req.gpu_memory_gib = 22;
  CHECK_THAT(sandbox::exceeds_gpu_memory(req, pooling), contains_text("needs more than 22.0 GiB"));
  req.gpu_memory_gib = 40;
  CHECK(sandbox::exceeds_gpu_memory(req, pooling).empty());
  problems::Problem unmeasured;
  req.gpu_memory_gib = 1;
  CHECK(sandbox::exceeds_gpu_memory(req, unmeasured).empty());
}

TEST_CASE("an evaluation refused for its footprint says so before it reads the submission", "[sandbox]") {
  const auto root = std::filesystem::temp_directory_path() / "kbench-footprint-refusal";
  testing::remove_tree(root);
  std::filesystem::create_directories(root / "problems");
  std::filesystem::copy_file(testing::test_dir().parent_path() / "problems" / "manifest.json", root / "problems" / "manifest.json");
  std::ofstream(root / "problems" / "footprint.json")
      << nlohmann::json{{"problems", {{"level1/19_ReLU", {{"peak_bytes", 18 * GiB}}}}}};
  sandbox::EvalRequest req;
  req.root = root.string();
  req.submission = (root / "absent.cu").string();  // never read
  req.level = 1;
  req.problem = 19;
  req.gpu_memory_gib = 8;
  const auto record = sandbox::evaluate(req);
  CHECK(record["verdict"] == "not_checked");
  CHECK_THAT(record["message"].get<std::string>(), contains_text("needs 18.0 GiB"));
  CHECK(record["gpu_memory_gib"] == 8.0);
  testing::remove_tree(root);
}

TEST_CASE("the GPU memory limit caps the caching allocator and the memory held for poisoning", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
#ifdef KBENCH_WITH_CUDA
  namespace allocator = c10::cuda::CUDACachingAllocator;
  const auto reserved = [] { return allocator::getDeviceStats(0).reserved_bytes[0].current; };
  check::limit_gpu_memory(0, 2 * GiB);
  CHECK_THROWS_WITH(at::empty({3 * GiB}, at::dtype(at::kByte).device(at::kCUDA)), contains_text("out of memory"));
  { const auto fits = at::empty({GiB}, at::dtype(at::kByte).device(at::kCUDA)); }
  check::hold_free_memory();
  CHECK(reserved() <= 2 * GiB);
  check::limit_gpu_memory(0, 0);
  { const auto fits = at::empty({3 * GiB}, at::dtype(at::kByte).device(at::kCUDA)); }
  allocator::emptyCache();
#endif
}

TEST_CASE("a reference kernel evaluates correct under --gpu-memory 22", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  sandbox::EvalRequest req;
  req.submission = (testing::test_dir().parent_path() / "level1" / "19_ReLU.cu").string();
  req.level = 1;
  req.problem = 19;
  req.gpu_memory_gib = 22;
  req.timing.trials = 10;
  const auto record = sandbox::evaluate_isolated(req, {}, testing::kbench_exe());
  INFO(record.dump().substr(0, 2000));
  CHECK(record["verdict"] == "correct");
  CHECK(record["gpu_memory_gib"] == 22.0);
}
