// libtorch's profiler around a reference forward. On the CPU (Debian's libtorch has no CUDA
// activity) the breakdown must say it is unavailable and why, having seen the operators; on the GPU
// it must name the kernels.
#include <algorithm>
#include <cctype>

#include "fixtures.h"
#include "problems/catalog.h"
#include "problems/reference.h"
#include "profile/reference_profile.h"

#include "catch.h"

using namespace kbench;

TEST_CASE("without CUDA activity the reference's breakdown is unavailable, with the operators it saw (CPU)", "[profile]") {
  const auto catalog = problems::Catalog::load(problems::project_root(""));
  problems::Reference reference(catalog.get(3, 4), torch::kCPU);  // LeNet-5: 16 MiB of inputs
  const auto inputs = reference.make_inputs(42);
  const auto r = profile::profile_reference(reference, inputs, 42, launch::DeviceInfo{});
  INFO(r.dump());
  CHECK_THAT(r.value("unavailable", ""), contains_text("no GPU kernels"));
  CHECK(r.value("operators_seen", 0) > 5);  // convolutions, pooling, linear layers
}

TEST_CASE("the reference's breakdown of L2#12 names the GEMM as its slowest work", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  const auto catalog = problems::Catalog::load(problems::project_root(""));
  const auto gpu = launch::query_device(0);
  problems::Reference reference(catalog.get(2, 12), torch::Device(torch::kCUDA, 0));
  const auto inputs = reference.make_inputs(42);
  const auto r = profile::profile_reference(reference, inputs, 42, gpu);
  INFO(r.dump(1).substr(0, 3000));
  REQUIRE(r.contains("ops"));
  const auto& slowest = r["ops"][0];
  CHECK(slowest["op"] == "aten::linear");
  CHECK(slowest["share"].get<double>() > 0.8);  // 137 GFLOP of GEMM against two 32 MiB elementwise passes
  std::string kernel = slowest["kernels"][0]["name"];
  std::transform(kernel.begin(), kernel.end(), kernel.begin(), ::tolower);
  CHECK_THAT(kernel, contains_text("gemm"));
  CHECK(r["flops"]["count"].get<double>() > 1.3e11);  // 2 x 1024 x 8192 x 8192
}
