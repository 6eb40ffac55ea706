#include "sandbox/worker.h"

#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <poll.h>
#include <random>
#include <sstream>
#include <time.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check/verdict.h"
#include "compile/file_lock.h"
#include "compile/modelnew.h"
#include "log/log.h"
#include "log/number_text.h"
#include "report/records.h"
#include "sandbox/gpu_lock.h"
#include "sandbox/host_memory.h"
#include "sandbox/ncu_pass.h"

namespace kbench::sandbox {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kKeptOutput = 16 * 1024;  // the tail of the worker's stdout/stderr kept for the record
constexpr int kResultFd = 3;

bool write_line(int fd, const nlohmann::json& j) {
  const std::string line = j.dump() + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// 128 random bits, fresh for each request (Worker::evaluate_once).
std::string reply_token() {
  std::random_device device;
  char text[33];
  std::snprintf(text, sizeof text, "%08x%08x%08x%08x", device(), device(), device(), device());
  return text;
}

double budget_for(const std::string& stage, const Budgets& b) {
  if (stage == "correctness") return b.correctness_s;
  if (stage == "timing" || stage == "profile") return b.timing_s;
  if (stage == "build") return b.build_s;
  return b.compile_s;
}

// Resident memory of a process in GiB (0 when it cannot be read).
double resident_gib(pid_t pid) {
  std::ifstream statm("/proc/" + std::to_string(pid) + "/statm");
  long long pages_total = 0, pages_resident = 0;
  if (!(statm >> pages_total >> pages_resident)) return 0;
  return static_cast<double>(pages_resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) / (1024.0 * 1024 * 1024);
}

// Evaluations after which the worker process is not trusted with another candidate: verdicts that
// may have damaged it (state_changed: it holds what the submission changed), and any ModelNew
// request, which leaves its Python state, its extension's native code (and whatever threads that
// started) behind in the process, also where the request then failed (a missing archive).
bool leaves_worker_damaged(const EvalRequest& request, const nlohmann::json& record) {
  using check::Verdict;
  const auto v = report::verdict_of(record);
  return v == Verdict::runtime_error || v == Verdict::crash || v == Verdict::timeout || v == Verdict::state_changed ||
         record.value("context_poisoned", false) || compile::is_modelnew_file(request.submission);
}

// Milliseconds since this process started (exec, then libtorch's libraries loaded before main), to
// the kernel's clock tick of 10 ms; -1 where /proc does not say.
double ms_since_process_start() {
  std::ifstream stat("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto comm_end = text.rfind(')');  // the command name may hold spaces and parentheses
  if (comm_end == std::string::npos) return -1;
  std::istringstream fields(text.substr(comm_end + 2));
  std::string field;
  for (int i = 3; i < 22 && fields >> field; ++i) {}  // field 22 is the start time, in ticks after boot
  unsigned long long start_ticks = 0;
  timespec now{};
  if (!(fields >> start_ticks) || ::clock_gettime(CLOCK_BOOTTIME, &now) != 0) return -1;
  const double ticks_per_s = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return (static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9 - static_cast<double>(start_ticks) / ticks_per_s) * 1e3;
}

}  // namespace

Worker::Worker(std::string exe, std::vector<std::string> launcher) : exe_(std::move(exe)), launcher_(std::move(launcher)) {
  if (!launcher_.empty() && exe_ == kForkWithoutExec)
    throw std::logic_error("a worker started by a launcher must be exec'd: give it an executable");
  ::signal(SIGPIPE, SIG_IGN);
}
Worker::~Worker() { stop(); }

void Worker::start() {
  if (spent_) stop();
  if (pid_ > 0) return;
  int input[2], results[2], output[2];
  if (::pipe2(input, O_CLOEXEC) || ::pipe2(results, O_CLOEXEC) || ::pipe2(output, O_CLOEXEC))
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  std::cout.flush();  // a forked child must not repeat the parent's buffered output
  std::cerr.flush();
  const pid_t parent = ::getpid();
  started_at_ = Clock::now();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    // Child: stdin = requests, fd 3 = stages and records, stdout+stderr = captured output. Its own
    // process group, so that the parent can kill everything it starts.
    ::setpgid(0, 0);
    // A worker never outlives kbench: one left behind by a killed parent would hold its GPU and run
    // its candidate with no budget.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) _exit(1);
    // A parent that takes its signals on a thread of its own (kbench serve) blocks them in all the
    // others; exec keeps a blocked mask, and the worker must die of SIGTERM like any process.
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(input[0], STDIN_FILENO);
    ::dup2(results[1], kResultFd);
    ::dup2(output[1], STDOUT_FILENO);
    ::dup2(output[1], STDERR_FILENO);
    if (exe_ == kForkWithoutExec) {
      // What exec would have closed (O_CLOEXEC): the parent's ends, and the originals of the dups.
      for (int fd : {input[0], input[1], results[0], results[1], output[0], output[1]})
        if (fd > kResultFd) ::close(fd);
      _exit(run_worker(kResultFd));
    }
    // Descriptors a threaded parent opened without O_CLOEXEC (a server's sockets: a client's
    // connection would stay open while a worker holds it) must not reach the worker.
    ::close_range(kResultFd + 1, ~0U, 0);
    std::vector<std::string> args = launcher_;
    args.push_back(exe_);
    args.push_back("__worker");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  // The child makes itself a process group too, but perhaps not before stop() kills that group:
  // both set it, as shells do.
  ::setpgid(pid_, pid_);
  ::close(input[0]);
  ::close(results[1]);
  ::close(output[1]);
  to_worker_ = input[1];
  from_worker_ = results[0];
  output_ = output[0];
  pending_.clear();
  kept_output_.clear();
  served_ = 0;
  python_asked_ = python_answered_ = false;
  gpu_asked_ = gpu_answered_ = gpu_failed_ = false;
  python_wait_ms_ = gpu_prepare_wait_ms_ = 0;
}

void Worker::start_python_ahead() {
  start();
  write_line(to_worker_, {{"start_python", true}});
  python_asked_ = true;
}

bool Worker::python_ready() {
  if (python_asked_ && !python_answered_ && pid_ > 0) {
    bool gone = false;
    read_messages(0, gone);
  }
  return python_answered_;
}

bool Worker::ready_for_request() {
  if (gpu_asked_ && !gpu_answered_ && pid_ > 0) {
    bool gone = false;
    read_messages(0, gone);
  }
  return python_ready() && (!gpu_asked_ || gpu_answered_);
}

double Worker::start_to_ready_ms() const {
  const bool answered = python_answered_ && (!gpu_asked_ || gpu_answered_);
  if (!python_asked_ || !answered) return 0;
  return std::chrono::duration<double, std::milli>((gpu_asked_ ? gpu_answered_at_ : python_answered_at_) - started_at_).count();
}

void Worker::prepare_gpu_ahead(const EvalRequest& expected, const std::filesystem::path& spares_lock) {
  if (gpu_asked_) return;
  start();
  write_line(to_worker_, {{"prepare_gpu_ahead", expected.to_json()}, {"spares_lock", spares_lock.string()}});
  gpu_asked_ = true;
  gpu_asked_at_ = Clock::now();
}

bool Worker::wait_for_gpu_prepared(double timeout_s) {
  if (!gpu_asked_) return true;
  const auto start = Clock::now();
  const bool python_pending = python_asked_ && !python_answered_;
  bool gone = false;
  while (!gpu_answered_ && !gone && std::chrono::duration<double>(Clock::now() - start).count() < timeout_s)
    read_messages(50, gone);
  // The Python start's part of the wait is the record's python_prestart_wait_ms, as where the request waits for it.
  const auto python_done = python_pending && python_answered_ ? std::max(python_answered_at_, start) : start;
  python_wait_ms_ = std::chrono::duration<double, std::milli>(python_done - start).count();
  gpu_prepare_wait_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - python_done).count();
  return gpu_answered_ && !gpu_failed_ && !gone;
}

void Worker::give_back_gpu_memory(double timeout_s) {
  if (pid_ < 0) return;
  write_line(to_worker_, {{"give_back_gpu_memory", true}});
  const auto start = Clock::now();
  bool gone = false;
  while (!gone && std::chrono::duration<double>(Clock::now() - start).count() < timeout_s)
    for (const auto& msg : read_messages(50, gone))
      if (const auto answer = msg.find("gave_back_gpu_memory"); answer != msg.end()) {
        if (!answer->contains("error")) return;
        gone = true;
      }
  log::warn("worker " + std::to_string(pid_) + " did not give its GPU memory back: ended");
  stop();
}

void Worker::keep_output(const char* data, size_t size) {
  kept_output_.append(data, size);
  if (kept_output_.size() > 2 * kKeptOutput) kept_output_.erase(0, kept_output_.size() - kKeptOutput);
}

std::vector<nlohmann::json> Worker::read_messages(int wait_ms, bool& gone) {
  pollfd fds[2] = {{from_worker_, POLLIN, 0}, {output_, POLLIN, 0}};
  ::poll(fds, 2, wait_ms);
  char buf[65536];
  if (fds[1].revents) {  // drain output first: a flood must never block the worker
    const ssize_t n = ::read(output_, buf, sizeof buf);
    if (n > 0) keep_output(buf, static_cast<size_t>(n));
  }
  std::vector<nlohmann::json> messages;
  if (!fds[0].revents) return messages;
  const ssize_t n = ::read(from_worker_, buf, sizeof buf);
  if (n <= 0) {
    gone = true;
    return messages;
  }
  pending_.append(buf, static_cast<size_t>(n));
  for (size_t nl; (nl = pending_.find('\n')) != std::string::npos;) {
    const auto line = pending_.substr(0, nl);
    pending_.erase(0, nl + 1);
    auto msg = nlohmann::json::parse(line, nullptr, false);
    if (msg.is_discarded()) msg = {{"unreadable", line}};
    // When the process answered, by its own clock (the same monotonic clock as ours), not when we read it.
    const auto answered_at = msg.contains("at_ns") && msg["at_ns"].is_number_integer()
                                 ? Clock::time_point(std::chrono::nanoseconds(msg["at_ns"].get<int64_t>()))
                                 : Clock::now();
    if (msg.contains("python_started")) python_answered_ = true, python_answered_at_ = answered_at;
    if (const auto gpu = msg.find("gpu_prepared"); gpu != msg.end())
      gpu_answered_ = true, gpu_answered_at_ = answered_at, gpu_failed_ = gpu->is_object() && gpu->contains("error");
    messages.push_back(std::move(msg));
  }
  return messages;
}

void Worker::stop() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  for (int* fd : {&to_worker_, &from_worker_, &output_})
    if (*fd >= 0) ::close(*fd), *fd = -1;
  pid_ = -1;
  spent_ = false;
}

void Worker::end_keeping_pid() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
  }
}

bool Worker::alive() {
  if (pid_ <= 0) return false;
  if (::waitpid(pid_, nullptr, WNOHANG) == 0) return true;
  pid_ = -1;  // reaped
  stop();
  return false;
}

void Worker::abandon() {
  if (pid_ > 0) ::kill(-pid_, SIGKILL);
  pid_ = -1;
  stop();  // closes the pipes; with no child left to wait for
}

bool Worker::finish(double timeout_s) {
  if (pid_ < 0) return true;
  ::close(to_worker_);
  to_worker_ = -1;
  const auto start = Clock::now();
  bool exited = false;
  while (std::chrono::duration<double>(Clock::now() - start).count() < timeout_s) {
    pollfd fd = {output_, POLLIN, 0};  // keep draining: a full pipe would block it
    if (::poll(&fd, 1, 50) > 0 && (fd.revents & POLLIN)) {
      char buf[65536];
      const ssize_t n = ::read(output_, buf, sizeof buf);
      if (n > 0) keep_output(buf, static_cast<size_t>(n));
    }
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      exited = true;
      break;
    }
  }
  if (exited) pid_ = -1;
  stop();  // kills what is left of its process group
  return exited;
}

nlohmann::json Worker::finish_failed(const EvalRequest& req, int status, const Failure& failure, const std::string& stage,
                                     const Budgets& budgets, const HostMemoryBudget& host_memory) {
  std::string message;
  check::Verdict verdict = check::Verdict::crash;
  if (!failure.foreign_line.empty()) {
    verdict = check::Verdict::host_error;
    message = "[kbench:refused] a line on kbench's result channel that kbench's worker did not write (the "
              "submission wrote to the pipe its verdict goes through), in stage '" + stage + "': " + failure.foreign_line;
  } else if (failure.resident_gib > 0) {
    verdict = check::Verdict::runtime_error;
    const auto gib = [](double v) { return log::fixed(v, 1); };
    message = "out of host memory: the worker held " + gib(failure.resident_gib) + " GiB, over its budget of " +
              gib(host_memory.budget_gib) + " GiB";
    if (host_memory.allowance_gib > 0 && host_memory.budget_gib < budgets.host_memory_gib)
      message += " for this request (" + gib(host_memory.start_gib) + " held when it came, " + gib(host_memory.allowance_gib) +
                 " more allowed for the problem; --host-memory-headroom)";
    message += ", in stage '" + stage + "'; killed";
  } else if (failure.timed_out) {
    verdict = check::Verdict::timeout;
    message = "killed after " + std::to_string(static_cast<int>(budget_for(stage, budgets))) + " s in stage '" + stage + "'";
  } else if (WIFSIGNALED(status)) {
    message = std::string("worker killed by signal ") + ::strsignal(WTERMSIG(status)) + " in stage '" + stage + "'";
  } else {
    message = "worker exited with code " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
              " in stage '" + stage + "' without a result";
  }
  const auto format = compile::is_modelnew_file(req.submission) ? "modelnew" : "kbench";
  nlohmann::json record = {{"problem", {{"level", req.level}, {"id", req.problem}}},
                           {"submission", {{"path", req.submission}, {"format", format}}},
                           {"verdict", check::to_string(verdict)}, {"message", message}, {"stage", stage},
                           {"worker_output", kept_output_}};
  if (verdict == check::Verdict::crash && WIFSIGNALED(status)) record["worker_signal"] = WTERMSIG(status);  // not kbench's kill
  return record;
}

bool killed_from_outside(const nlohmann::json& record) {
  const int signal = record.value("worker_signal", 0);
  return record.value("verdict", "") == "crash" && (signal == SIGKILL || signal == SIGTERM);
}

nlohmann::json Worker::evaluate(const EvalRequest& request, const Budgets& budgets) {
  auto record = evaluate_once(request, budgets);
  if (!killed_from_outside(record)) return record;
  const nlohmann::json first = {{"message", record["message"]}, {"stage", record["stage"]}};
  log::warn("evaluating " + request.submission + " again on a fresh worker: " + record["message"].get<std::string>() +
            ", a signal kbench did not send");
  record = evaluate_once(request, budgets);
  record["retried"] = first;
  if (killed_from_outside(record)) record["message"] = record["message"].get<std::string>() + ", on a fresh worker as on the first";
  return record;
}

// One request on this worker, watched to its end: the budget of each stage, the host memory every 50
// ms, the reply token on every line. Longer than 60 lines on purpose: the watch loop and what it
// leaves behind (a record, or a failure and a killed worker) are one protocol, read top to bottom.
nlohmann::json Worker::evaluate_once(const EvalRequest& request, const Budgets& budgets) {
  start();
  // A ModelNew spare still starting its Python reads the request once that is done.
  const bool prestarted = python_asked_, waits_for_python = prestarted && !python_ready();
  kept_output_.clear();
  std::string stage = "compile";
  auto stage_start = Clock::now();
  const auto written = stage_start;
  Failure failure;
  // Every line the worker writes for this request carries the request's token. Submission code can
  // write to the worker's result pipe (a ModelNew's `os.write` has no audit event), but it cannot
  // read the token, which only kbench's C++ holds: a line without it is the submission's.
  const auto token = reply_token();
  auto sent = request.to_json();
  sent["reply_token"] = token;
  // Measured before the worker reads the request: what it holds idle (next to nothing for a worker
  // started for this request, whose start-up then counts against the headroom).
  const auto host_memory = host_memory_budget(request, budgets, resident_gib(pid_));
  double peak_gib = host_memory.start_gib;
  // A worker that died before reading the request still said what it reached: read to its end.
  write_line(to_worker_, sent);
  bool worker_gone = false;
  nlohmann::json record;
  while (!worker_gone && record.is_null() && failure.foreign_line.empty()) {
    const double left = budget_for(stage, budgets) - std::chrono::duration<double>(Clock::now() - stage_start).count();
    if (left <= 0) {
      failure.timed_out = true;
      break;
    }
    // Checked every 50 ms: host memory can grow by gigabytes a second.
    const double gib = resident_gib(pid_);
    peak_gib = std::max(peak_gib, gib);
    if (gib > host_memory.budget_gib) {
      failure.resident_gib = gib;
      break;
    }
    for (const auto& msg : read_messages(static_cast<int>(std::min(left, 0.05) * 1000) + 1, worker_gone)) {
      if (!msg.is_object() || msg.value("token", "") != token) {
        // A spare's Python start may answer after the request was sent, before any submission code ran.
        if (msg.is_object() && msg.contains("python_started") && !msg.contains("token")) continue;
        failure.foreign_line = (msg.is_object() && msg.contains("unreadable") ? msg["unreadable"].get<std::string>()
                                                                               : msg.dump()).substr(0, 300);
        break;
      }
      if (msg.contains("stage")) {
        stage = msg["stage"];
        stage_start = Clock::now();
      } else if (msg.contains("record")) {
        record = msg["record"];
      }
    }
  }
  if (kept_output_.size() > kKeptOutput) kept_output_.erase(0, kept_output_.size() - kKeptOutput);

  if (record.is_null()) {
    if (failure.timed_out || failure.resident_gib > 0 || !failure.foreign_line.empty()) ::kill(-pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    auto failed = finish_failed(request, status, failure, stage, budgets, host_memory);
    failed["host_memory"] = to_json(host_memory, peak_gib);
    stop();
    return failed;
  }
  ++served_;
  record["host_memory"] = to_json(host_memory, peak_gib);
  record["worker_output"] = kept_output_;
  record["worker_evaluations"] = served_;
  if (gpu_asked_) record["worker"]["gpu_prepare_wait_ms"] = gpu_prepare_wait_ms_;
  if (prestarted) {
    // Each step of the spare's life, in ms before the request was written (negative: after it).
    const auto before = [written](Clock::time_point t) { return std::chrono::duration<double, std::milli>(written - t).count(); };
    record["worker"]["python_prestart_wait_ms"] = waits_for_python ? std::max(0.0, -before(python_answered_at_)) : python_wait_ms_;
    auto& timeline = record["worker"]["spare_timeline_ms"];
    timeline = {{"started", before(started_at_)}, {"python_started", before(python_answered_at_)}};
    if (gpu_asked_) timeline["gpu_asked"] = before(gpu_asked_at_), timeline["gpu_prepared"] = before(gpu_answered_at_);
  }
  if (compile::is_modelnew_file(request.submission)) {
    // Its process held only what its problem needs (check::cap_memory_hold): its end is the
    // caller's (a runner ends it beside the next request, `kbench eval` abandons it, the ncu pass lets
    // ncu finish), and the next request here starts a fresh one.
    spent_ = true;
  } else if (leaves_worker_damaged(request, record)) {
    // Its end (the driver frees its context and all the memory it held) is part of this request's wall.
    const auto retiring = Clock::now();
    stop();
    record["worker"]["retired_ms"] = std::chrono::duration<double, std::milli>(Clock::now() - retiring).count();
  }
  return record;
}

nlohmann::json evaluate_isolated(const EvalRequest& request, const Budgets& budgets, const std::string& worker_exe) {
  // A single evaluation's wall time beyond the worker's own phases: the process's start-up (libtorch
  // loads before main) until the worker takes the request.
  const double before_worker = ms_since_process_start();
  Worker worker(worker_exe);
  worker.start();  // before the GPU's lock: a forked worker must not hold it too
  nlohmann::json record;
  {
    const compile::FileLock gpu(gpu_lock_path(request.device));
    record = worker.evaluate(request, budgets);
    if (request.ncu) {
      worker.finish(10);  // its GPU memory must be free for the worker under ncu
      add_ncu_figures(record, request, budgets, worker_exe);
    }
  }
  if (!request.ncu) worker.abandon();
  if (record.contains("phases_ms")) record["phases_ms"]["process"] = {{"before_worker", before_worker}};
  return record;
}

namespace {

// The next request line on stdin, read through a buffer of the worker's own: Python's start makes
// C's stdin unbuffered (its unbuffered stdio), which drops what stdio had read ahead, and a request
// sent while a ModelNew spare starts its Python would be lost with it. False at the end of input.
bool next_request_line(std::string& buffer, std::string& line) {
  size_t nl;
  while ((nl = buffer.find('\n')) == std::string::npos) {
    char chunk[65536];
    const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(n));
  }
  line = buffer.substr(0, nl);
  buffer.erase(0, nl + 1);
  return true;
}

// For the answers a spare gives ahead of its request: steady_clock is CLOCK_MONOTONIC, one clock for
// every process of the machine, so the runner places them on its own timeline.
int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

}  // namespace

int run_worker(int fd) {
  EvalContext context;
  std::string input;
  for (std::string line; next_request_line(input, line);) {
    if (line.empty()) continue;
    // The requests that are not evaluations (sandbox/gpu_runner.h): a ModelNew spare's Python start
    // and its GPU prepared, and the GPU memory given back while a ModelNew is evaluated beside this
    // worker.
    const auto message = nlohmann::json::parse(line, nullptr, false);
    if (message.contains("start_python")) {
      write_line(fd, {{"python_started", start_python_ahead(context)}, {"at_ns", steady_now_ns()}});
      continue;
    }
    if (message.contains("prepare_gpu_ahead")) {
      nlohmann::json answer;
      try {
        answer = prepare_gpu_ahead(EvalRequest::from_json(message["prepare_gpu_ahead"]),
                                   message.value("spares_lock", ""), context);
      } catch (const std::exception& e) {
        answer = {{"error", e.what()}};
      }
      write_line(fd, {{"gpu_prepared", answer}, {"at_ns", steady_now_ns()}});
      continue;
    }
    if (message.contains("give_back_gpu_memory")) {
      nlohmann::json answer;
      try {
        answer = give_back_gpu_memory(context);
      } catch (const std::exception& e) {
        answer = {{"error", e.what()}};
      }
      write_line(fd, {{"gave_back_gpu_memory", answer}});
      continue;
    }
    const std::string token = message.is_object() ? message.value("reply_token", "") : "";
    write_line(fd, {{"stage", "compile"}, {"token", token}});
    nlohmann::json record;
    try {
      const auto request = EvalRequest::from_json(nlohmann::json::parse(line));  // its parse error reported
      record = evaluate(
          request, [fd, token](const std::string& stage) { write_line(fd, {{"stage", stage}, {"token", token}}); },
          &context);
    } catch (const std::exception& e) {
      // Errors of the request itself (unknown problem, missing archive): reported, not a verdict.
      record = {{"error", e.what()}};
    }
    std::cout.flush();
    std::cerr.flush();
    write_line(fd, {{"record", record}, {"token", token}});
  }
  // Skip static destructors: after a sticky CUDA error, CUDA teardown can hang or abort.
  _exit(0);
}

}  // namespace kbench::sandbox
