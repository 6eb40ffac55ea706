#include "check/footprint.h"

#include "check/correctness.h"
#include "check/reference_outputs.h"

#ifdef KBENCH_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

namespace kbench::check {

Footprint measure_footprint(problems::Reference& reference, uint64_t seed, bool offload_candidate_output) {
#ifdef KBENCH_WITH_CUDA
  namespace allocator = c10::cuda::CUDACachingAllocator;
  torch::NoGradGuard no_grad;
  int device = 0;
  cudaGetDevice(&device);
  cudaDeviceSynchronize();
  allocator::emptyCache();
  allocator::resetPeakStats(static_cast<c10::DeviceIndex>(device));
  Footprint f;
  f.weight_bytes = reference.problem().weight_bytes;
  f.input_bytes = reference.problem().input_bytes;
  {
    const auto candidate_weights = copy_of_state(reference.state());
    auto inputs = reference.make_inputs(seed);
    auto candidate_output = run_reference(reference, inputs, seed);  // what a candidate would return
    c10::IValue reference_output;
    with_output_in_host_memory(candidate_output, offload_candidate_output, [&] {
      reference_output = run_reference(reference, inputs, seed);
      inputs.clear();  // as a trial drops them before the comparison
    });
    f.output_bytes = bytes_of(reference_output);
  }
  // Index 0 is StatType::AGGREGATE (all pools), whose namespace differs between libtorch versions.
  f.peak_bytes = allocator::getDeviceStats(static_cast<c10::DeviceIndex>(device)).allocated_bytes[0].peak;
  allocator::emptyCache();
  return f;
#else
  (void)reference, (void)seed, (void)offload_candidate_output;
  throw std::runtime_error("measuring GPU memory needs a GPU build of kbench");
#endif
}

nlohmann::json to_json(const Footprint& f) {
  return {{"peak_bytes", f.peak_bytes}, {"input_bytes", f.input_bytes}, {"output_bytes", f.output_bytes},
          {"weight_bytes", f.weight_bytes}};
}

nlohmann::json exceeded_limit_json(int64_t limit_bytes) { return {{"out_of_memory_under_bytes", limit_bytes}}; }

}  // namespace kbench::check
