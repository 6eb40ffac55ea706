#include "sandbox/gpu_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

#include "check/correctness.h"
#include "check/verdict.h"
#include "compile/file_lock.h"
#include "compile/modelnew.h"
#include "launch/cuda_driver.h"
#include "log/elapsed.h"
#include "sandbox/gpu_lock.h"
#include "sandbox/ncu_pass.h"

namespace kbench::sandbox {

std::vector<int> gpus_to_use(const std::vector<int>& chosen) {
  if (!chosen.empty()) return chosen;
  std::vector<int> all;
  for (int g = 0; g < std::max(1, launch::device_count()); ++g) all.push_back(g);
  return all;
}

GpuRunner::GpuRunner(int device, std::string worker_exe, CompiledOnDemand* compiled)
    : device_(device), worker_exe_(std::move(worker_exe)), compiled_(compiled), worker_(std::make_unique<Worker>(worker_exe_)),
      spares_lock_(spares_lock_path(device, ::getpid())) {
  status_.device = device;
  const char* prepare = std::getenv("KBENCH_SPARES_PREPARE_GPU");
  prepare_spares_gpu_ = !prepare || std::string(prepare) != "0";
}

GpuRunner::~GpuRunner() {
  spares_off_gpu_.reset();
  std::error_code ignored;
  std::filesystem::remove(spares_lock_, ignored);
}

void GpuRunner::start_workers() {
  // A worker that ended since its last request is replaced by the spare; a spare that did not live
  // is not used (its exit would be reported as the candidate's crash).
  if (!worker_->alive()) {
    spares_off_gpu_.reset();  // what it held went with it
    if (spare_ && spare_->alive()) std::swap(worker_, spare_);
  }
  int started = 0;
  if (!worker_->alive()) worker_->start(), ++started;
  if (worker_exe_ != kForkWithoutExec) {
    if (!spare_) spare_ = std::make_unique<Worker>(worker_exe_);
    if (!spare_->alive()) spare_->start(), ++started;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  status_.workers_started += started;
  status_.pid = worker_->pid();
}

void GpuRunner::worker_takes_gpu_memory() {
  // Waits for the spares preparing their GPU beside the last ModelNew (sandbox/gpu_lock.h).
  if (!spares_off_gpu_) spares_off_gpu_ = std::make_unique<compile::FileLock>(spares_lock_);
}

void GpuRunner::worker_gives_back_gpu_memory(const Budgets& budgets) {
  if (!spares_off_gpu_) return;
  worker_->give_back_gpu_memory(budgets.compile_s);
  spares_off_gpu_.reset();
}

std::unique_ptr<Worker> GpuRunner::take_modelnew_spare(const EvalRequest& request, const Budgets& budgets,
                                                        nlohmann::json& pool_found) {
  if (worker_exe_ == kForkWithoutExec || !compile::is_modelnew_file(request.submission)) {
    if (!request.compile_only) worker_takes_gpu_memory();
    return nullptr;
  }
  worker_gives_back_gpu_memory(budgets);
  // As in start_workers: a spare that did not live is not used (its exit would be reported as the
  // candidate's crash); with none left, the request starts a fresh process.
  modelnew_spares_.erase(std::remove_if(modelnew_spares_.begin(), modelnew_spares_.end(),
                                        [](const std::unique_ptr<Worker>& w) { return !w->alive(); }),
                         modelnew_spares_.end());
  int started = 0;
  std::unique_ptr<Worker> taken;
  pool_found = {{"spares", modelnew_spares_.size()}, {"wanted", modelnew_spares_wanted_}};
  if (!modelnew_spares_.empty()) {
    taken = std::move(modelnew_spares_.front());
    modelnew_spares_.pop_front();
    if (!taken->ready_for_request())
      modelnew_spares_wanted_ = std::min(std::max(modelnew_spares_wanted_ + 1, spares_to_cover_start()), kMaxModelNewSpares);
  }
  while (modelnew_spares_.size() < modelnew_spares_wanted_) {
    modelnew_spares_.push_back(std::make_unique<Worker>(worker_exe_));
    modelnew_spares_.back()->start_python_ahead();
    ++started;
  }
  // The next ModelNew is likely of this problem (an RL loop's samples): where spares prepare their
  // GPU, each does it now, for it, beside this request, whose GPU memory the worker has given back.
  if (prepare_spares_gpu_ && !request.compile_only)
    for (auto& spare : modelnew_spares_) spare->prepare_gpu_ahead(request, spares_lock_);
  // The taken spare's own preparation answered first (its replacements start meanwhile): one that
  // failed is ended unused (its CUDA may be unusable), and a fresh process takes the request.
  if (taken && !taken->wait_for_gpu_prepared(budgets.compile_s)) taken.reset();
  if (taken) last_spare_start_ms_ = taken->start_to_ready_ms();
  if (!taken) {
    taken = std::make_unique<Worker>(worker_exe_);
    ++started;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  status_.workers_started += started;
  status_.modelnew_spares.clear();
  for (const auto& spare : modelnew_spares_) status_.modelnew_spares.push_back({spare->pid(), false});
  return taken;
}

size_t GpuRunner::spares_to_cover_start() const {
  if (last_spare_start_ms_ <= 0 || last_modelnew_evaluate_ms_ <= 0) return 1;
  return static_cast<size_t>(std::ceil(last_spare_start_ms_ / last_modelnew_evaluate_ms_));
}

std::shared_ptr<compile::FileLock> GpuRunner::hold_gpu_lock() {
  if (auto held = gpu_lock_.lock()) return held;
  auto taken = std::make_shared<compile::FileLock>(gpu_lock_path(device_));
  gpu_lock_ = taken;
  return taken;
}

void GpuRunner::end_in_background(std::unique_ptr<Worker> process, std::shared_ptr<compile::FileLock> gpu) {
  join_ending();
  ending_pid_ = process->pid();
  ending_killed_at_ = std::chrono::steady_clock::now();
  ending_took_ms_ = std::make_shared<std::atomic<double>>(-1);
  ending_ = std::async(std::launch::async, [process = std::move(process), gpu = std::move(gpu), took = ending_took_ms_,
                                            killed = ending_killed_at_]() mutable {
    process->end_keeping_pid();
    *took = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - killed).count();
    gpu.reset();
    return std::move(process);
  });
}

void GpuRunner::join_ending() {
  if (ending_.valid()) ending_.get();  // the process, reaped as it goes
  ending_pid_ = -1;
}

nlohmann::json GpuRunner::evaluate(EvalRequest request, const Budgets& budgets) {
  std::lock_guard<std::mutex> workers(workers_mutex_);
  const auto t0 = std::chrono::steady_clock::now();
  request.device = device_;
  const auto key = baseline_key(std::to_string(request.level) + "/" + std::to_string(request.problem), request.timing);
  if (const auto it = known_baselines_.find(key); it != known_baselines_.end()) request.known_baselines = it->second;
  // Found or made before the GPU's lock is taken: a figure made now is timed under that lock, and its
  // compile needs the GPU memory that the worker holds, which it gives back first.
  if (compiled_ && request.compiled == "on-demand" && request.time && !request.compile_only && request.compiled_figure.is_null()) {
    if (!compiled_->known(request.level, request.problem)) worker_gives_back_gpu_memory(budgets);
    request.compiled_figure = compiled_->figure(request.level, request.problem);
  }
  nlohmann::json record;
  std::unique_ptr<Worker> modelnew;  // this request's process, when it is a ModelNew: ended after it
  nlohmann::json pool_found;         // the ModelNew spares it found, for its record
  // The runner's own part of the request's wall, beside the worker's phases_ms.total.
  nlohmann::json runner_ms = {{"take_worker", 0}, {"evaluate", 0}};
  {
    std::unique_lock<std::mutex> lock(mutex_);
    status_.busy = true;
    lock.unlock();
    try {
      Worker* worker = nullptr;
      {
        const log::PhaseTimer timer(runner_ms["take_worker"]);
        start_workers();
        modelnew = take_modelnew_spare(request, budgets, pool_found);
        worker = modelnew ? modelnew.get() : worker_.get();
      }
      const auto gpu = hold_gpu_lock();
      if (modelnew) request.ending_process = ending_pid_;
      else join_ending();
      const bool after_an_end = modelnew && ending_pid_ > 0;
      record = log::timed(runner_ms["evaluate"], [&] { return worker->evaluate(request, budgets); });
      if (after_an_end)  // what the worker's ending_process_wait waited for
        runner_ms["previous_end"] = {
            {"killed_before_request", std::chrono::duration<double, std::milli>(t0 - ending_killed_at_).count()},
            {"took", ending_took_ms_->load()}};
      if (const auto phases = record.find("phases_ms"); phases != record.end() && phases->is_object()) (*phases)["runner"] = runner_ms;
      if (modelnew) {
        last_modelnew_evaluate_ms_ = runner_ms["evaluate"].get<double>();
        if (record.contains("worker")) record["worker"]["pool_at_take"] = pool_found;
      }
      if (request.ncu) {
        worker->finish(10);  // the worker under ncu needs the GPU memory this one holds
        add_ncu_figures(record, request, budgets, worker_exe_);
      }
      if (modelnew) end_in_background(std::move(modelnew), gpu);
    } catch (...) {  // no process could be started (fork, pipes): the caller says so
      lock.lock();
      status_.busy = false;
      throw;
    }
  }

  // Only figures measured where no submission's code had been loaded (`clean`: see
  // sandbox/baseline_timing.h) reach later workers; a state_changed record keeps no figure at all.
  if (const auto timing = record.find("timing"); timing != record.end())
    for (const auto* kind : {"eager", "compiled"})
      if (const auto figure = timing->find(kind); figure != timing->end() && figure->is_object() && figure->value("clean", false))
        known_baselines_[key][kind] = *figure;
  if (record.contains("error")) {  // the request failed (e.g. missing archive): keep it visible
    record["verdict"] = check::to_string(check::Verdict::not_checked);
    // The line that says what failed: a TorchScript traceback's last (an out-of-memory error of the
    // reference, say), else the first; "error" keeps the whole of it.
    record["message"] = "harness error: " + check::first_line_of_interest(record["error"].get<std::string>());
    record["problem"] = {{"level", request.level}, {"id", request.problem}};
  }
  const bool loaded = !compile::is_modelnew_file(request.submission) && worker_->alive() && !request.compile_only &&
                     !record.contains("error");
  std::lock_guard<std::mutex> lock(mutex_);
  status_.busy = false;
  status_.busy_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++status_.evaluations;
  status_.pid = worker_->alive() ? worker_->pid() : -1;
  if (loaded) status_.level = request.level, status_.problem = request.problem;
  else if (status_.pid < 0) status_.level = status_.problem = 0;
  return record;
}

GpuRunner::Status GpuRunner::status() const {
  std::unique_lock<std::mutex> workers(workers_mutex_, std::try_to_lock);
  std::lock_guard<std::mutex> lock(mutex_);
  auto status = status_;
  if (workers.owns_lock()) {  // no evaluation under way: the ModelNew spares' state now
    status.modelnew_spares.clear();
    for (const auto& spare : modelnew_spares_)
      if (spare->alive()) status.modelnew_spares.push_back({spare->pid(), spare->python_ready()});
  }
  return status;
}

}  // namespace kbench::sandbox
