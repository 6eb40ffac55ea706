#include "serve/eval_service.h"

#include <cmath>
#include <tuple>

#include "check/verdict.h"
#include "launch/cuda_driver.h"
#include "serve/api_error.h"

namespace kbench::serve {
namespace {

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

EvalService::EvalService(const ServiceOptions& options, const problems::Catalog& catalog)
    : catalog_(catalog),
      options_(options),
      gpus_(sandbox::gpus_to_use(options.gpus)),
      gpu0_(launch::query_device(gpus_.front())),
      gpu_info_(nlohmann::json::array()),
      sources_(problems::cache_dir() / "serve"),
      // A request waits behind at most this many of other problems' (a few seconds each).
      queue_(gpus_.size(), /*max_pass_overs=*/8) {
  const int visible = launch::device_count();
  for (const int g : gpus_) {
    if (visible > 0 && (g < 0 || g >= visible))
      throw std::runtime_error("no GPU " + std::to_string(g) + ": " + std::to_string(visible) + " visible (0 to " +
                               std::to_string(visible - 1) + ")");
    const auto gpu = launch::query_device(g);
    if (gpu.present) gpu_info_.push_back({{"device", g}, {"name", gpu.name}, {"arch", gpu.arch()}});
    else gpu_info_.push_back({{"device", g}, {"absent", gpu.why_absent}});
  }
  compiled_ = sandbox::compiled_makers(catalog_, gpus_);
  for (size_t r = 0; r < gpus_.size(); ++r)
    runners_.push_back(std::make_unique<sandbox::GpuRunner>(gpus_[r], options_.worker_exe,
                                                            compiled_.empty() ? nullptr : compiled_[r].get()));
  compile_ahead_ = std::make_unique<sandbox::CompileAhead>(options_.compile_threads);
  for (size_t r = 0; r < runners_.size(); ++r) threads_.emplace_back([this, r] { run_gpu(r); });
}

EvalService::~EvalService() { drain(); }

int EvalService::retry_after_s() const {
  return std::max(1, static_cast<int>(std::ceil(mean_evaluation_s_ * static_cast<double>(in_flight_) /
                                                static_cast<double>(runners_.size()))));
}

void EvalService::submit(const EvalCall& call, Done done) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (draining_) throw ApiError(503, "the server is shutting down: it finishes the evaluations it has and takes no more");
    if (in_flight_ >= options_.max_queue) {
      ++refused_;
      throw ApiError(429, "the queue is full: " + std::to_string(in_flight_) + " evaluations admitted (limit " +
                              std::to_string(options_.max_queue) + ")", retry_after_s());
    }
    ++in_flight_;
    ++compiling_;
  }
  auto job = std::make_shared<Pending>();
  try {
    job->request = call.settings.request;
    job->request.submission = sources_.put(call.source, call.modelnew).string();
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    --in_flight_, --compiling_;
    idle_.notify_all();
    throw;
  }
  job->budgets = call.settings.budgets;
  job->name = call.name;
  job->admitted = Clock::now();
  job->done = std::move(done);
  sandbox::PrepareOptions prepare{sandbox::compile_options_for(job->request, gpu0_), {}, options_.worker_exe,
                                  job->budgets.build_s};
  if (call.modelnew) prepare.problem_source = catalog_.source_path(catalog_.get(job->request.level, job->request.problem));
  const auto problem = sandbox::problem_queue_key(job->request.level, job->request.problem);
  // Queued for a GPU once NVRTC (a ModelNew: its extension build) is done: a GPU never waits for a
  // compile while other work is ready.
  compile_ahead_->submit(job->request.submission, prepare, [this, job, problem] {
    std::lock_guard<std::mutex> lock(mutex_);
    --compiling_;
    queued_.emplace(queue_.push(problem), std::move(*job));
  });
}

void EvalService::run_gpu(size_t runner) {
  auto& gpu = *runners_[runner];
  try {
    gpu.start_workers();  // on this thread: a worker lives as long as the thread that started it
  } catch (const std::exception&) {
    // Tried again, and reported, with the first request.
  }
  while (const auto id = queue_.next(runner)) {
    Pending job;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = queued_.find(*id);
      job = std::move(it->second);
      queued_.erase(it);
    }
    if (const auto upcoming = queue_.upcoming(runner))
      std::tie(job.request.next_level, job.request.next_problem) = sandbox::level_and_problem(*upcoming);
    const auto start = Clock::now();
    nlohmann::json record;
    try {
      record = gpu.evaluate(job.request, job.budgets);
    } catch (const std::exception& e) {
      record = {{"error", std::string("no worker process could be started: ") + e.what()}, {"verdict", check::to_string(check::Verdict::not_checked)}};
    }
    if (!job.name.empty()) {
      record["submission"]["stored"] = job.request.submission;
      record["submission"]["path"] = job.name;
    }
    record["serve"] = {{"gpu", gpus_[runner]}, {"queued_ms", ms_between(job.admitted, start)},
                       {"evaluation_ms", ms_between(start, Clock::now())}};
    finish(job, std::move(record));
  }
}

void EvalService::finish(Pending& job, nlohmann::json record) {
  const double seconds = record["serve"]["evaluation_ms"].get<double>() / 1000;
  {
    // Counted before the record leaves: a client that asks for health once it has its answer sees
    // the evaluation served (a drain that sees none in flight still joins this thread, which is
    // handing the record over).
    std::lock_guard<std::mutex> lock(mutex_);
    --in_flight_;
    ++served_;
    mean_evaluation_s_ += (seconds - mean_evaluation_s_) / static_cast<double>(std::min<size_t>(served_, 50));
  }
  idle_.notify_all();
  job.done(std::move(record));
}

void EvalService::drain() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    draining_ = true;
    idle_.wait(lock, [&] { return in_flight_ == 0; });
  }
  queue_.close();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

bool EvalService::draining() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return draining_;
}

nlohmann::json EvalService::health() const {
  nlohmann::json workers = nlohmann::json::array();
  size_t running = 0;
  for (const auto& runner : runners_) {
    const auto s = runner->status();
    running += s.busy;
    nlohmann::json loaded = nullptr;
    if (const auto* p = s.level ? catalog_.find(s.level, s.problem) : nullptr)
      loaded = {{"level", p->level}, {"problem", p->id}, {"name", p->name}};
    // The processes that wait, their Python started, for the next ModelNews (none before the first).
    nlohmann::json modelnew_spares = nlohmann::json::array();
    for (const auto& spare : s.modelnew_spares)
      modelnew_spares.push_back({{"pid", spare.pid}, {"python_started", spare.python_started}});
    workers.push_back({{"device", s.device}, {"pid", s.pid}, {"busy", s.busy}, {"loaded", loaded},
                       {"evaluations", s.evaluations}, {"workers_started", s.workers_started}, {"busy_s", s.busy_s},
                       {"modelnew_spares", modelnew_spares}});
  }
  std::lock_guard<std::mutex> lock(mutex_);
  return {{"status", draining_ ? "draining" : "ok"},
          {"version", KBENCH_VERSION},
          {"uptime_s", std::chrono::duration<double>(Clock::now() - started_).count()},
          {"gpus", gpu_info_},
          {"workers", workers},
          {"queue", {{"in_flight", in_flight_}, {"compiling", compiling_}, {"waiting", queue_.waiting()},
                     {"running", running}, {"limit", options_.max_queue}}},
          {"evaluations", {{"served", served_}, {"refused_queue_full", refused_}}}};
}

}  // namespace kbench::serve
