#include "profile/occupancy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace kbench::profile {
namespace {

constexpr int kWarp = 32;
constexpr int kRegisterGranule = 256;         // registers are allocated per warp in units of 256
constexpr int64_t kSharedReservedPerBlock = 1024;  // the driver keeps 1 KiB of shared memory per block (sm_80 on)

}  // namespace

Occupancy theoretical_occupancy(const launch::DeviceInfo& gpu, const LaunchFootprint& launch, int driver_blocks_per_sm) {
  Occupancy o;
  const int64_t warps = (launch.threads_per_block + kWarp - 1) / kWarp;
  if (warps <= 0 || gpu.max_threads_per_multiprocessor <= 0) return o;
  constexpr int64_t unbounded = std::numeric_limits<int>::max();
  const int64_t registers_per_warp =
      (static_cast<int64_t>(launch.registers_per_thread) * kWarp + kRegisterGranule - 1) / kRegisterGranule * kRegisterGranule;
  const std::vector<std::pair<std::string, int64_t>> limits = {
      {"threads", gpu.max_threads_per_multiprocessor / (warps * kWarp)},
      {"registers", registers_per_warp > 0 && gpu.registers_per_multiprocessor > 0
                        ? gpu.registers_per_multiprocessor / (registers_per_warp * warps) : unbounded},
      {"shared memory", launch.shared_bytes_per_block > 0 && gpu.shared_per_multiprocessor > 0
                            ? gpu.shared_per_multiprocessor / (launch.shared_bytes_per_block + kSharedReservedPerBlock)
                            : unbounded},
      {"blocks per SM", gpu.max_blocks_per_multiprocessor > 0 ? gpu.max_blocks_per_multiprocessor : unbounded}};
  const auto tightest = std::min_element(limits.begin(), limits.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
  o.blocks_per_sm = static_cast<int>(driver_blocks_per_sm >= 0 ? driver_blocks_per_sm : tightest->second);
  // The limit that explains the answer: the tightest one at or above it.
  int64_t closest = unbounded + 1;
  for (const auto& [name, blocks] : limits)
    if (blocks >= o.blocks_per_sm && blocks < closest) closest = blocks, o.limited_by = name;
  if (o.limited_by.empty()) o.limited_by = tightest->first;
  o.fraction = static_cast<double>(o.blocks_per_sm * warps * kWarp) / gpu.max_threads_per_multiprocessor;
  if (o.blocks_per_sm > 0 && gpu.multiprocessors > 0)
    o.waves = static_cast<double>(launch.grid_blocks) / (static_cast<double>(o.blocks_per_sm) * gpu.multiprocessors);
  return o;
}

}  // namespace kbench::profile
