#include "compile/child_process.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdexcept>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace kbench::compile {
namespace {

// Owns the two ends of a pipe.
struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  }
  ~Pipe() {
    close_end(0);
    close_end(1);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void close_end(int i) {
    if (fds[i] >= 0) ::close(fds[i]), fds[i] = -1;
  }
};

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

bool ChildResult::exited_cleanly() const { return !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0; }

ChildResult run_child(const std::string& executable, const std::vector<std::string>& arguments,
                      const ChildOptions& options) {
  ::signal(SIGPIPE, SIG_IGN);  // a child that stops reading its input must not kill this process
  Pipe input, output;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input.fds[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output.fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output.fds[1], STDERR_FILENO);
  if (!options.working_directory.empty())
    posix_spawn_file_actions_addchdir_np(&actions, options.working_directory.c_str());
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (options.own_process_group) {
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
  }
  std::vector<std::string> argv = {executable};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  auto argv_c = c_strings(argv);
  auto env_c = c_strings(options.environment);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, executable.c_str(), &actions, &attributes, argv_c.data(), env_c.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) throw std::runtime_error("cannot start " + executable + ": " + std::strerror(spawned));
  input.close_end(0);
  output.close_end(1);

  ChildResult result;
  const auto start = std::chrono::steady_clock::now();
  size_t written = 0, line_start = 0;  // line_start: where the output's unfinished line begins
  if (options.input.empty()) input.close_end(1);
  for (bool open = true; open;) {
    pollfd fds[2] = {{output.fds[0], POLLIN, 0}, {input.fds[1], POLLOUT, 0}};
    const int count = input.fds[1] >= 0 ? 2 : 1;
    ::poll(fds, count, 100);
    if (fds[0].revents) {
      char buffer[65536];
      const ssize_t n = ::read(output.fds[0], buffer, sizeof buffer);
      if (n > 0) {
        result.output.append(buffer, static_cast<size_t>(n));
        if (options.on_line)
          for (size_t nl; (nl = result.output.find('\n', line_start)) != std::string::npos; line_start = nl + 1)
            options.on_line(result.output.substr(line_start, nl - line_start));
      } else if (n == 0 || errno != EINTR) {
        open = false;
      }
    }
    if (count == 2 && fds[1].revents) {
      const ssize_t n = ::write(input.fds[1], options.input.data() + written, options.input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 || written == options.input.size()) input.close_end(1);  // EPIPE: the child stopped reading
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (options.timeout_s > 0 && elapsed > options.timeout_s) {
      ::kill(options.own_process_group ? -pid : pid, SIGKILL);
      result.timed_out = true;
      open = false;
    }
  }
  struct rusage usage {};
  ::wait4(pid, &result.status, 0, &usage);
  result.cpu_seconds = cpu_seconds(usage);
  return result;
}

double cpu_seconds(const struct rusage& usage) {
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

bool wait_for_end(int pid, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
#ifdef SYS_pidfd_open
  // A pidfd turns readable when its process ends, whoever its parent is (Linux 5.3 on).
  if (const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); fd >= 0) {
    pollfd ended = {fd, POLLIN, 0};
    int ready;
    do ready = ::poll(&ended, 1, static_cast<int>(timeout_s * 1000));
    while (ready < 0 && errno == EINTR);
    ::close(fd);
    return ready > 0;
  }
  if (errno == ESRCH) return true;
#endif
  // Older kernels: polled until the process is gone (its parent reaps it as it ends).
  while (std::chrono::steady_clock::now() < deadline) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    ::usleep(2000);
  }
  return false;
}

std::vector<std::string> current_environment() {
  std::vector<std::string> out;
  for (char** entry = environ; entry && *entry; ++entry) out.emplace_back(*entry);
  return out;
}

std::string this_executable() {
  char buffer[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) throw std::runtime_error("cannot find this executable (/proc/self/exe)");
  return std::string(buffer, static_cast<size_t>(n));
}

}  // namespace kbench::compile
