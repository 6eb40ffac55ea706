// One GPU's evaluations, for batch and serve alike: a worker process that keeps the problem it has
// loaded (reference, kept reference outputs, baselines) from one request to the next; a spare
// process, started ahead with libtorch loaded, that replaces it after a verdict that ends a worker
// (crash, timeout, runtime error); a ModelNew spare, whose process has started kbench's Python
// before any submission is known; and the baseline figures measured on this GPU, handed to every
// later worker so that a problem's baselines are timed once per GPU.
//
// A ModelNew is evaluated in a ModelNew spare, a process of its own that is retired after it (its
// Python state and native code stay there), never in the worker: the worker keeps its problem, and a
// `.cu` runs only in processes where Python never started. A spare starts its Python (and takes the
// dispatcher's snapshot) ahead, touching no GPU (sandbox/evaluation.h: start_python_ahead); a new one
// starts as soon as one is taken. That start takes longer than a warm evaluation, so a request that
// finds its spare not ready grows the pool, by one or at once to enough spares that the evaluations
// ahead of a new one cover its start (the last taken spare's start to ready over the last ModelNew's
// evaluation), up to kMaxModelNewSpares: back-to-back ModelNews then each find one ready. The first
// ModelNew makes the first spare and runs in a fresh process, as does one whose spares did not live.
// While a ModelNew runs, the worker has given back the GPU memory it holds, which the ModelNew's
// checks need.
//
// Unless KBENCH_SPARES_PREPARE_GPU=0, each spare then prepares its GPU for a ModelNew like the one
// running (prepare_gpu_ahead: its CUDA context, the reference, the rest of the snapshot, Triton's
// first GPU use for a Triton file), each part under the GPU's quiet lock (sandbox/gpu_lock.h), which
// timed calls hold, so that none of it runs beside them. A request takes a spare once that is done,
// and one that finds its spare still preparing adds one to the pool as well; a spare prepares only
// while the worker holds no GPU memory, and the worker takes it again only once no spare prepares
// (the runner's spares lock, sandbox/gpu_lock.h).
//
// A ModelNew's process ends after its record is returned, on a thread of the runner's, holding the
// GPU's lock until the driver has released its context and memory: the answer goes out meanwhile,
// and the next ModelNew's process starts CUDA beside that end and waits for it before it takes GPU
// memory or times anything (EvalRequest::ending_process). A `.cu` request waits for it first.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/file_lock.h"
#include "sandbox/compiled_on_demand.h"
#include "sandbox/worker.h"

namespace kbench::sandbox {

// The GPUs to run on: `chosen`, or every visible one; device 0 where there is none (its worker then
// gives the verdicts that need no GPU).
std::vector<int> gpus_to_use(const std::vector<int>& chosen);

class GpuRunner {
 public:
  // `worker_exe` as for Worker; kForkWithoutExec gets no spares (only a parent without threads may
  // fork it, and such a parent evaluates once): a ModelNew then runs in the worker, which it retires.
  // `compiled`: where --compiled on-demand finds or makes the compiled baseline of this GPU's model
  // (none: the worker's own sources only).
  GpuRunner(int device, std::string worker_exe, CompiledOnDemand* compiled = nullptr);
  ~GpuRunner();
  GpuRunner(const GpuRunner&) = delete;
  GpuRunner& operator=(const GpuRunner&) = delete;

  // Evaluates `request` on this GPU (its device is set here), holding the GPU's lock
  // (sandbox/gpu_lock.h) while the worker runs it, and returns the record. A request the
  // worker could not evaluate (a problem whose archive is missing) gets verdict `not_checked` with
  // a "harness error" message, and keeps the reason in "error". Not thread-safe: one caller.
  nlohmann::json evaluate(EvalRequest request, const Budgets& budgets);

  // Starts the worker and its spare now rather than at the first request (evaluate() calls it too).
  // The ModelNew spare waits for the first ModelNew.
  void start_workers();

  struct Status {
    int device = 0;
    long pid = -1;              // the worker's process, -1 before the first request
    int level = 0, problem = 0; // what the worker has loaded (0: nothing)
    int evaluations = 0;        // by this runner
    int workers_started = 0;    // by this runner, spares included
    bool busy = false;
    double busy_s = 0;          // time inside evaluations
    struct Spare {
      long pid = -1;
      bool python_started = false;  // the next ModelNew finds it warm
    };
    std::vector<Spare> modelnew_spares;  // oldest first; none before the first ModelNew
  };
  Status status() const;  // thread-safe

 private:
  // For a ModelNew: the worker that evaluates it, the oldest living ModelNew spare (see the header
  // comment), with the next spare starting in its place. Null for a `.cu`, and without spares, which
  // go to worker_. `pool_found`: the living spares and the pool's size wanted, before the take.
  std::unique_ptr<Worker> take_modelnew_spare(const EvalRequest& request, const Budgets& budgets,
                                              nlohmann::json& pool_found);
  // Before a `.cu` request: the worker will hold the GPU's free memory, so no spare may prepare its
  // GPU meanwhile (spares_off_gpu_). Before a ModelNew: the worker gives that memory back.
  void worker_takes_gpu_memory();
  void worker_gives_back_gpu_memory(const Budgets& budgets);
  // Enough for back-to-back ModelNews of about 0.9 s on the H200, where a spare took 2.8-4.2 s to be
  // ready beside them (its Python, Triton's import included, then its GPU's parts; 2026-12-04). Each
  // prepared spare holds a CUDA context of its own.
  static constexpr size_t kMaxModelNewSpares = 5;
  // The pool that keeps a spare ready for each back-to-back ModelNew: a new spare is taken after the
  // others, so their evaluations must cover its start.
  size_t spares_to_cover_start() const;
  // The GPU's lock (sandbox/gpu_lock.h), shared by an evaluation and the end of its ModelNew process:
  // the one still held when the next evaluation starts, else taken anew.
  std::shared_ptr<compile::FileLock> hold_gpu_lock();
  // Ends a ModelNew's process on a thread of its own (see the header comment).
  void end_in_background(std::unique_ptr<Worker> process, std::shared_ptr<compile::FileLock> gpu);
  // Waits for that end, and reaps the process.
  void join_ending();

  int device_;
  std::string worker_exe_;
  CompiledOnDemand* compiled_;
  std::unique_ptr<Worker> worker_, spare_;
  std::deque<std::unique_ptr<Worker>> modelnew_spares_;  // oldest first
  size_t modelnew_spares_wanted_ = 1;
  // The last taken spare's start to ready, and the last ModelNew's evaluation (ms; 0: none yet).
  double last_spare_start_ms_ = 0, last_modelnew_evaluate_ms_ = 0;
  bool prepare_spares_gpu_ = true;  // KBENCH_SPARES_PREPARE_GPU=0 turns it off
  // Held (spares_lock_, exclusively) while the worker has run on the GPU since it last gave its
  // memory back.
  std::filesystem::path spares_lock_;
  std::unique_ptr<compile::FileLock> spares_off_gpu_;
  std::weak_ptr<compile::FileLock> gpu_lock_;
  std::future<std::unique_ptr<Worker>> ending_;  // the last ModelNew's process, once it has ended
  pid_t ending_pid_ = -1;
  // When it was killed, and how long it took to end (ms; negative until it has): for the next
  // ModelNew's record, whose worker may wait for that end.
  std::chrono::steady_clock::time_point ending_killed_at_;
  std::shared_ptr<std::atomic<double>> ending_took_ms_;
  // Held by evaluate(); status() reads the ModelNew spare's state when no evaluation holds it.
  mutable std::mutex workers_mutex_;
  // Baseline figures by baseline_key of "L/P": {"eager": ..., "compiled": ...}.
  std::map<std::string, nlohmann::json> known_baselines_;
  mutable std::mutex mutex_;  // guards status_
  Status status_;
};

}  // namespace kbench::sandbox
