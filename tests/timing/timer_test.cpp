// timing::measure on the GPU: what it counts as the candidate's time.
#include "fixtures.h"
#include "timing/timer.h"

#ifdef KBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/torch.h>
#endif

#include "catch.h"  // last: libtorch can bring glog, whose CHECK would replace Catch's

using namespace kbench;

TEST_CASE("work left on another stream is counted, and a short kernel on the timed stream is not flagged", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
#ifdef KBENCH_WITH_CUDA
  torch::NoGradGuard no_grad;
  const auto on_gpu = torch::dtype(torch::kFloat32).device(torch::kCUDA);
  timing::TimingOptions options;
  options.trials = 30;

  // Microseconds of work on the timed stream, behind the L2 flush: nothing is hidden.
  auto small = torch::ones({1 << 16}, on_gpu);
  const auto short_kernel = timing::measure([&] { small.mul_(1.0f); }, options);
  CHECK(short_kernel.hidden_work_trials == 0);
  CHECK(short_kernel.stats.mean < 0.1);

  // A matrix product of milliseconds on a stream the timed one never waits for.
  auto a = torch::randn({4096, 4096}, on_gpu);
  const auto alone = timing::measure([&] { a.mm(a); }, options);
  auto side = at::cuda::getStreamFromPool();
  const auto hidden = timing::measure(
      [&] {
        c10::cuda::CUDAStreamGuard guard(side);
        a.mm(a);
      },
      options);
  INFO("alone " << alone.stats.mean << " ms, on a side stream " << hidden.stats.mean << " ms");
  CHECK(alone.hidden_work_trials == 0);
  CHECK(hidden.hidden_work_trials == options.trials);
  CHECK(hidden.stats.mean > 0.8 * alone.stats.mean);
  CHECK_FALSE(hidden.warnings.empty());
#endif
}
