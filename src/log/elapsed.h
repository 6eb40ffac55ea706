// Elapsed time, in the milliseconds that records and summaries give for each phase. Here, on the
// lowest floor, so that compile/, check/ and sandbox/ share one clock and one phase timer.
#pragma once

#include <chrono>
#include <functional>

#include <nlohmann/json.hpp>

namespace kbench::log {

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Times its scope: when it ends (also by an exception), its milliseconds are added to `total`, or
// written into `slot` (a record's phases["nvrtc"], say). Made without either, it only tells the
// milliseconds since it was made, for phases that end at several points.
class PhaseTimer {
 public:
  PhaseTimer() = default;
  explicit PhaseTimer(double& total) : end_([&total](double ms) { total += ms; }) {}
  explicit PhaseTimer(nlohmann::json& slot) : end_([&slot](double ms) { slot = ms; }) {}
  ~PhaseTimer() {
    if (end_) end_(elapsed_ms());
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

  double elapsed_ms() const { return ms_since(start_); }

 private:
  std::function<void(double)> end_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Calls `f` under a PhaseTimer on `slot` (a double& total or a json& slot); returns what `f` returns.
template <class Slot, class F>
decltype(auto) timed(Slot& slot, F&& f) {
  PhaseTimer timer(slot);
  return f();
}

}  // namespace kbench::log
