// The evaluation side of kbench serve, without HTTP: admits evaluations up to a limit, keeps each
// source by content, runs NVRTC as soon as one arrives (on a pool of threads, ahead of the GPUs),
// then queues it for a GPU with problem affinity (sandbox/job_queue.h) and evaluates it in that
// GPU's worker (sandbox/gpu_runner.h), which keeps its problem warm from one request to the next.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/cuda_driver.h"
#include "problems/catalog.h"
#include "sandbox/compile_ahead.h"
#include "sandbox/gpu_runner.h"
#include "sandbox/job_queue.h"
#include "serve/eval_call.h"
#include "serve/source_store.h"

namespace kbench::serve {

struct ServiceOptions {
  std::vector<int> gpus;    // empty: every visible GPU (one runner without a GPU: compile-side verdicts)
  size_t max_queue = 64;    // evaluations admitted at once, waiting or running; more are refused (429)
  int compile_threads = 0;  // NVRTC threads (0: one per core)
  std::string worker_exe;   // run as `worker_exe __worker`
};

class EvalService {
 public:
  EvalService(const ServiceOptions& options, const problems::Catalog& catalog);
  ~EvalService();  // drains first
  EvalService(const EvalService&) = delete;
  EvalService& operator=(const EvalService&) = delete;

  // Admits one evaluation; `done` gets its record (with a "serve" section: GPU, time queued and
  // evaluating), on a GPU's thread. Throws ApiError 429 (the queue is full; with a retry estimate)
  // or 503 (draining), or std::runtime_error when the source cannot be stored.
  using Done = std::function<void(nlohmann::json record)>;
  void submit(const EvalCall& call, Done done);

  // Refuses new evaluations from now on; returns once every admitted one has its record.
  void drain();
  bool draining() const;

  // Workers (what each has loaded), queue and counters, for GET /v1/health.
  nlohmann::json health() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Pending {
    sandbox::EvalRequest request;
    sandbox::Budgets budgets;
    std::string name;
    Done done;
    Clock::time_point admitted;
  };
  void run_gpu(size_t runner);
  void finish(Pending& job, nlohmann::json record);
  int retry_after_s() const;  // under mutex_

  const problems::Catalog& catalog_;
  ServiceOptions options_;
  std::vector<int> gpus_;
  launch::DeviceInfo gpu0_;  // whose architecture NVRTC compiles for
  nlohmann::json gpu_info_;
  Clock::time_point started_ = Clock::now();
  SourceStore sources_;
  sandbox::JobQueue queue_;
  std::vector<std::shared_ptr<sandbox::CompiledOnDemand>> compiled_;  // per GPU: a request's --compiled on-demand
  std::vector<std::unique_ptr<sandbox::GpuRunner>> runners_;

  mutable std::mutex mutex_;
  std::condition_variable idle_;
  std::map<size_t, Pending> queued_;   // by job id, once compiled
  size_t in_flight_ = 0, compiling_ = 0, served_ = 0, refused_ = 0;
  double mean_evaluation_s_ = 1;       // running mean, for Retry-After
  bool draining_ = false;

  std::unique_ptr<sandbox::CompileAhead> compile_ahead_;  // after the queue it pushes into
  std::vector<std::thread> threads_;
};

}  // namespace kbench::serve
