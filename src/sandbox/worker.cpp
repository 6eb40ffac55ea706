#include "sandbox/worker.h"

#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check/verdict.h"

namespace kbench::sandbox {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kKeptOutput = 16 * 1024;  // the tail of the worker's stdout/stderr kept for the record
constexpr int kResultFd = 3;

void write_line(int fd, const nlohmann::json& j) {
  const std::string line = j.dump() + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// Owns a pipe's two ends; each closed exactly once.
struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  }
  ~Pipe() { close_both(); }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
  void close_both() { close_end(0); close_end(1); }
};

nlohmann::json failure_record(const EvalRequest& req, check::Verdict v, const std::string& message,
                              const std::string& stage, const std::string& output) {
  return {{"problem", {{"level", req.level}, {"id", req.problem}}},
          {"submission", {{"path", req.submission}}},
          {"verdict", check::to_string(v)},
          {"message", message},
          {"stage", stage},
          {"worker_output", output}};
}

double budget_for(const std::string& stage, const Budgets& b) {
  if (stage == "correctness") return b.correctness_s;
  if (stage == "timing") return b.timing_s;
  return b.compile_s;
}

}  // namespace

nlohmann::json evaluate_isolated(const EvalRequest& request, const Budgets& budgets, const std::string& worker_exe) {
  Pipe input, results, output;
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // Child: stdin = request, fd 3 = results, stdout+stderr = captured output. Own process group so
    // the parent can kill everything it starts.
    ::setpgid(0, 0);
    ::dup2(input.fd[0], STDIN_FILENO);
    ::dup2(results.fd[1], kResultFd);
    ::dup2(output.fd[1], STDOUT_FILENO);
    ::dup2(output.fd[1], STDERR_FILENO);
    ::execl(worker_exe.c_str(), worker_exe.c_str(), "__worker", static_cast<char*>(nullptr));
    _exit(127);
  }
  input.close_end(0);
  results.close_end(1);
  output.close_end(1);
  const std::string payload = request.to_json().dump();
  write_line(input.fd[1], nlohmann::json::parse(payload));
  input.close_end(1);

  std::string stage = "compile", result_buffer, kept_output;
  nlohmann::json record;
  auto stage_start = Clock::now();
  bool timed_out = false;
  bool results_open = true, output_open = true;
  while (results_open || output_open) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - stage_start).count();
    const double left = budget_for(stage, budgets) - elapsed;
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2] = {{results_open ? results.fd[0] : -1, POLLIN, 0}, {output_open ? output.fd[0] : -1, POLLIN, 0}};
    ::poll(fds, 2, static_cast<int>(std::min(left, 1.0) * 1000) + 1);
    char buf[65536];
    if (fds[0].revents) {
      const ssize_t n = ::read(results.fd[0], buf, sizeof buf);
      if (n <= 0) results_open = false;
      else result_buffer.append(buf, static_cast<size_t>(n));
      for (size_t nl; (nl = result_buffer.find('\n')) != std::string::npos; result_buffer.erase(0, nl + 1)) {
        const auto msg = nlohmann::json::parse(result_buffer.substr(0, nl), nullptr, false);
        if (msg.is_discarded()) continue;
        if (msg.contains("stage")) {
          stage = msg["stage"];
          stage_start = Clock::now();
        } else if (msg.contains("record")) {
          record = msg["record"];
        }
      }
    }
    if (fds[1].revents) {
      const ssize_t n = ::read(output.fd[0], buf, sizeof buf);
      if (n <= 0) output_open = false;
      else {
        kept_output.append(buf, static_cast<size_t>(n));  // a flood is drained, only its tail is kept
        if (kept_output.size() > 2 * kKeptOutput) kept_output.erase(0, kept_output.size() - kKeptOutput);
      }
    }
  }
  if (timed_out) ::kill(-pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (kept_output.size() > kKeptOutput) kept_output.erase(0, kept_output.size() - kKeptOutput);

  if (timed_out)
    return failure_record(request, check::Verdict::timeout,
                          "killed after " + std::to_string(static_cast<int>(budget_for(stage, budgets))) +
                              " s in stage '" + stage + "'",
                          stage, kept_output);
  if (!record.is_null()) {
    if (WIFSIGNALED(status) && !record.contains("verdict"))
      return failure_record(request, check::Verdict::crash, "worker died", stage, kept_output);
    record["worker_output"] = kept_output;
    return record;
  }
  if (WIFSIGNALED(status))
    return failure_record(request, check::Verdict::crash,
                          std::string("worker killed by signal ") + ::strsignal(WTERMSIG(status)) + " in stage '" +
                              stage + "'",
                          stage, kept_output);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return failure_record(request, check::Verdict::crash,
                        "worker exited with code " + std::to_string(code) + " in stage '" + stage +
                            "' without a result",
                        stage, kept_output);
}

int run_worker(int fd) {
  std::string line;
  std::getline(std::cin, line);
  const auto request = EvalRequest::from_json(nlohmann::json::parse(line));
  write_line(fd, {{"stage", "compile"}});
  nlohmann::json record;
  try {
    record = evaluate(request, [fd](const std::string& stage) { write_line(fd, {{"stage", stage}}); });
  } catch (const std::exception& e) {
    // Errors of the request itself (unknown problem, missing archive): reported, not a verdict.
    record = {{"error", e.what()}};
  }
  write_line(fd, {{"record", record}});
  // Skip static destructors: after a sticky CUDA error, CUDA teardown can hang or abort.
  std::cout.flush();
  _exit(0);
}

}  // namespace kbench::sandbox
