// Theoretical occupancy of one launch: how many of its blocks an SM holds at once, what bounds that
// (threads, registers, shared memory or the per-SM block limit), and how many waves the grid takes.
#pragma once

#include <cstdint>
#include <string>

#include "launch/cuda_driver.h"

namespace kbench::profile {

struct LaunchFootprint {
  int64_t threads_per_block = 0;
  int registers_per_thread = 0;
  int64_t shared_bytes_per_block = 0;  // static + dynamic
  int64_t grid_blocks = 0;
};

struct Occupancy {
  int blocks_per_sm = 0;
  double fraction = 0;      // resident threads / the SM's maximum
  std::string limited_by;   // "threads", "registers", "shared memory", "blocks per SM"
  double waves = 0;         // grid blocks / (blocks per SM x SMs)
};

// From the device's limits. `driver_blocks_per_sm` (cuOccupancyMaxActiveBlocksPerMultiprocessor,
// which knows the allocation granularities) wins where given (>= 0); the limit named is the one
// closest to it.
Occupancy theoretical_occupancy(const launch::DeviceInfo& gpu, const LaunchFootprint& launch, int driver_blocks_per_sm = -1);

}  // namespace kbench::profile
