#include "timing/reference_timing.h"

#include <optional>

#include "log/elapsed.h"
#include "problems/reference.h"
#include "timing/compiled_reference.h"

#ifdef KBENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace kbench::timing {

ReferenceTiming time_reference(const problems::Problem& problem, int device, const TimingOptions& options,
                               const std::string& compiled_gpu_slug) {
#ifdef KBENCH_WITH_CUDA
  torch::NoGradGuard no_grad;
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
  if (!compiled_gpu_slug.empty()) {
    try {
      CompiledReference compiled(problem, compiled_gpu_slug);
      t.compiled = measure([&] { compiled.run(inputs); }, options);
    } catch (const std::exception& e) {
      const std::string what = e.what();
      t.compiled_unavailable = what.substr(0, what.find('\n'));
    }
  }
  return t;
#else
  (void)problem; (void)device; (void)options; (void)compiled_gpu_slug;
  throw std::runtime_error("timing references needs a GPU build of kbench");
#endif
}

nlohmann::json baseline_entry(const Measurement& m, const std::string& gpu_name, int device, const std::string& path) {
  const auto& s = m.stats;
  nlohmann::json entry = {{"mean", s.mean}, {"std", s.stddev}, {"min", s.min}, {"max", s.max}, {"num_trials", s.count},
                          {"hardware", gpu_name}, {"device", "cuda:" + std::to_string(device)}, {"median", s.median},
                          {"noisy", m.noisy}, {"throttled", m.clocks.throttled()}};
  if (!path.empty()) entry["path"] = path;
  return entry;
}

}  // namespace kbench::timing
