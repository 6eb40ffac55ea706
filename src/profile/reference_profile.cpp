#include "profile/reference_profile.h"

#include <set>

#include <torch/csrc/autograd/profiler_kineto.h>

#include "profile/breakdown.h"
#include "profile/candidate_profile.h"

#ifdef KBENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace kbench::profile {
namespace {

namespace kineto = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

// libtorch 2.x reports nanoseconds (startNs, durationNs), 1.13 microseconds: whichever the event has.
template <typename E>
auto start_ns(const E& e, int) -> decltype(e.startNs()) { return e.startNs(); }
template <typename E>
uint64_t start_ns(const E& e, long) { return e.startUs() * 1000; }
template <typename E>
auto duration_ns(const E& e, int) -> decltype(e.durationNs()) { return e.durationNs(); }
template <typename E>
uint64_t duration_ns(const E& e, long) { return e.durationUs() * 1000; }

void synchronize() {
#ifdef KBENCH_WITH_CUDA
  cudaDeviceSynchronize();
#endif
}

// Ends the profiling session however the forward ends.
class ProfilerSession {
 public:
  ProfilerSession() {
    // Input shapes and FLOP formulas: the problem's FLOP count comes from them.
    const ProfilerConfig config(ProfilerState::KINETO, /*report_input_shapes=*/true, /*profile_memory=*/false,
                                /*with_stack=*/false, /*with_flops=*/true);
    const std::set<ActivityType> activities = {ActivityType::CPU, ActivityType::CUDA};
    kineto::prepareProfiler(config, activities);
    kineto::enableProfiler(config, activities);
  }
  ~ProfilerSession() {
    if (!stopped_) kineto::disableProfiler();
  }
  ProfilerSession(const ProfilerSession&) = delete;
  ProfilerSession& operator=(const ProfilerSession&) = delete;

  std::vector<ProfiledEvent> stop() {
    stopped_ = true;
    const auto result = kineto::disableProfiler();
    std::vector<ProfiledEvent> events;
    for (const auto& e : result->events())
      events.push_back({e.name(), e.deviceType() == c10::DeviceType::CUDA, static_cast<uint64_t>(start_ns(e, 0)),
                        static_cast<uint64_t>(duration_ns(e, 0)), e.correlationId(), e.linkedCorrelationId(),
                        e.startThreadId(), e.flops()});
    return events;
  }

 private:
  bool stopped_ = false;
};

}  // namespace

nlohmann::json profile_reference(problems::Reference& reference, const std::vector<c10::IValue>& inputs, uint64_t seed,
                                 const launch::DeviceInfo& gpu) {
  torch::NoGradGuard no_grad;
  if (gpu.present) flush_l2(gpu);
  synchronize();
  ProfilerSession session;
  reference.forward(inputs, seed);
  synchronize();
  return summarize_reference(session.stop());
}

}  // namespace kbench::profile
