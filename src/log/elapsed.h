// Milliseconds since a point of the steady clock: the phase times that records and summaries give.
// Here, on the lowest floor, so that compile/, check/ and sandbox/ share one.
#pragma once

#include <chrono>

namespace kbench::log {

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace kbench::log
