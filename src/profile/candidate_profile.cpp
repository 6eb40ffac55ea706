#include "profile/candidate_profile.h"

#include <stdexcept>

#include "profile/breakdown.h"
#include "profile/occupancy.h"

#ifdef KBENCH_WITH_CUDA
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/record_function.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include "launch/launch_op.h"
#endif

namespace kbench::profile {

#ifdef KBENCH_WITH_CUDA
namespace {

// Long enough for the host program of a deep model to enqueue its forward; a forward that waits
// for the GPU meanwhile loses no more than this.
constexpr auto kHoldLimit = std::chrono::seconds(1);

using Event = at::cuda::CUDAEvent;
Event timing_event() { return Event(cudaEventDefault); }  // CUDAEvent's own default cannot time

// Holds a stream still on a host-mapped flag (cuStreamWaitValue32) until release(), or until a
// watchdog opens it after kHoldLimit. Owns the flag's pinned memory and the watchdog thread.
class StreamHold {
 public:
  explicit StreamHold(cudaStream_t stream) : stream_(stream) {
    void* host = nullptr;
    if (cuMemHostAlloc(&host, sizeof(uint32_t), CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS) {
      note_ = "not held (no pinned memory for the flag): the times include the host's launch gaps";
      return;
    }
    flag_ = static_cast<uint32_t*>(host);
    *flag_ = 0;
    CUdeviceptr device = 0;
    if (cuMemHostGetDevicePointer(&device, host, 0) != CUDA_SUCCESS ||
        cuStreamWaitValue32(stream, device, 1, CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS) {
      note_ = "not held (this GPU or driver cannot make a stream wait on a host flag): the times include the host's launch gaps";
      return;
    }
    held_ = true;
    watchdog_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!released_cv_.wait_for(lock, kHoldLimit, [this] { return released_; })) {
        timed_out_ = true;
        open();
      }
    });
  }
  ~StreamHold() {
    release();
    if (held_) cudaStreamSynchronize(stream_);  // the wait has read the flag before its memory goes
    if (flag_) cuMemFreeHost(flag_);
  }
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;

  void release() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (released_) return;
      released_ = true;
      if (!timed_out_) open();
    }
    released_cv_.notify_all();
    if (watchdog_.joinable()) watchdog_.join();
  }

  std::string note() const {
    if (!held_) return note_;
    if (timed_out_)
      return "released after 1 s: forward waited for the GPU (a synchronising call) while its stream was held, so the "
             "times include the host's gaps";
    return "held while forward enqueued its work: the times are the GPU's, back to back";
  }

 private:
  void open() {
    if (flag_) __atomic_store_n(flag_, 1u, __ATOMIC_SEQ_CST);
  }

  cudaStream_t stream_;
  uint32_t* flag_ = nullptr;
  bool held_ = false, released_ = false, timed_out_ = false;
  std::string note_;
  std::mutex mutex_;
  std::condition_variable released_cv_;
  std::thread watchdog_;
};

struct TimedLaunch {
  launch::LaunchShape shape;
  Event start = timing_event(), stop = timing_event();
  bool enqueued = false;
};

struct TimedOp {
  std::string op;
  int64_t after_launches = 0;
  Event start = timing_event(), stop = timing_event();
  bool ended = false;
};

class ForwardRecorder;
// RecordFunction callbacks are plain function pointers: the recorder and the nesting depth are
// thread-local, as in check/torch_op_observer.cpp.
thread_local ForwardRecorder* t_recorder = nullptr;
thread_local int t_depth = 0;

struct OpContext : at::ObserverContext {
  size_t index = 0;
};

// Events around every launch (the launch observer) and around every top-level PyTorch op the host
// program calls (RecordFunction), on the current stream. Installs itself; removes itself when destroyed.
class ForwardRecorder : public launch::LaunchObserver {
 public:
  ForwardRecorder() {
    t_recorder = this;
    t_depth = 0;
    handle_ = at::addThreadLocalCallback(
        at::RecordFunctionCallback(on_op_start, on_op_end).scopes({at::RecordScope::FUNCTION}));
    launch::set_launch_observer(this);
  }
  ~ForwardRecorder() override {
    launch::set_launch_observer(nullptr);
    at::removeCallback(handle_);
    t_recorder = nullptr;
  }
  ForwardRecorder(const ForwardRecorder&) = delete;
  ForwardRecorder& operator=(const ForwardRecorder&) = delete;

  void before(const launch::LaunchShape& shape) override {
    launches_.emplace_back();
    launches_.back().shape = shape;
    launches_.back().start.record(at::cuda::getCurrentCUDAStream());
  }
  void after(const launch::LaunchShape&) override {
    launches_.back().stop.record(at::cuda::getCurrentCUDAStream());
    launches_.back().enqueued = true;
  }

  std::deque<TimedLaunch> launches_;
  std::deque<TimedOp> ops_;

 private:
  static bool is_kbench_op(const at::RecordFunction& fn) { return std::string(fn.name()).rfind("kbench::", 0) == 0; }

  static std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction& fn) {
    const bool top = t_depth++ == 0;
    if (!t_recorder || !top || is_kbench_op(fn)) return nullptr;  // a launch is timed by the launch observer
    auto& ops = t_recorder->ops_;
    ops.emplace_back();
    ops.back().op = fn.name();
    ops.back().after_launches = static_cast<int64_t>(t_recorder->launches_.size());
    ops.back().start.record(at::cuda::getCurrentCUDAStream());
    auto context = std::make_unique<OpContext>();
    context->index = ops.size() - 1;
    return context;
  }

  static void on_op_end(const at::RecordFunction&, at::ObserverContext* context) {
    --t_depth;
    if (!t_recorder || !context) return;
    auto& op = t_recorder->ops_.at(static_cast<OpContext*>(context)->index);
    op.stop.record(at::cuda::getCurrentCUDAStream());
    op.ended = true;
  }

  uint64_t handle_ = 0;
};

nlohmann::json launch_entry(const TimedLaunch& l, const launch::DeviceInfo& gpu) {
  const auto& s = l.shape;
  const auto* k = s.kernel;
  const int64_t threads = int64_t{s.block[0]} * s.block[1] * s.block[2];
  const int64_t blocks = int64_t{s.grid[0]} * s.grid[1] * s.grid[2];
  int driver_blocks = -1;
  if (cuOccupancyMaxActiveBlocksPerMultiprocessor(&driver_blocks, static_cast<CUfunction>(k->function),
                                                  static_cast<int>(threads), s.shared_mem) != CUDA_SUCCESS)
    driver_blocks = -1;
  const int64_t shared = int64_t{k->static_shared_bytes} + s.shared_mem;
  const auto occupancy = theoretical_occupancy(gpu, {threads, k->registers_per_thread, shared, blocks}, driver_blocks);
  return {{"kernel", k->signature.name},
          {"grid", {s.grid[0], s.grid[1], s.grid[2]}},
          {"block", {s.block[0], s.block[1], s.block[2]}},
          {"grid_blocks", blocks},
          {"block_threads", threads},
          {"dynamic_shared_bytes", s.shared_mem},
          {"static_shared_bytes", k->static_shared_bytes},
          {"shared_bytes_per_block", shared},
          {"registers_per_thread", k->registers_per_thread},
          {"local_bytes_per_thread", k->local_bytes_per_thread},
          {"blocks_per_sm", occupancy.blocks_per_sm},
          {"occupancy", occupancy.fraction},
          {"limited_by", occupancy.limited_by},
          {"waves", occupancy.waves},
          {"gpu_ms", l.start.elapsed_time(l.stop)}};
}

}  // namespace

void flush_l2(const launch::DeviceInfo& gpu) {
  if (gpu.l2_bytes > 0)
    at::empty({2 * static_cast<int64_t>(gpu.l2_bytes)}, at::TensorOptions().dtype(at::kByte).device(at::kCUDA, gpu.ordinal))
        .fill_(1);
}

nlohmann::json profile_candidate(const compile::HostProgram& host, const c10::Dict<std::string, at::Tensor>& params,
                                 const std::vector<c10::IValue>& inputs, const launch::DeviceInfo& gpu) {
  torch::NoGradGuard no_grad;
  const auto stream = at::cuda::getCurrentCUDAStream();
  flush_l2(gpu);
  if (cudaDeviceSynchronize() != cudaSuccess) throw std::runtime_error("cudaDeviceSynchronize before the profiled call failed");
  ForwardRecorder recorder;
  auto begin = timing_event(), end = timing_event();
  std::string hold_note;
  {
    StreamHold hold(stream.stream());
    begin.record(stream);
    host.forward(inputs, params);  // the output is not needed: it was checked before
    end.record(stream);
    hold.release();
    hold_note = hold.note();
  }
  const cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) throw std::runtime_error(std::string("the profiled call failed: ") + cudaGetErrorString(err));

  nlohmann::json launches = nlohmann::json::array(), ops = nlohmann::json::array();
  for (const auto& l : recorder.launches_)
    if (l.enqueued) launches.push_back(launch_entry(l, gpu));
  for (const auto& o : recorder.ops_)
    if (o.ended) ops.push_back({{"op", o.op}, {"after_launches", o.after_launches}, {"gpu_ms", o.start.elapsed_time(o.stop)}});
  nlohmann::json candidate = {{"forward_ms", begin.elapsed_time(end)}, {"stream", hold_note},
                              {"multiprocessors", gpu.multiprocessors}, {"launches", launches}, {"torch_ops", ops}};
  summarize_candidate(candidate);
  annotate_bounds(candidate, gpu.multiprocessors);
  return candidate;
}

void run_for_ncu(const compile::HostProgram& host, const c10::Dict<std::string, at::Tensor>& params,
                 const std::vector<c10::IValue>& inputs) {
  torch::NoGradGuard no_grad;
  nvtxRangePushA(kNvtxRange);
  host.forward(inputs, params);
  const cudaError_t err = cudaDeviceSynchronize();
  nvtxRangePop();
  if (err != cudaSuccess) throw std::runtime_error(std::string("the call under Nsight Compute failed: ") + cudaGetErrorString(err));
}

#else

void flush_l2(const launch::DeviceInfo&) {}

nlohmann::json profile_candidate(const compile::HostProgram&, const c10::Dict<std::string, at::Tensor>&,
                                 const std::vector<c10::IValue>&, const launch::DeviceInfo&) {
  throw std::runtime_error("profiling a candidate needs a GPU build of kbench");
}

void run_for_ncu(const compile::HostProgram&, const c10::Dict<std::string, at::Tensor>&, const std::vector<c10::IValue>&) {
  throw std::runtime_error("profiling a candidate needs a GPU build of kbench");
}

#endif

}  // namespace kbench::profile
