#include "compile/build_pass_forks.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "compile/python_runtime.h"

namespace kbench::compile {
namespace {

constexpr int kServerSocketFd = 3;         // where `kbench __build-pass-server` finds its socket
constexpr size_t kLargestRequest = 1 << 20;  // a request (arguments and environment) at most

// A socket message over `size` bytes at `bytes`, with room for one descriptor.
struct FdMessage {
  iovec data;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
  FdMessage(void* bytes, size_t size) : data{bytes, size} {
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
  }
  FdMessage(const FdMessage&) = delete;
  FdMessage& operator=(const FdMessage&) = delete;
};

// Sends `text` and the descriptor `fd` in one message.
bool send_with_fd(int socket, const std::string& text, int fd) {
  FdMessage sending(const_cast<char*>(text.data()), text.size());
  msghdr& message = sending.message;
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(header), &fd, sizeof(int));
  ssize_t sent;
  while ((sent = ::sendmsg(socket, &message, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  return sent == static_cast<ssize_t>(text.size());
}

// The next message and its descriptor (-1 where it carried none). 0: the socket was closed; < 0: an
// error; else the message's length, with `truncated` set when it did not fit.
ssize_t receive_with_fd(int socket, std::vector<char>& buffer, int& fd, bool& truncated) {
  FdMessage receiving(buffer.data(), buffer.size());
  msghdr& message = receiving.message;
  const ssize_t n = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
  fd = -1;
  for (cmsghdr* h = CMSG_FIRSTHDR(&message); n > 0 && h; h = CMSG_NXTHDR(&message, h))
    if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) std::memcpy(&fd, CMSG_DATA(h), sizeof(int));
  truncated = (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
  return n;
}

void write_reply(int fd, const nlohmann::json& reply) {
  const auto line = reply.dump() + "\n";
  // A caller that gave up (its pipe closed) gets nothing: the pass is reaped all the same.
  ssize_t ignored = ::write(fd, line.data(), line.size());
  (void)ignored;
}

// One pass in this fork of the server: its process group, its environment, its output to a file.
[[noreturn]] void pass_in_this_fork(const nlohmann::json& request,
                                    const std::function<int(const std::vector<std::string>&)>& run_pass) {
  ::setpgid(0, 0);  // a timeout kills the pass with the compilers it started
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  int code = 127;
  try {
    python::replace_environment(request.at("environment").get<std::vector<std::string>>());
    const int output = ::open(request.at("output").get<std::string>().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (output < 0) _exit(127);
    ::dup2(output, STDOUT_FILENO);
    ::dup2(output, STDERR_FILENO);
    ::close(output);
    code = run_pass(request.at("arguments").get<std::vector<std::string>>());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kbench: the build pass could not run: %s\n", e.what());
  }
  std::fflush(nullptr);
  _exit(code);  // no teardown: as `kbench __prebuild-modelnew` ends
}

}  // namespace

BuildPassForks::BuildPassForks(const std::string& executable, const std::vector<std::string>& environment) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return;
  // Made before fork: a threaded parent's child may only make async-signal-safe calls.
  std::vector<std::string> arguments = {executable, "__build-pass-server"};
  std::vector<char*> argv, envp;
  for (auto& a : arguments) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (const auto& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the server never outlives its parent
    if (::getppid() != parent) _exit(1);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // a serve thread's blocked signals must not pass on
    if (pair[1] == kServerSocketFd) ::fcntl(kServerSocketFd, F_SETFD, 0);
    else ::dup2(pair[1], kServerSocketFd);
    const int null = ::open("/dev/null", O_RDWR);
    for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) ::dup2(null, fd);
    ::close_range(kServerSocketFd + 1, ~0U, 0);
    ::execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  ::close(pair[1]);
  if (pid_ < 0) {
    ::close(pair[0]);
    return;
  }
  socket_ = pair[0];
}

BuildPassForks::~BuildPassForks() {
  if (socket_ >= 0) ::close(socket_);  // the server waits for its passes, then ends
  if (pid_ > 0) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

std::optional<ChildResult> BuildPassForks::run(const std::vector<std::string>& arguments,
                                               const std::vector<std::string>& environment, double timeout_s) {
  static std::atomic<int> passes{0};
  const auto output = std::filesystem::temp_directory_path() /
                      ("kbench-build-pass-" + std::to_string(::getpid()) + "-" + std::to_string(passes++) + ".output");
  std::string request;
  try {
    request = nlohmann::json{{"arguments", arguments}, {"environment", environment}, {"output", output.string()}}.dump();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // an entry that is not UTF-8: a fresh process takes it as it is
  }
  if (request.size() > kLargestRequest) return std::nullopt;
  int reply[2];
  if (::pipe2(reply, O_CLOEXEC) != 0) return std::nullopt;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (socket_ < 0 || !send_with_fd(socket_, request, reply[1])) {
      if (socket_ >= 0) ::close(socket_), socket_ = -1;  // gone: fresh processes from now on
      ::close(reply[0]), ::close(reply[1]);
      return std::nullopt;
    }
  }
  ::close(reply[1]);

  // The server answers {"pid"} once the pass has started, then {"status", "cpu_seconds"} once it has
  // ended; a pass that outlives its time is killed, and its end reported all the same.
  const auto start = std::chrono::steady_clock::now();
  pid_t pass = -1;
  nlohmann::json ended;
  ChildResult result;
  std::string pending;
  char chunk[512];
  while (ended.is_null()) {
    int wait_ms = -1;
    if (timeout_s > 0 && !result.timed_out) {
      const double left = timeout_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      wait_ms = left > 0 ? static_cast<int>(left * 1000) + 1 : 0;
    }
    pollfd readable{reply[0], POLLIN, 0};
    const int ready = ::poll(&readable, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {  // out of time
      result.timed_out = true;
      if (pass > 0) ::kill(-pass, SIGKILL);
      else break;  // not started yet: nothing to wait for
      continue;
    }
    const ssize_t n = ::read(reply[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the server has gone
    pending.append(chunk, static_cast<size_t>(n));
    for (size_t end; ended.is_null() && (end = pending.find('\n')) != std::string::npos;) {
      const auto line = nlohmann::json::parse(pending.substr(0, end), nullptr, /*allow_exceptions=*/false);
      pending.erase(0, end + 1);
      if (line.is_object() && line.contains("pid")) pass = line["pid"].get<pid_t>();
      else if (line.is_object()) ended = line;
    }
  }
  ::close(reply[0]);
  std::error_code ignored;
  if (pass <= 0 && !result.timed_out) {  // no pass started: a fresh process runs it
    std::filesystem::remove(output, ignored);
    if (ended.is_null()) {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (socket_ >= 0) ::close(socket_), socket_ = -1;
    }
    return std::nullopt;
  }
  if (pass <= 0) {
    std::filesystem::remove(output, ignored);
    result.output = "the build pass had not started when its time ran out";
    return result;
  }
  if (ended.contains("status")) {
    result.status = ended["status"];
    result.cpu_seconds = ended.value("cpu_seconds", 0.0);
  }
  std::ifstream captured(output);
  result.output.assign(std::istreambuf_iterator<char>(captured), {});
  std::filesystem::remove(output, ignored);
  if (!ended.contains("status")) result.output += "\nthe process that forked this build pass ended before the pass did";
  return result;
}

int serve_build_passes(int socket, const std::function<int(const std::vector<std::string>&)>& run_pass) {
  std::map<pid_t, int> replies;  // each pass running, by pid: where its end is reported
  std::vector<char> buffer(kLargestRequest);
  bool open = true;
  const auto report_end = [&](pid_t pid, int status, const rusage& usage) {
    const auto it = replies.find(pid);
    if (it == replies.end()) return;  // a child of Python's own
    write_reply(it->second, {{"status", status}, {"cpu_seconds", cpu_seconds(usage)}});
    ::close(it->second);
    replies.erase(it);
  };
  for (;;) {
    int status = 0;
    rusage usage{};
    for (pid_t pid; (pid = ::wait4(-1, &status, WNOHANG, &usage)) > 0;) report_end(pid, status, usage);
    if (!open) {
      if (replies.empty()) return 0;
      const pid_t pid = ::wait4(-1, &status, 0, &usage);
      if (pid > 0) report_end(pid, status, usage);
      else if (errno == ECHILD) return 0;
      continue;
    }
    // Passes are reaped every 50 ms while they run: their ends wait that long at most.
    pollfd readable{socket, POLLIN, 0};
    if (::poll(&readable, 1, replies.empty() ? -1 : 50) <= 0) continue;
    int reply = -1;
    bool truncated = false;
    const ssize_t n = receive_with_fd(socket, buffer, reply, truncated);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      open = false;
      continue;
    }
    if (reply < 0) continue;  // nowhere to answer
    const auto request = truncated ? nlohmann::json() : nlohmann::json::parse(buffer.data(), buffer.data() + n, nullptr, false);
    if (!request.is_object()) {
      write_reply(reply, {{"error", "a malformed request"}});
      ::close(reply);
      continue;
    }
    const pid_t pid = python::fork();
    if (pid == 0) {
      ::close(socket);
      for (const auto& [running, fd] : replies) ::close(fd);
      ::close(reply);
      pass_in_this_fork(request, run_pass);
    }
    if (pid < 0) {
      write_reply(reply, {{"error", std::string("fork: ") + std::strerror(errno)}});
      ::close(reply);
      continue;
    }
    write_reply(reply, {{"pid", pid}});
    replies[pid] = reply;
  }
}

}  // namespace kbench::compile
