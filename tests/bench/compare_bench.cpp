// Benchmark (not a test) of the output comparison every check pays (check/compare.h): for float32
// outputs from 16 Mi to 1.6 Gi elements (L1#21's 6.4 GB), the wall time of compare_outputs on a
// candidate within tolerance and on a wrong one, of an input's fingerprint, and of a device copy and
// a draw of the same bytes, for the bandwidth they could reach. Only the public interface is used,
// so that the same file measures an earlier kbench too. `scripts/gpu/gpu-session.sh compare-bench`
// runs it; one JSON line per size.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "check/compare.h"
#include "launch/cuda_driver.h"

namespace {

using namespace kbench;

// The median wall time of `fn` over `runs`, the device idle before each and synchronised after.
double median_ms(const std::function<void()>& fn, int runs = 9) {
  fn();  // first use: kernels loaded, allocator warm
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    cudaDeviceSynchronize();
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    cudaDeviceSynchronize();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(ms.begin(), ms.begin() + runs / 2, ms.end());
  return ms[runs / 2];
}

double gb_per_s(double bytes, double ms) { return bytes / (ms * 1e6); }

}  // namespace

int main() {
  try {
    const auto gpu = launch::query_device(0);
    if (!gpu.present) throw std::runtime_error("no GPU: " + gpu.why_absent);
    torch::NoGradGuard no_grad;
    const check::Tolerance tol{1e-2, 1e-2};
    for (const int64_t n : {int64_t{1} << 24, int64_t{1} << 28, int64_t{4096} * 393216}) {
      const auto opts = torch::dtype(torch::kFloat32).device(torch::kCUDA);
      auto ref = torch::randn({n}, opts);
      auto close = ref + 1e-4 * torch::randn({n}, opts);
      auto wrong = close.clone();
      wrong.narrow(0, n / 2, 1000).mul_(1.5);
      const double bytes = 4.0 * static_cast<double>(n);
      check::Comparison c_close, c_wrong;
      const double compare_close = median_ms([&] { c_close = check::compare_outputs(ref, close, tol); });
      const double compare_wrong = median_ms([&] { c_wrong = check::compare_outputs(ref, wrong, tol); });
      const double fingerprint = median_ms([&] { check::fingerprint(ref); });
      const double copy = median_ms([&] { close.copy_(ref); });
      const double draw = median_ms([&] { close.normal_(); });
      std::printf("%s\n", nlohmann::json{{"elements", n},
                                         {"bytes", bytes},
                                         {"compare_close_ms", compare_close},
                                         {"compare_wrong_ms", compare_wrong},
                                         {"close_correct", c_close.verdict == check::Verdict::correct},
                                         {"wrong_mismatched", c_wrong.mismatched},
                                         {"fingerprint_ms", fingerprint},
                                         {"copy_ms", copy},
                                         {"draw_ms", draw},
                                         // What each read: compare_close over both outputs, copy read and wrote.
                                         {"compare_close_read_GBps", gb_per_s(2 * bytes, compare_close)},
                                         {"fingerprint_read_GBps", gb_per_s(bytes, fingerprint)},
                                         {"copy_read_write_GBps", gb_per_s(2 * bytes, copy)}}
                                  .dump()
                                  .c_str());
      std::fflush(stdout);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kbench_compare_bench: %s\n", e.what());
    return 1;
  }
}
