#include "timing/timer.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#ifdef KBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime_api.h>
#endif

namespace kbench::timing {
namespace {

std::string noisy_warning(double cv) { return "noisy: coefficient of variation " + std::to_string(cv); }

}  // namespace

const char* mode_name(TimingMode mode) {
  switch (mode) {
    case TimingMode::fixed: return "fixed";
    case TimingMode::adaptive: return "adaptive";
    case TimingMode::both: return "both";
  }
  return "fixed";
}

bool parse_mode(const std::string& name, TimingMode& mode) {
  for (auto m : {TimingMode::fixed, TimingMode::adaptive, TimingMode::both})
    if (name == mode_name(m)) {
      mode = m;
      return true;
    }
  return false;
}

#ifdef KBENCH_WITH_CUDA
namespace {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

// Owns one CUDA event; destroyed exactly once.
class Event {
 public:
  Event() { check(cudaEventCreate(&event_), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t s) { check(cudaEventRecord(event_, s), "cudaEventRecord"); }
  cudaEvent_t get() const { return event_; }
  float since(const Event& start) const {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start.event_, event_), "cudaEventElapsedTime");
    return ms;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

// A buffer twice the size of the L2; writing it evicts whatever the last trial left there.
class L2Flush {
 public:
  L2Flush() {
    int device = 0, l2 = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute");
    bytes_ = static_cast<size_t>(l2) * 2;
    if (bytes_ > 0) check(cudaMalloc(&buffer_, bytes_), "cudaMalloc (L2 flush buffer)");
  }
  ~L2Flush() {
    if (buffer_) cudaFree(buffer_);
  }
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;
  void flush(cudaStream_t s) {
    // Lines marked persisting (an access-policy window) would survive the writes below: made normal
    // first. A GPU without persisting L2 refuses the call, which is then no error of anyone's.
    if (cudaCtxResetPersistingL2Cache() != cudaSuccess) cudaGetLastError();
    if (buffer_) check(cudaMemsetAsync(buffer_, ++pattern_, bytes_, s), "cudaMemsetAsync (L2 flush)");
  }

 private:
  void* buffer_ = nullptr;
  size_t bytes_ = 0;
  int pattern_ = 0;
};

// The smallest hidden work the check below reports, and so the most an idle synchronisation may
// count for.
constexpr double kSmallestHiddenWorkMs = 0.02;

// Device work after the stop event, beyond the cost of an idle synchronisation, that marks a trial
// as having left work on another stream: 0.02 ms, or 2% of a long trial (host jitter in the
// synchronisation after a 10 ms kernel reaches tens of microseconds; on the H100, 10 of 500 trials).
double hidden_work_threshold_ms(double trial_ms) { return std::max(kSmallestHiddenWorkMs, 0.02 * trial_ms); }

double wall_ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

// Longer than 60 lines on purpose: the protocol's order (warm-up, flush, events, stop rule, clock
// readings, idle check) is the measurement, and is read in one place.
Measurement measure(const std::function<void()>& run, const TimingOptions& options, const CallHooks& hooks) {
  Measurement m;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
  L2Flush l2;
  Event start, stop;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  ClockWatch clocks(device);
  for (int i = 0; i < options.warmup; ++i) {
    if (hooks.before) hooks.before(i - options.warmup);
    run();
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (warm-up)");

  // Host cost of synchronising an idle device: the floor of the hidden-work check below. Bounded,
  // because the device may not be idle: work that a thread keeps queued would raise the floor to its
  // own length and hide every trial's work on other streams below it.
  double idle_sync = kSmallestHiddenWorkMs;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    idle_sync = std::min(idle_sync, wall_ms_since(t0));
  }
  for (int i = 0; i < options.trials; ++i) {
    if (hooks.before) {
      hooks.before(i);
      // The hook's work (an input drawn on the GPU) must not run into the timed region.
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (before trial)");
    }
    if (options.flush_l2) l2.flush(stream);
    start.record(stream);
    run();
    stop.record(stream);
    check(cudaEventSynchronize(stop.get()), "cudaEventSynchronize (trial)");
    // The timed stream is done. Work left running on another stream finishes after the stop
    // event: the events do not see it, but the device synchronisation waits for it, and the trial
    // counts that wait. The window is a few microseconds on an idle device, so host jitter rarely
    // falls into it (a wall-clock window around the whole trial mistook jitter for hidden work).
    const auto t0 = std::chrono::steady_clock::now();
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (trial)");
    const double beyond = wall_ms_since(t0) - idle_sync;
    double ms = stop.since(start);
    if (beyond > hidden_work_threshold_ms(ms)) {
      ++m.hidden_work_trials;
      ms += beyond;
    }
    m.trial_ms.push_back(ms);
    m.trial_sm_mhz.push_back(clocks.sample());
    if (hooks.after) {
      hooks.after(i);
      // Whatever the hook enqueued must not run into the next trial's wall-clock window.
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (after trial)");
    }
    if (hooks.finished && hooks.finished(i, m)) break;
  }
  m.stats = summarize(m.trial_ms);
  m.clocks = clocks.report();
  m.noisy = m.stats.cv > options.noisy_cv;
  if (m.clocks.throttled()) {
    std::string reasons;
    for (const auto& r : m.clocks.throttle_reasons) reasons += (reasons.empty() ? "" : ", ") + r;
    m.warnings.push_back("throttled: " + reasons + " (SM clock " + std::to_string(m.clocks.min_sm_mhz) + "-" +
                         std::to_string(m.clocks.max_sm_mhz) + " MHz)");
  }
  if (m.noisy) m.warnings.push_back(noisy_warning(m.stats.cv));
  if (m.hidden_work_trials > 0)
    m.warnings.push_back(std::to_string(m.hidden_work_trials) +
                         " trial(s) left work running beyond the timed stream; counted until the device was idle");
  return m;
}

#else

Measurement measure(const std::function<void()>&, const TimingOptions&, const CallHooks&) {
  throw std::runtime_error("timing needs a GPU build of kbench");
}

#endif

Measurement select_trials(const Measurement& all, const std::function<bool(int)>& keep, const TimingOptions& options) {
  Measurement m = all;
  m.trial_ms.clear();
  m.trial_sm_mhz.clear();
  for (size_t i = 0; i < all.trial_ms.size(); ++i)
    if (keep(static_cast<int>(i))) {
      m.trial_ms.push_back(all.trial_ms[i]);
      if (i < all.trial_sm_mhz.size()) m.trial_sm_mhz.push_back(all.trial_sm_mhz[i]);
    }
  m.stats = summarize(m.trial_ms);
  m.noisy = m.stats.cv > options.noisy_cv;
  m.warnings.erase(std::remove_if(m.warnings.begin(), m.warnings.end(),
                                  [](const std::string& w) { return w.rfind("noisy:", 0) == 0; }),
                   m.warnings.end());
  if (m.noisy) m.warnings.push_back(noisy_warning(m.stats.cv));
  return m;
}

nlohmann::json to_json(const Measurement& m) {
  auto j = to_json(m.stats);
  j["noisy"] = m.noisy;
  j["hidden_work_trials"] = m.hidden_work_trials;
  j["throttled"] = m.clocks.throttled();
  j["clocks"] = m.clocks.available
                    ? nlohmann::json{{"sm_mhz_min", m.clocks.min_sm_mhz}, {"sm_mhz_max", m.clocks.max_sm_mhz},
                                     {"samples", m.clocks.samples}, {"throttle_reasons", m.clocks.throttle_reasons}}
                    : nlohmann::json{{"unavailable", m.clocks.why_unavailable}};
  j["warnings"] = m.warnings;
  return j;
}

}  // namespace kbench::timing
