#include "timing/clocks.h"

#include <algorithm>
#include <dlfcn.h>

#ifdef KBENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace kbench::timing {
namespace {

// The few NVML entry points used, by their C ABI (nvml.h is not part of every CUDA toolkit install).
using NvmlDevice = void*;
using InitFn = int (*)();
using HandleByBusIdFn = int (*)(const char*, NvmlDevice*);
using ReasonsFn = int (*)(NvmlDevice, unsigned long long*);
using ClockInfoFn = int (*)(NvmlDevice, int, unsigned*);
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;

// Clock-event reasons that lower the clocks under load (nvml.h's nvmlClocksEventReason* bits).
// Idle, application-clock and display settings are not throttling.
constexpr struct {
  unsigned long long bit;
  const char* name;
} kThrottleReasons[] = {
    {0x4, "software power cap"},     {0x8, "hardware slowdown"},          {0x20, "software thermal slowdown"},
    {0x40, "hardware thermal slowdown"}, {0x80, "hardware power brake"},
};

}  // namespace

struct ClockWatch::Nvml {
  void* library = nullptr;
  NvmlDevice device = nullptr;
  ReasonsFn reasons = nullptr;
  ClockInfoFn clock_info = nullptr;
  ~Nvml() {
    if (library) ::dlclose(library);
  }
};

ClockWatch::ClockWatch(int cuda_device) {
#ifdef KBENCH_WITH_CUDA
  auto nvml = std::make_unique<Nvml>();
  nvml->library = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!nvml->library) {
    report_.why_unavailable = "libnvidia-ml.so.1 not found";
    return;
  }
  auto init = reinterpret_cast<InitFn>(::dlsym(nvml->library, "nvmlInit_v2"));
  auto by_bus = reinterpret_cast<HandleByBusIdFn>(::dlsym(nvml->library, "nvmlDeviceGetHandleByPciBusId_v2"));
  nvml->reasons = reinterpret_cast<ReasonsFn>(::dlsym(nvml->library, "nvmlDeviceGetCurrentClocksEventReasons"));
  if (!nvml->reasons)  // the name before NVML 12.2
    nvml->reasons = reinterpret_cast<ReasonsFn>(::dlsym(nvml->library, "nvmlDeviceGetCurrentClocksThrottleReasons"));
  nvml->clock_info = reinterpret_cast<ClockInfoFn>(::dlsym(nvml->library, "nvmlDeviceGetClockInfo"));
  char bus_id[32] = {};
  if (!init || !by_bus || !nvml->reasons || !nvml->clock_info) {
    report_.why_unavailable = "libnvidia-ml lacks an expected function";
  } else if (init() != kNvmlSuccess) {
    report_.why_unavailable = "nvmlInit failed";
  } else if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, cuda_device) != cudaSuccess ||
             by_bus(bus_id, &nvml->device) != kNvmlSuccess) {
    report_.why_unavailable = "NVML does not know the CUDA device's PCI bus";
  } else {
    report_.available = true;
    nvml_ = std::move(nvml);
  }
#else
  (void)cuda_device;
  report_.why_unavailable = "no GPU build";
#endif
}

ClockWatch::~ClockWatch() = default;

void ClockWatch::sample() {
  if (!nvml_) return;
  unsigned long long reasons = 0;
  unsigned mhz = 0;
  if (nvml_->reasons(nvml_->device, &reasons) == kNvmlSuccess) reasons_seen_ |= reasons;
  if (nvml_->clock_info(nvml_->device, kNvmlClockSm, &mhz) == kNvmlSuccess) {
    report_.min_sm_mhz = report_.samples == 0 ? mhz : std::min(report_.min_sm_mhz, mhz);
    report_.max_sm_mhz = std::max(report_.max_sm_mhz, mhz);
    ++report_.samples;
  }
  report_.throttle_reasons.clear();
  for (const auto& r : kThrottleReasons)
    if (reasons_seen_ & r.bit) report_.throttle_reasons.push_back(r.name);
}

}  // namespace kbench::timing
