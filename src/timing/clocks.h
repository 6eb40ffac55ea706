// Clock throttling seen while a measurement runs, read from NVML (the driver's management library,
// opened at run time so kbench starts on machines without a driver). A throttled measurement is
// flagged in the record, not hidden.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kbench::timing {

struct ClockReport {
  bool available = false;      // NVML answered for this device
  std::string why_unavailable;
  int samples = 0;
  unsigned min_sm_mhz = 0, max_sm_mhz = 0;
  std::vector<std::string> throttle_reasons;  // those that slow the clocks (power cap, thermal, ...)
  bool throttled() const { return !throttle_reasons.empty(); }
};

// The SM clock at or above which a CUDA device runs unthrottled: 99% of its maximum, as NVML gives
// it (1961 MHz on an H100 SXM, whose maximum is 1980 and whose steps are 15 MHz); 0 where NVML is
// not available.
unsigned unthrottled_sm_mhz(int cuda_device);

// Opens NVML now (its start enumerates the devices), so that no measurement's time includes it: a
// process started ahead of its request (a ModelNew spare) calls it then, touching no GPU.
void open_nvml();

// Samples one CUDA device's SM clock and its clock-event reasons on demand. NVML is opened once
// per process; a watch only looks up its device.
class ClockWatch {
 public:
  explicit ClockWatch(int cuda_device);

  // The SM clock now, in MHz (0 where NVML is not available); cheap (microseconds): call outside
  // timed regions.
  unsigned sample();
  ClockReport report() const;

 private:
  void* device_ = nullptr;  // nvmlDevice_t, null when NVML is unavailable
  std::string why_unavailable_;
  int samples_ = 0;
  unsigned min_sm_mhz_ = 0, max_sm_mhz_ = 0;
  unsigned long long reasons_seen_ = 0;
};

}  // namespace kbench::timing
