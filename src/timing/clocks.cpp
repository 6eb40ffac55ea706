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
using ClockInfoFn = int (*)(NvmlDevice, int, unsigned*);  // also the maximum clock's signature
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

// The driver's NVML, opened on first use and kept for the life of the process.
struct Nvml {
  HandleByBusIdFn by_bus = nullptr;
  ReasonsFn reasons = nullptr;
  ClockInfoFn clock_info = nullptr;
  ClockInfoFn max_clock_info = nullptr;
  std::string why_unavailable;  // empty when usable
};

const Nvml& nvml() {
  static const Nvml instance = [] {
    Nvml n;
    void* library = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      n.why_unavailable = "libnvidia-ml.so.1 not found";
      return n;
    }
    auto init = reinterpret_cast<InitFn>(::dlsym(library, "nvmlInit_v2"));
    n.by_bus = reinterpret_cast<HandleByBusIdFn>(::dlsym(library, "nvmlDeviceGetHandleByPciBusId_v2"));
    n.reasons = reinterpret_cast<ReasonsFn>(::dlsym(library, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!n.reasons)  // the name before NVML 12.2
      n.reasons = reinterpret_cast<ReasonsFn>(::dlsym(library, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    n.clock_info = reinterpret_cast<ClockInfoFn>(::dlsym(library, "nvmlDeviceGetClockInfo"));
    n.max_clock_info = reinterpret_cast<ClockInfoFn>(::dlsym(library, "nvmlDeviceGetMaxClockInfo"));
    if (!init || !n.by_bus || !n.reasons || !n.clock_info || !n.max_clock_info)
      n.why_unavailable = "libnvidia-ml lacks an expected function";
    else if (init() != kNvmlSuccess) n.why_unavailable = "nvmlInit failed";
    return n;
  }();
  return instance;
}

// NVML's handle of a CUDA device, or null with the reason in `why`.
NvmlDevice nvml_device(int cuda_device, std::string& why) {
#ifdef KBENCH_WITH_CUDA
  const auto& n = nvml();
  char bus_id[32] = {};
  NvmlDevice device = nullptr;
  if (!n.why_unavailable.empty()) {
    why = n.why_unavailable;
  } else if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, cuda_device) != cudaSuccess ||
             n.by_bus(bus_id, &device) != kNvmlSuccess) {
    why = "NVML does not know the CUDA device's PCI bus";
  } else {
    return device;
  }
#else
  (void)cuda_device;
  why = "no GPU build";
#endif
  return nullptr;
}

}  // namespace

void open_nvml() { (void)nvml(); }

unsigned unthrottled_sm_mhz(int cuda_device) {
  std::string why;
  const NvmlDevice device = nvml_device(cuda_device, why);
  unsigned max_mhz = 0;
  if (!device || nvml().max_clock_info(device, kNvmlClockSm, &max_mhz) != kNvmlSuccess) return 0;
  return max_mhz - max_mhz / 100;
}

ClockWatch::ClockWatch(int cuda_device) { device_ = nvml_device(cuda_device, why_unavailable_); }

unsigned ClockWatch::sample() {
  if (!device_) return 0;
  const auto& n = nvml();
  unsigned long long reasons = 0;
  unsigned mhz = 0;
  if (n.reasons(device_, &reasons) == kNvmlSuccess) reasons_seen_ |= reasons;
  if (n.clock_info(device_, kNvmlClockSm, &mhz) == kNvmlSuccess) {
    min_sm_mhz_ = samples_ == 0 ? mhz : std::min(min_sm_mhz_, mhz);
    max_sm_mhz_ = std::max(max_sm_mhz_, mhz);
    ++samples_;
  }
  return mhz;
}

ClockReport ClockWatch::report() const {
  ClockReport r;
  r.available = device_ != nullptr;
  r.why_unavailable = why_unavailable_;
  r.samples = samples_;
  r.min_sm_mhz = min_sm_mhz_;
  r.max_sm_mhz = max_sm_mhz_;
  for (const auto& reason : kThrottleReasons)
    if (reasons_seen_ & reason.bit) r.throttle_reasons.push_back(reason.name);
  return r;
}

}  // namespace kbench::timing
