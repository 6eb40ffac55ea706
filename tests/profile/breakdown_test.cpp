// The profile's arithmetic without a GPU: the reference's breakdown from profiler events written
// here by hand (as libtorch's profiler reports an nn.Linear), the candidate's per-kernel summary,
// bounds, occupancy and the roofline figures.
#include <algorithm>

#include "profile/breakdown.h"
#include "profile/occupancy.h"
#include "profile/roofline.h"

#include "catch.h"

using namespace kbench;

namespace {

// aten::linear -> aten::t, aten::addmm (which launches the GEMM), then aten::mul and aten::leaky_relu;
// plus the runtime calls the profiler lists beside them. Times in ns.
std::vector<profile::ProfiledEvent> linear_then_elementwise() {
  return {
      {"aten::linear", false, 1000, 900, 1, 0, 7, 0},
      {"aten::t", false, 1010, 50, 2, 0, 7, 0},
      {"aten::addmm", false, 1100, 700, 3, 0, 7, 137438953472},
      {"cudaLaunchKernel", false, 1200, 20, 900, 3, 7, 0},
      {"aten::mul", false, 2000, 100, 4, 0, 7, 8388608},
      {"aten::leaky_relu", false, 2200, 100, 5, 0, 7, 0},
      {"sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32", true, 5000, 2000000, 900, 3, 0, 0},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float>>(int, float*)", true, 2005000, 40000, 901, 4, 0, 0},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::leaky_relu_kernel>(int, float*)", true, 2045000, 40000, 902, 5, 0, 0},
  };
}

launch::DeviceInfo h100() {
  launch::DeviceInfo g;
  g.present = true;
  g.multiprocessors = 132;
  g.max_threads_per_multiprocessor = 2048;
  g.registers_per_multiprocessor = 65536;
  g.shared_per_multiprocessor = 233472;
  g.max_blocks_per_multiprocessor = 32;
  return g;
}

}  // namespace

TEST_CASE("the reference's GPU time is summed per top-level operator, the GEMM under aten::linear", "[profile]") {
  const auto r = profile::summarize_reference(linear_then_elementwise());
  REQUIRE(r.contains("ops"));
  CHECK(r["gpu_ms"].get<double>() == Approx(2.08));
  const auto& top = r["ops"][0];
  CHECK(top["op"] == "aten::linear");  // not aten::addmm, which runs inside it
  CHECK(top["share"].get<double>() == Approx(2.0 / 2.08));
  CHECK_THAT(top["kernels"][0]["name"].get<std::string>(), contains_text("gemm"));
  CHECK(r["ops"].size() == 3);
  CHECK(r["kernels"][0]["op"] == "aten::linear");
  // FLOPs: known, since a matrix product was counted; the elementwise count is added to it.
  CHECK(r["flops"]["count"].get<double>() == Approx(137438953472.0 + 8388608.0));
}

TEST_CASE("without GPU events the reference's breakdown says it is unavailable, and why", "[profile]") {
  auto events = linear_then_elementwise();
  events.erase(std::remove_if(events.begin(), events.end(), [](const auto& e) { return e.on_gpu; }), events.end());
  const auto r = profile::summarize_reference(events);
  CHECK_THAT(r.value("unavailable", ""), contains_text("no GPU kernels"));
  CHECK(r["operators_seen"] == 5);
}

TEST_CASE("a FLOP count from elementwise operators alone does not stand for the problem", "[profile]") {
  const std::vector<profile::ProfiledEvent> events = {{"aten::mul", false, 0, 10, 1, 0, 1, 1000},
                                                      {"mul_kernel", true, 20, 5000, 50, 1, 0, 0}};
  CHECK(profile::summarize_reference(events)["flops"].is_null());
}

TEST_CASE("the candidate's launches are summed per kernel, slowest first, with shares of the forward", "[profile]") {
  nlohmann::json c = {
      {"forward_ms", 10.0},
      {"launches",
       {{{"kernel", "small"}, {"gpu_ms", 1.0}, {"grid_blocks", 8}, {"block_threads", 256}, {"occupancy", 1.0}},
        {{"kernel", "big"}, {"gpu_ms", 3.0}, {"grid_blocks", 4096}, {"block_threads", 1024}, {"occupancy", 0.125},
         {"limited_by", "registers"}, {"registers_per_thread", 255}},
        {{"kernel", "big"}, {"gpu_ms", 4.0}, {"grid_blocks", 4096}, {"block_threads", 1024}, {"occupancy", 0.125},
         {"limited_by", "registers"}, {"registers_per_thread", 255}}}},
      {"torch_ops", {{{"op", "aten::empty"}, {"gpu_ms", 0.0}}, {{"op", "aten::matmul"}, {"gpu_ms", 1.5}}}}};
  profile::summarize_candidate(c);
  profile::annotate_bounds(c, 132);
  REQUIRE(c["kernels"].size() == 2);
  CHECK(c["kernels"][0]["kernel"] == "big");
  CHECK(c["kernels"][0]["launches"] == 2);
  CHECK(c["kernels"][0]["share"].get<double>() == Approx(0.7));
  CHECK_THAT(c["kernels"][0]["bound"].get<std::string>(), contains_text("limited by registers"));
  CHECK_THAT(c["kernels"][1]["bound"].get<std::string>(), contains_text("8 blocks for 132 SMs"));
  CHECK(c["kernels_ms"].get<double>() == Approx(8.0));
  CHECK(c["torch_ops_ms"].get<double>() == Approx(1.5));
  CHECK(c["other_ms"].get<double>() == Approx(0.5));
  CHECK(c["torch_ops_summary"][0]["op"] == "aten::matmul");
}

TEST_CASE("Nsight Compute's figures decide the bound where a kernel has them", "[profile]") {
  nlohmann::json c = {{"kernels",
                       {{{"kernel", "a"}, {"ncu", {{"sm_throughput_pct", 85.0}, {"dram_throughput_pct", 20.0}}}},
                        {{"kernel", "b"},
                         {"ncu", {{"sm_throughput_pct", 15.0}, {"dram_throughput_pct", 25.0}, {"top_stall", "barrier"}}}}}}};
  profile::annotate_bounds(c, 132);
  CHECK_THAT(c["kernels"][0]["bound"].get<std::string>(), Catch::Matchers::StartsWith("compute: SM throughput at 85%"));
  CHECK_THAT(c["kernels"][1]["bound"].get<std::string>(), Catch::Matchers::StartsWith("latency"));
  CHECK_THAT(c["kernels"][1]["bound"].get<std::string>(), contains_text("barrier"));
}

TEST_CASE("theoretical occupancy names what bounds the resident blocks", "[profile]") {
  const auto g = h100();
  // 256 threads with 128 registers each: 32768 registers a block, two blocks an SM, 25%.
  auto o = profile::theoretical_occupancy(g, {256, 128, 0, 1000});
  CHECK(o.blocks_per_sm == 2);
  CHECK(o.fraction == Approx(0.25));
  CHECK(o.limited_by == "registers");
  CHECK(o.waves == Approx(1000.0 / (2 * 132)));
  // 100 KiB of shared memory a block: two fit in 228 KiB.
  o = profile::theoretical_occupancy(g, {128, 32, 100 * 1024, 10});
  CHECK(o.blocks_per_sm == 2);
  CHECK(o.limited_by == "shared memory");
  // Small blocks hit the per-SM block limit before the thread limit.
  o = profile::theoretical_occupancy(g, {32, 16, 0, 10});
  CHECK(o.blocks_per_sm == 32);
  CHECK(o.limited_by == "blocks per SM");
  CHECK(o.fraction == Approx(0.5));
  // The driver's answer wins; the limit named is the one that explains it.
  o = profile::theoretical_occupancy(g, {1024, 40, 0, 10}, 1);
  CHECK(o.blocks_per_sm == 1);
  CHECK(o.limited_by == "registers");
}

TEST_CASE("the roofline sets each time beside the bandwidth floor and the FLOP peak", "[profile]") {
  // 3.35 TB/s; 6.7 GB moved: a 2 ms floor. 1 TFLOP in 40 ms on a 66.9 TFLOP/s GPU.
  const auto r = profile::roofline({6'700'000'000, 3.35e12, 1e12, 66.9e12}, 2.5, 40.0);
  CHECK(r["floor_ms"].get<double>() == Approx(2.0));
  CHECK(r["candidate"]["times_floor"].get<double>() == Approx(1.25));
  CHECK(r["candidate"]["bandwidth_fraction"].get<double>() == Approx(0.8));
  CHECK(r["candidate"]["bytes_per_s"].get<double>() == Approx(2.68e12));
  CHECK(r["reference"]["flops_per_s"].get<double>() == Approx(25e12));
  CHECK(r["reference"]["flops_fraction"].get<double>() == Approx(25.0 / 66.9));
  // Unknown FLOPs and bandwidth: nothing made up.
  const auto bare = profile::roofline({1000, 0, 0, 0}, 1.0, 0);
  CHECK(bare["floor_ms"].is_null());
  CHECK(bare["flops"].is_null());
  CHECK_FALSE(bare["candidate"].contains("flops_per_s"));
  CHECK_FALSE(bare.contains("reference"));
}
