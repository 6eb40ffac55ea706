#include "timing/reference_timing.h"

#include <ctime>
#include <optional>
#include <string>

#include "log/elapsed.h"
#include "problems/reference.h"

#ifdef KBENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace kbench::timing {
namespace {

// "2026-11-27T23:40:00+0000", as scripts/tools/compile_baselines.py stamps its entries.
std::string now_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S+0000", &utc);
  return text;
}

}  // namespace

ReferenceTiming time_reference(const problems::Problem& problem, int device, const TimingOptions& options) {
#ifdef KBENCH_WITH_CUDA
  torch::NoGradGuard no_grad;
  cudaSetDevice(device);  // the timer's events and the default stream are the current device's
  ReferenceTiming t;
  std::optional<log::PhaseTimer> loading(std::in_place, t.load_ms);
  problems::Reference reference(problem, torch::Device(torch::kCUDA, device));
  cudaDeviceSynchronize();
  loading.reset();
  const auto inputs = log::timed(t.inputs_ms, [&] {
    auto drawn = reference.make_inputs(1);
    cudaDeviceSynchronize();
    return drawn;
  });
  t.forward = measure([&] { reference.forward(inputs, 1); }, options);
  return t;
#else
  (void)problem; (void)device; (void)options;
  throw std::runtime_error("timing references needs a GPU build of kbench");
#endif
}

nlohmann::json baseline_entry(const Measurement& m, const std::string& gpu_name, int device, const std::string& path) {
  const auto& s = m.stats;
  nlohmann::json entry = {{"mean", s.mean}, {"std", s.stddev}, {"min", s.min}, {"max", s.max}, {"num_trials", s.count},
                          {"hardware", gpu_name}, {"device", "cuda:" + std::to_string(device)}, {"median", s.median},
                          {"noisy", m.noisy}, {"throttled", m.clocks.throttled()}, {"path", path},
                          {"torch", KBENCH_TORCH_VERSION}, {"kbench", KBENCH_VERSION}, {"created", now_utc()}};
  return entry;
}

}  // namespace kbench::timing
