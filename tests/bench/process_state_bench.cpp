// Benchmark (not a test) of what a ModelNew's process-state checks pay for PyTorch's dispatcher
// (check/process_state.h): the median wall time of a capture of every op's kernels (the snapshot
// and the check at the end) and of a capture of the ops a ReLU's reference and comparison are seen
// to call (the check before each reference run). CPU only: the dispatcher is host memory. Only the
// public interface is used, so that the same file measures an earlier kbench too. One JSON line.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <torch/torch.h>

#include "check/process_state.h"

namespace {

double median_ms(const std::function<void()>& fn, int runs = 15) {
  fn();  // first use
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(ms.begin(), ms.begin() + runs / 2, ms.end());
  return ms[runs / 2];
}

}  // namespace

int main() {
  using namespace kbench::check;
  size_t ops = 0;
  const double all_ms = median_ms([&] { ops = capture_dispatcher().size(); });
  // What a ReLU's reference and a comparison of its output call, as the watch sees them.
  const auto watched = ops_called_by([] {
    const auto x = torch::randn({64, 64});
    const auto out = torch::relu(x);
    (void)(torch::abs(out - out) <= 1e-5 + 1e-5 * torch::abs(out)).all().item<bool>();
    (void)torch::isfinite(out).all().item<bool>();
  });
  const double watched_ms = median_ms([&] { capture_dispatcher(watched); });
  std::printf("%s\n", nlohmann::json{{"ops", ops},
                                     {"all_ops_ms", all_ms},
                                     {"watched_ops", watched.size()},
                                     {"watched_ops_ms", watched_ms},
                                     {"hardware_threads", std::thread::hardware_concurrency()}}
                          .dump()
                          .c_str());
  return 0;
}
