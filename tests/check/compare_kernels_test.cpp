// The fused comparison kernels: they compile with NVRTC (on the CPU, as CI runs it), and on the GPU
// they give the numbers that PyTorch's ops give on the CPU for the same tensors, failures included.
#include <torch/script.h>

#include "check/compare.h"
#include "check/compare_kernels.h"
#include "compile/nvrtc_compiler.h"
#include "fixtures.h"

#include "catch.h"

using namespace kbench;

TEST_CASE("the fused comparison kernels compile with NVRTC", "[check]") {
  const auto code = compile::nvrtc_compile(check::compare_kernels_source(), "kbench_compare.cu", {});
  INFO(code.log);
  REQUIRE(code.ok);
  std::vector<std::string> names;
  for (const auto& k : code.kernels) names.push_back(k.name);
  CHECK(names == std::vector<std::string>{"kbench_compare_first", "kbench_compare", "kbench_fingerprint"});
}

TEST_CASE("the fused comparison on the GPU gives what PyTorch's ops give on the CPU", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  torch::manual_seed(7);
  const int64_t n = (int64_t{1} << 22) + 12345;  // not a multiple of a block
  const auto ref = torch::randn({n});
  struct Case {
    const char* what;
    at::Tensor cand;
  };
  auto noisy = ref + 1e-4 * torch::randn({n});
  auto wrong = ref.clone();
  wrong.narrow(0, 1000, 50000).mul_(1.5);
  auto with_nan = noisy.clone();
  with_nan.narrow(0, 77, 3).fill_(std::numeric_limits<float>::quiet_NaN());
  auto with_inf = noisy.clone();
  with_inf.narrow(0, n - 5, 2).fill_(std::numeric_limits<float>::infinity());
  auto small = ref * 1e-4;  // kbench's atol shrinks: the two rules differ
  // At kbench's bound, a few ulps either side: where the first pass cannot decide alone, the second
  // must count as PyTorch's ops do. (atol 1e-2 scaled by the mean |ref|, about 0.8.)
  const double atol_k = 1e-2 * std::min(1.0, ref.abs().mean().item<double>());
  const auto bound = ref.abs() * 1e-2 + atol_k;
  auto borderline = ref + bound * (1 + 4e-7 * torch::randint(-3, 4, {n}).to(torch::kFloat));
  for (const auto& [what, cand] : std::vector<Case>{
           {"close", noisy}, {"wrong", wrong}, {"nan", with_nan}, {"inf", with_inf}, {"borderline", borderline}}) {
    for (const bool robustness : {false, true}) {
      for (const auto rule : {check::KernelBenchRule::current, check::KernelBenchRule::v0_1}) {
        const check::Tolerance tol{1e-2, 1e-2, robustness, rule};
        const auto on_cpu = check::compare_outputs(ref, cand, tol);
        const auto on_gpu = check::compare_outputs(ref.cuda(), cand.cuda(), tol);
        INFO(what << (robustness ? " (robustness) " : " ") << check::to_string(rule) << ": cpu " << on_cpu.message << " | gpu " << on_gpu.message);
        CHECK(on_gpu.verdict == on_cpu.verdict);
        CHECK(on_gpu.kernelbench_verdict == on_cpu.kernelbench_verdict);
        CHECK(on_gpu.mismatched == on_cpu.mismatched);
        CHECK(on_gpu.upstream_mismatched == on_cpu.upstream_mismatched);
        CHECK(on_gpu.max_abs_error == on_cpu.max_abs_error);
        CHECK(on_gpu.max_rel_error == on_cpu.max_rel_error);
        CHECK(on_gpu.message == on_cpu.message);
        CHECK(on_gpu.kernelbench_message == on_cpu.kernelbench_message);
        CHECK(on_gpu.smallest_scaled_atol == Approx(on_cpu.smallest_scaled_atol).epsilon(1e-9));
      }
    }
  }
  // Zeros for a small output: kbench's rule fails, KernelBench v0.1's passes, today's fails, on both.
  const auto zeros = torch::zeros_like(small);
  const check::Tolerance v0_1{1e-2, 1e-2, false, check::KernelBenchRule::v0_1};
  const auto on_gpu = check::compare_outputs(small.cuda(), zeros.cuda(), v0_1);
  CHECK(on_gpu.verdict == check::Verdict::value_mismatch);
  CHECK(on_gpu.kernelbench_verdict == check::Verdict::correct);
  CHECK(on_gpu.mismatched == check::compare_outputs(small, zeros, v0_1).mismatched);
  const auto today_gpu = check::compare_outputs(small.cuda(), zeros.cuda(), {1e-2, 1e-2});
  CHECK(today_gpu.kernelbench_verdict == check::Verdict::value_mismatch);
  CHECK(today_gpu.upstream_mismatched == check::compare_outputs(small, zeros, {1e-2, 1e-2}).upstream_mismatched);
  // The fused path ran (float32 CUDA tensors), not PyTorch's ops.
  const auto fused = check::fused_compare(small.cuda(), zeros.cuda(), 1e-2, [](double) { return 1e-2; }, 1e-2);
  REQUIRE(fused.has_value());
  CHECK(fused->bad == 0);  // |0 - r| <= 1e-2 everywhere: the first pass alone says so
  CHECK(fused->mean_abs == Approx(small.abs().mean().item<double>()).epsilon(1e-6));
}

TEST_CASE("an input's fingerprint on the GPU, one pass, is the one PyTorch's sums give on the CPU", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  torch::manual_seed(11);
  for (const int64_t n : {int64_t{1}, int64_t{1000003}, (int64_t{1} << 24) + 5}) {
    const auto x = torch::randn({n});
    CHECK(check::fingerprint(x.cuda()) == check::fingerprint(x));
    if (n == 1) continue;
    const auto moved = torch::cat({x.narrow(0, 1, 1), x.narrow(0, 0, 1), x.narrow(0, 2, n - 2)});  // same words, other places
    CHECK(check::fingerprint(moved.cuda()) != check::fingerprint(x.cuda()));
  }
  REQUIRE(check::fused_word_sums(torch::zeros({8}, torch::kInt).cuda()).has_value());
}
