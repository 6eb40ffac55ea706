// Isolation: evaluations run in a child process (`kbench __worker`). Whatever the candidate does
// there — segfault, abort, sticky CUDA error, endless kernel, a flood of output — the parent records
// a verdict and carries on with a fresh worker and a fresh CUDA context. A worker whose last
// evaluation ended cleanly is reused, keeping its loaded reference and eager timings.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox/evaluation.h"

namespace kbench::sandbox {

struct HostMemoryBudget;  // sandbox/host_memory.h

struct Budgets {
  double compile_s = 60;       // split + NVRTC + host program (a ModelNew: its import)
  double build_s = 600;        // each build of a ModelNew's extension (nvcc with PyTorch's headers)
  double correctness_s = 180;  // reference load, inputs, 5 candidate trials
  double timing_s = 300;       // candidate and eager timing
  // Resident host memory of the worker. A host program that hoards CPU tensors is stopped here,
  // before the machine's OOM killer picks a process (perhaps the parent) for it; sooner where the
  // request's problem is known: at what the worker held when the request came plus what the
  // request may add, the headroom below among it (sandbox/host_memory.h).
  double host_memory_gib = 48;
  double host_memory_headroom_gib = 10;
};

// The worker "executable" that means: this process, forked without exec. The child then starts
// with libtorch already loaded (about half of a worker's start-up). Only for a parent that has
// started no threads and not touched CUDA, which a forked child could not use: `kbench eval`.
inline const std::string kForkWithoutExec;

// One worker process. Not copyable: it owns the child and its pipes.
class Worker {
 public:
  // `exe` is run as `exe __worker`, or see kForkWithoutExec. A `launcher` (a profiler and its
  // options) is run in its place with the worker's command line appended (a real `exe` needed).
  explicit Worker(std::string exe, std::vector<std::string> launcher = {});
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Runs `request` in the worker (starting one if needed) and returns its record; never throws for
  // anything the candidate does. After a verdict that may have left the process damaged (crash,
  // timeout, runtime error), the worker is gone. After any ModelNew request (whose Python state and
  // native extension stay in the process) its process is left for the caller to end (stop(),
  // end_keeping_pid(), abandon() or finish()). Either way the next call starts a fresh one. A worker killed from
  // outside (killed_from_outside) is not the candidate's verdict yet: the request is evaluated
  // once more on a fresh worker, and the record says so in "retried".
  nlohmann::json evaluate(const EvalRequest& request, const Budgets& budgets);

  int evaluations_in_this_process() const { return served_; }

  // Starts the process now, if none is running: a spare then waits, libtorch loaded, for its first
  // request. evaluate() starts one itself when there is none. The process is killed when the
  // thread that started it ends (it must not outlive kbench): start it on a thread that outlives it.
  void start();

  // Starts the process, if none runs, and has it start kbench's Python now, before any submission is
  // known (a ModelNew spare: sandbox/gpu_runner.h); returns without waiting. The next evaluate()
  // takes the answer first, and its record says in worker.python_prestart_wait_ms how long it
  // waited for it.
  void start_python_ahead();

  // Whether the process has answered that its Python started (read without waiting).
  bool python_ready();

  // Whether it has answered all it was asked ahead of a request: its Python's start and, where it
  // was asked, its GPU's preparation (read without waiting).
  bool ready_for_request();

  // Has the process prepare its GPU for a ModelNew like `expected` once its Python has started
  // (sandbox/evaluation.h: prepare_gpu_ahead), holding `spares_lock` shared meanwhile, unless it was
  // asked already; returns without waiting.
  void prepare_gpu_ahead(const EvalRequest& expected, const std::filesystem::path& spares_lock);

  // Waits up to `timeout_s` for that answer (at once where none was asked). False where the
  // preparation failed or did not answer in time: the process must then not evaluate anything. The
  // next record says how long this waited: for the Python start in worker.python_prestart_wait_ms,
  // for the preparation after it in worker.gpu_prepare_wait_ms.
  bool wait_for_gpu_prepared(double timeout_s);

  // For a spare that answered all it was asked ahead: milliseconds from its start to that answer
  // (its GPU prepared, else its Python started); 0 where it has not answered yet.
  double start_to_ready_ms() const;

  // Has the worker give back the GPU memory it holds (sandbox/evaluation.h: give_back_gpu_memory)
  // for another process on its GPU. One that does not answer within `timeout_s`, or fails to, is
  // ended, which gives it back too.
  void give_back_gpu_memory(double timeout_s);

  // Whether the process runs (reaping it if it has ended on its own, e.g. a spare whose start failed).
  bool alive();
  pid_t pid() const { return pid_; }

  // Kills the worker without waiting for it to end. The driver then releases its CUDA context and
  // the memory it held (about 0.2 s on an H100) while the caller reports. For a caller about to
  // exit: the child is reaped by the process that inherits it.
  void abandon();

  // Kills the worker and returns once it has ended (the driver has released its CUDA context and
  // memory then), without reaping it: its pid stays taken until stop() or the destructor, so that
  // another process waits for it by pid (EvalRequest::ending_process) and never for a newcomer's.
  void end_keeping_pid();

  // Ends the worker as a finished one ends: its input closed, it exits by itself (a launcher such
  // as ncu then writes its report); killed after `timeout_s`. Returns whether it exited in time.
  bool finish(double timeout_s);

  const std::string& output() const { return kept_output_; }  // the tail of its stdout and stderr

 private:
  nlohmann::json evaluate_once(const EvalRequest& request, const Budgets& budgets);
  // What the worker wrote within `wait_ms`: its output is kept, its messages (one JSON a line)
  // returned, a Python start's answer noted; `gone` once it closed its end.
  std::vector<nlohmann::json> read_messages(int wait_ms, bool& gone);
  void keep_output(const char* data, size_t size);
  void stop();
  struct Failure {
    bool timed_out = false;
    double resident_gib = 0;  // > 0: killed for passing the request's host memory budget
    std::string foreign_line;  // a line on the result pipe without the request's token: the submission's
  };
  nlohmann::json finish_failed(const EvalRequest& req, int status, const Failure& failure, const std::string& stage,
                               const Budgets& budgets, const HostMemoryBudget& host_memory);

  std::string exe_;
  std::vector<std::string> launcher_;
  pid_t pid_ = -1;
  int to_worker_ = -1, from_worker_ = -1, output_ = -1;
  std::string pending_, kept_output_;
  int served_ = 0;
  bool spent_ = false;  // evaluated a ModelNew: never given another request
  // start_python_ahead asked this process, and when it answered (python_answered_).
  bool python_asked_ = false, python_answered_ = false;
  // When the process started, and when it was asked to prepare its GPU and answered: how far ahead
  // of its request a spare was ready (the record's worker.spare_timeline_ms).
  std::chrono::steady_clock::time_point started_at_, python_answered_at_, gpu_asked_at_, gpu_answered_at_;
  // prepare_gpu_ahead asked this process, it answered, and whether it failed; the wait for it,
  // parted into the Python start's and the preparation's.
  bool gpu_asked_ = false, gpu_answered_ = false, gpu_failed_ = false;
  double python_wait_ms_ = 0, gpu_prepare_wait_ms_ = 0;
};

// The rule for a worker's death that may not be the candidate's doing: killed by SIGKILL or SIGTERM,
// which kbench did not send (its own kills are a timeout or the host memory budget), as the OOM
// killer and operators do. A fault (SIGSEGV, SIGABRT, SIGBUS...) is the process's own. A candidate
// that kills its own worker dies again on the retry: only a second death is its crash.
bool killed_from_outside(const nlohmann::json& record);

// One request in a fresh worker, abandoned once it answered: what `kbench eval` does.
nlohmann::json evaluate_isolated(const EvalRequest& request, const Budgets& budgets, const std::string& worker_exe);

// The worker side: reads requests (one JSON per line) from stdin until EOF; reports stages and
// records on `fd`.
int run_worker(int fd);

}  // namespace kbench::sandbox
