// --gpu-memory: kbench behaving as on a smaller GPU. On the CPU: the measured footprints a catalog
// reads, and the plan for a problem that needs more than the limit (its candidate output in host
// memory, or a refusal), decided before anything runs.
// On the GPU: the cap on the caching allocator, a candidate output set aside in host memory, and
// whole evaluations under 22 GiB (one only with the output set aside).
#include <fstream>

#include "check/memory_guard.h"
#include "check/reference_outputs.h"
#include "fixtures.h"
#include "problems/catalog.h"
#include "sandbox/evaluation.h"
#include "sandbox/worker.h"

#ifdef KBENCH_WITH_CUDA
#include <ATen/ATen.h>
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include "catch.h"  // last: libtorch brings glog, whose CHECK would replace Catch's

using namespace kbench;

namespace {
constexpr int64_t GiB = int64_t{1} << 30;

// A project root of its own: the real manifest, and `problems` as its problems/footprint.json.
std::filesystem::path root_with_footprints(const std::string& name, const nlohmann::json& problems) {
  const auto root = std::filesystem::temp_directory_path() / name;
  testing::remove_tree(root);
  std::filesystem::create_directories(root / "problems");
  std::filesystem::copy_file(testing::test_dir().parent_path() / "problems" / "manifest.json", root / "problems" / "manifest.json");
  std::ofstream(root / "problems" / "footprint.json") << nlohmann::json{{"problems", problems}};
  return root;
}

// A reference kernel (levelN/<file>) evaluated in a worker under --gpu-memory 22.
nlohmann::json evaluate_under_22_gib(const std::string& file, int level, int problem, const std::string& root = "") {
  sandbox::EvalRequest req;
  req.root = root;
  req.submission = (testing::test_dir().parent_path() / ("level" + std::to_string(level)) / file).string();
  req.level = level;
  req.problem = problem;
  req.gpu_memory_gib = 22;
  req.timing.trials = 10;
  return sandbox::evaluate_isolated(req, {}, testing::kbench_exe());
}
}  // namespace

TEST_CASE("a catalog reads each problem's measured footprint, or the limit it ran out of memory under", "[problems]") {
  const auto root = root_with_footprints(
      "kbench-footprint-root",
      {{"level1/19_ReLU", {{"peak_bytes", 18 * GiB}, {"input_bytes", 6 * GiB}}},
       {"level1/45_Average_Pooling_2D", {{"out_of_memory_under_bytes", 22 * GiB}}},
       {"level1/39_L2Norm_", {{"out_of_memory_under_bytes", 22 * GiB}, {"offloaded", {{"peak_bytes", 15 * GiB}}}}}});
  const auto catalog = problems::Catalog::load(root);
  const auto& relu = catalog.get(1, 19);
  CHECK(relu.footprint.bytes == 18 * GiB);
  CHECK_FALSE(relu.footprint.more_than);
  CHECK(relu.footprint_offloaded.bytes == 0);  // fits as it is: not measured so
  const auto& pooling = catalog.get(1, 45);
  CHECK(pooling.footprint.bytes == 22 * GiB);
  CHECK(pooling.footprint.more_than);
  const auto& norm = catalog.get(1, 39);
  CHECK(norm.footprint.more_than);
  CHECK(norm.footprint_offloaded.bytes == 15 * GiB);
  CHECK_FALSE(norm.footprint_offloaded.more_than);
  CHECK(catalog.get(1, 1).footprint.bytes == 0);  // not measured
  CHECK(problems::to_json(relu)["gpu_memory_bytes"] == 18 * GiB);
  CHECK(problems::to_json(pooling)["gpu_memory_more_than_bytes"] == 22 * GiB);
  CHECK(problems::to_json(norm)["gpu_memory_offloaded_bytes"] == 15 * GiB);
  testing::remove_tree(root);
}

TEST_CASE("under --gpu-memory a problem measured to need more is offloaded where that fits, else refused", "[sandbox]") {
  problems::Problem relu;
  relu.footprint = {18 * GiB, false};
  sandbox::EvalRequest req;
  CHECK(sandbox::plan_gpu_memory(req, relu).refusal.empty());  // no limit
  req.gpu_memory_gib = 16;
  CHECK_THAT(sandbox::plan_gpu_memory(req, relu).refusal,
             contains_text("needs 18.0 GiB of GPU memory (problems/footprint.json), more than --gpu-memory 16 GiB allows"));
  req.gpu_memory_gib = 18;  // the memory guard keeps check::kLimitReserve of the limit from tensors
  CHECK_FALSE(sandbox::plan_gpu_memory(req, relu).refusal.empty());
  req.gpu_memory_gib = 18.25;
  CHECK(sandbox::plan_gpu_memory(req, relu).refusal.empty());
  CHECK_FALSE(sandbox::plan_gpu_memory(req, relu).offload_candidate_output);
  req.gpu_memory_gib = 16;
  req.compile_only = true;  // compiling needs no GPU memory
  CHECK(sandbox::plan_gpu_memory(req, relu).refusal.empty());

  // Out of memory under 22 GiB: refused at 22 GiB and below, tried above.
  problems::Problem pooling;
  pooling.footprint = {22 * GiB, true};
  req = {};
  req.gpu_memory_gib = 22;
  CHECK_THAT(sandbox::plan_gpu_memory(req, pooling).refusal, contains_text("needs more than 22.0 GiB"));
  req.gpu_memory_gib = 40;
  CHECK(sandbox::plan_gpu_memory(req, pooling).refusal.empty());
  problems::Problem unmeasured;
  req.gpu_memory_gib = 1;
  CHECK(sandbox::plan_gpu_memory(req, unmeasured).refusal.empty());

  // Out of memory under 22 GiB as usual, 15 GiB with the candidate's output in host memory.
  problems::Problem norm;
  norm.footprint = {22 * GiB, true};
  norm.footprint_offloaded = {15 * GiB, false};
  req.gpu_memory_gib = 22;
  auto plan = sandbox::plan_gpu_memory(req, norm);
  CHECK(plan.refusal.empty());
  CHECK(plan.offload_candidate_output);
  req.gpu_memory_gib = 40;  // may fit as usual: not known not to
  CHECK_FALSE(sandbox::plan_gpu_memory(req, norm).offload_candidate_output);
  req.gpu_memory_gib = 12;
  plan = sandbox::plan_gpu_memory(req, norm);
  CHECK_FALSE(plan.offload_candidate_output);
  CHECK_THAT(plan.refusal, contains_text("needs more than 22.0 GiB of GPU memory (problems/footprint.json), and 15.0 GiB "
                                         "with the candidate's output in host memory, more than --gpu-memory 12 GiB allows"));
}

TEST_CASE("an evaluation refused for its footprint says so before it reads the submission", "[sandbox]") {
  const auto root = root_with_footprints("kbench-footprint-refusal", {{"level1/19_ReLU", {{"peak_bytes", 18 * GiB}}}});
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

TEST_CASE("a candidate's output waits in host memory while the reference runs, and comes back as it was", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
#ifdef KBENCH_WITH_CUDA
  namespace allocator = c10::cuda::CUDACachingAllocator;
  const auto allocated = [] { return allocator::getDeviceStats(0).allocated_bytes[0].current; };
  const auto big = at::rand({GiB / 4}, at::device(at::kCUDA));  // 1 GiB of float
  const auto small = at::arange(10, at::kFloat);                // a CPU tensor stays one
  c10::IValue output = c10::ivalue::Tuple::create({big.clone(), small});
  const auto before = allocated();
  int64_t during = 0;
  check::with_output_in_host_memory(output, true, [&] { during = allocated(); });
  CHECK(before - during >= GiB);
  const auto& back = output.toTupleRef().elements();
  CHECK(back[0].toTensor().is_cuda());
  CHECK(back[0].toTensor().equal(big));
  CHECK(back[1].toTensor().device().is_cpu());
  CHECK(back[1].toTensor().equal(small));
#endif
}

TEST_CASE("a reference kernel that fits 22 GiB only with its output offloaded evaluates correct so", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  // L1#39's footprint as the H100 measured it (problems/footprint.json), in a root of its own.
  const auto root = root_with_footprints(
      "kbench-footprint-offload",
      {{"level1/39_L2Norm_", {{"out_of_memory_under_bytes", 22 * GiB}, {"offloaded", {{"peak_bytes", 21 * GiB}}}}}});
  const auto record = evaluate_under_22_gib("39_L2Norm_.cu", 1, 39, root.string());
  INFO(record.dump().substr(0, 2000));
  CHECK(record["verdict"] == "correct");
  CHECK(record.value("candidate_output_offloaded", false));
  testing::remove_tree(root);
}

TEST_CASE("a reference kernel evaluates correct under --gpu-memory 22", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  const auto record = evaluate_under_22_gib("19_ReLU.cu", 1, 19);
  INFO(record.dump().substr(0, 2000));
  CHECK(record["verdict"] == "correct");
  CHECK(record["gpu_memory_gib"] == 22.0);
}
